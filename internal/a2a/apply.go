package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
)

// TransitionError reports a status change the state machine forbids.
type TransitionError struct {
	From, To TaskState
}

func (e *TransitionError) Error() string {
	if e.From.Terminal() {
		return fmt.Sprintf("task is %s, a terminal state, and cannot change to %s", e.From, e.To)
	}
	return fmt.Sprintf("illegal task state transition %s -> %s", e.From, e.To)
}

// Apply applies ev to t in place, enforcing the state machine. It returns a
// *TransitionError for a forbidden status change and an *Error for an event
// that does not fit the task.
func Apply(t *Task, ev Event) error {
	if ev.TaskID != t.ID {
		return InvalidParams("event for task %q applied to task %q", ev.TaskID, t.ID)
	}
	if ev.ContextID != "" && ev.ContextID != t.ContextID {
		return InvalidParams("event contextId %q does not match the task's %q", ev.ContextID, t.ContextID)
	}
	switch ev.Kind {
	case EventStatus:
		if ev.Status == nil {
			return InvalidParams("status-update without status")
		}
		if !CanTransition(t.Status.State, ev.Status.State) {
			return &TransitionError{From: t.Status.State, To: ev.Status.State}
		}
		t.Status = *ev.Status
	case EventArtifact:
		if t.Status.State.Terminal() {
			return &TransitionError{From: t.Status.State, To: t.Status.State}
		}
		if ev.Artifact == nil || ev.Artifact.ArtifactID == "" {
			return InvalidParams("artifact-update needs an artifact with an artifactId")
		}
		applyArtifact(t, *ev.Artifact, ev.Append)
	case EventMessage:
		if ev.Message == nil {
			return InvalidParams("message event without message")
		}
		if t.Status.State.Terminal() {
			return &TransitionError{From: t.Status.State, To: t.Status.State}
		}
		t.History = append(t.History, *ev.Message)
	default:
		return InvalidParams("event kind %q cannot be applied to an existing task", ev.Kind)
	}
	return nil
}

// applyArtifact adds a, or with appendParts extends the artifact of the same id.
func applyArtifact(t *Task, a Artifact, appendParts bool) {
	for i := range t.Artifacts {
		if t.Artifacts[i].ArtifactID != a.ArtifactID {
			continue
		}
		if appendParts {
			t.Artifacts[i].Parts = append(t.Artifacts[i].Parts, a.Parts...)
			return
		}
		t.Artifacts[i] = a
		return
	}
	t.Artifacts = append(t.Artifacts, a)
}

// ErrNoOrigin: a fold was asked of events that neither start at a task's
// creation nor come with a base to apply them to.
var ErrNoOrigin = errors.New("a2a: no creation event or base to fold events onto")

// Fold returns the task as the events made it: base (nil: the first event
// must be the task's creation) with every event applied in order. It is
// how a stored task version is recomputed from its event stream.
func Fold(base *Task, events []Event) (Task, error) {
	var t Task
	have := base != nil
	if have {
		t = *base
	}
	for _, ev := range events {
		if ev.Kind == EventTask && ev.Task != nil {
			t, have = *ev.Task, true
			continue
		}
		if !have {
			return Task{}, ErrNoOrigin
		}
		if err := Apply(&t, ev); err != nil {
			return Task{}, err
		}
	}
	if !have {
		return Task{}, ErrNoOrigin
	}
	return t, nil
}

// FoldStored is Fold over stored JSON: a base task (nil: none) and events,
// as the commit path encodes them.
func FoldStored(base []byte, events [][]byte) (Task, error) {
	var b *Task
	if base != nil {
		b = new(Task)
		if err := json.Unmarshal(base, b); err != nil {
			return Task{}, fmt.Errorf("a2a: decode stored task: %w", err)
		}
	}
	evs := make([]Event, len(events))
	for i, e := range events {
		if err := json.Unmarshal(e, &evs[i]); err != nil {
			return Task{}, fmt.Errorf("a2a: decode stored event: %w", err)
		}
	}
	return Fold(b, evs)
}

// WithHistory returns t with its history cut to the last n messages
// (n == nil: all; n == 0: none). t itself is not changed.
func WithHistory(t Task, n *int) Task {
	if n == nil || *n < 0 || len(t.History) <= *n {
		return t
	}
	if *n == 0 {
		t.History = nil
		return t
	}
	t.History = t.History[len(t.History)-*n:]
	return t
}
