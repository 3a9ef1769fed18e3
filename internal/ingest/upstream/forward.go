package upstream

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
)

// partSum identifies the content of one part.
type partSum [sha256.Size]byte

// forwarded is what our task holds of the agent's: its state and, per
// artifact, the sums of its parts. It starts from our task as claimed, so
// a turn that re-attaches (here or on another instance) forwards only what
// is missing, and polling never repeats an artifact.
type forwarded struct {
	state a2a.TaskState
	arts  map[string][]partSum
}

func newForwarded(task a2a.Task) forwarded {
	f := forwarded{state: task.Status.State, arts: map[string][]partSum{}}
	for _, a := range task.Artifacts {
		f.track(a2a.Event{Kind: a2a.EventArtifact, Artifact: &a})
	}
	return f
}

func sumParts(parts []a2a.Part) []partSum {
	out := make([]partSum, len(parts))
	for i, p := range parts {
		b, _ := json.Marshal(p) // a Part of valid JSON always marshals
		out[i] = sha256.Sum256(b)
	}
	return out
}

// track notes an artifact event that was committed.
func (f *forwarded) track(ev a2a.Event) {
	if ev.Kind != a2a.EventArtifact || ev.Artifact == nil {
		return
	}
	sums := sumParts(ev.Artifact.Parts)
	if ev.Append {
		sums = append(f.arts[ev.Artifact.ArtifactID], sums...)
	}
	f.arts[ev.Artifact.ArtifactID] = sums
}

// artifactDiff returns the event that brings our copy of artifact a up to
// date: nothing when it is, the new parts (append) when ours is a prefix
// of it, else the whole artifact.
func (f *forwarded) artifactDiff(taskID string, a a2a.Artifact, last bool) (a2a.Event, bool) {
	sums := sumParts(a.Parts)
	ev := a2a.Event{Kind: a2a.EventArtifact, TaskID: taskID, LastChunk: last}
	if have, ok := f.arts[a.ArtifactID]; ok && len(sums) >= len(have) && slices.Equal(sums[:len(have)], have) {
		if len(sums) == len(have) {
			return a2a.Event{}, false
		}
		a.Parts = a.Parts[len(have):]
		ev.Append = true
	}
	ev.Artifact = &a
	return ev, true
}

// onEvent forwards one event of the agent's stream.
func (t *turn) onEvent(ev a2a.Event) error {
	switch ev.Kind {
	case a2a.EventTask:
		return t.onTask(*ev.Task)
	case a2a.EventMessage:
		return t.onMessage(*ev.Message)
	}
	if !t.learn(ev.TaskID, ev.ContextID) {
		return nil
	}
	if ev.Kind == a2a.EventStatus {
		if ev.Status.State == a2a.StateSubmitted || t.stale(*ev.Status) {
			return nil // our task is submitted already; or not news
		}
		return t.postStatus(*ev.Status, ev.Metadata, nil)
	}
	a := *ev.Artifact
	return t.post(a2a.Event{Kind: a2a.EventArtifact, TaskID: t.taskID, Artifact: &a,
		Append: ev.Append, LastChunk: ev.LastChunk, Metadata: ev.Metadata})
}

// onTask forwards the agent's task as a whole (a stream's first event, a
// poll, a send's result): the artifacts our task lacks, then its status
// when the state changed.
func (t *turn) onTask(task a2a.Task) error {
	if !t.learn(task.ID, task.ContextID) {
		return nil
	}
	st := task.Status.State
	var evs []a2a.Event
	for _, a := range task.Artifacts {
		if ev, ok := t.fwd.artifactDiff(t.taskID, a, st.Terminal() || st.Interrupted()); ok {
			evs = append(evs, ev)
		}
	}
	if st == t.fwd.state || st == a2a.StateSubmitted || t.stale(task.Status) {
		return t.post(evs...)
	}
	return t.postStatus(task.Status, nil, evs)
}

// postStatus posts events, then the agent's status st translated. When
// our task stops for the client on it, the link remembers st.
func (t *turn) postStatus(st a2a.TaskStatus, md json.RawMessage, events []a2a.Event) error {
	if err := t.post(append(events, t.statusEvents(st, md)...)...); err != nil || !t.done || !st.State.Interrupted() {
		return err
	}
	l := t.link
	l.Waiting, l.Queue, l.Life = waitMark(st), t.b.cfg.Queue, t.life
	if err := t.b.links.Put(t.ctx, t.taskID, l); err != nil {
		t.log.WarnContext(t.ctx, "storing the link to the upstream task", "err", err)
		return nil
	}
	t.link = l
	return nil
}

// stale reports whether st is the agent's status at which our task last
// stopped for the client: seen again in a later turn, before the agent
// took the client's answer in, it is not news.
func (t *turn) stale(st a2a.TaskStatus) bool {
	return st.State.Interrupted() && t.link.Waiting != "" && waitMark(st) == t.link.Waiting
}

// waitMark identifies an interrupted status of the agent; "" when nothing
// tells it apart from the next one (no message id, no timestamp).
func waitMark(st a2a.TaskStatus) string {
	id := ""
	if st.Message != nil {
		id = st.Message.MessageID
	}
	if !st.State.Interrupted() || (id == "" && st.Timestamp == "") {
		return ""
	}
	return string(st.State) + "|" + id + "|" + st.Timestamp
}

// onMessage forwards a message of the agent: a reply without a task
// completes our task; a message about the task is a status update.
func (t *turn) onMessage(m a2a.Message) error {
	state := a2a.StateCompleted
	if t.up != "" {
		state = t.fwd.state
		if state == a2a.StateSubmitted {
			state = a2a.StateWorking
		}
	}
	m.Role = cmp.Or(m.Role, a2a.RoleAgent)
	return t.post(t.statusEvents(a2a.TaskStatus{State: state, Message: &m}, nil)...)
}

// statusEvents translates an agent's status to ours, preceded by a
// working status when our task is submitted and may not move to the
// state at once (submitted -> completed is not a legal move).
func (t *turn) statusEvents(st a2a.TaskStatus, md json.RawMessage) []a2a.Event {
	st.Timestamp = "" // the commit stamps it, in our format
	if st.Message != nil {
		m := *st.Message
		m.TaskID, m.ContextID = t.taskID, t.ctxID
		st.Message = &m
	}
	var out []a2a.Event
	if !a2a.CanTransition(t.fwd.state, st.State) && a2a.CanTransition(a2a.StateWorking, st.State) && t.fwd.state == a2a.StateSubmitted {
		out = append(out, a2a.Event{Kind: a2a.EventStatus, TaskID: t.taskID, Status: &a2a.TaskStatus{State: a2a.StateWorking}})
	}
	return append(out, a2a.Event{Kind: a2a.EventStatus, TaskID: t.taskID, Status: &st, Metadata: md})
}

// learn notes the agent's task id from an event, storing the link as soon
// as it is known. It reports false for an event of another task.
func (t *turn) learn(id, contextID string) bool {
	switch {
	case t.up == "":
		t.up = id
	case id != t.up:
		t.log.WarnContext(t.ctx, "ignoring an event of another upstream task", "upstream_task_id", t.up, "other_task_id", id)
		return false
	}
	l := Link{UpstreamTaskID: id, ContextID: cmp.Or(contextID, t.link.ContextID), LastMessageID: t.msg.MessageID,
		Waiting: t.link.Waiting, Queue: t.b.cfg.Queue, Life: t.life}
	if t.linked && l == t.link {
		return true
	}
	if err := t.b.links.Put(t.ctx, t.taskID, l); err != nil {
		// The turn goes on; only a re-attach after a restart needs the link.
		t.log.WarnContext(t.ctx, "storing the link to the upstream task", "upstream_task_id", id, "err", err)
		return true
	}
	t.link, t.linked = l, true
	return true
}

// post commits events on our task under the turn's lease, retried through
// a Redis outage up to the Outage's bound.
func (t *turn) post(evs ...a2a.Event) error { return t.postWith(t.b.cfg.Outage.Retry, evs) }

// postWith commits events on our task under the turn's lease, its tries
// run by retry (Outage.Retry or Persist). Every try carries the same
// idempotency key: a try whose answer was lost is not applied twice.
func (t *turn) postWith(retry func(context.Context, string, func(context.Context) error) error, evs []a2a.Event) error {
	if len(evs) == 0 {
		return nil
	}
	key := uuid.NewString()
	var p ingest.Posted
	err := retry(t.ctx, "posting an upstream agent's events", func(ctx context.Context) (err error) {
		p, err = t.b.pull.PostOnce(ctx, t.taskID, t.leaseID, key, evs)
		return err
	})
	switch {
	case errors.Is(err, ingest.ErrTaskCanceled):
		t.stop(errClientCanceled)
		return errClientCanceled
	case errors.Is(err, ingest.ErrLeaseLost), errors.Is(err, ingest.ErrTaskFinished):
		t.stop(errLeaseOver)
		return errLeaseOver
	case err != nil:
		if stop := t.stopped(); stop != nil {
			return stop
		}
		// Past the outage bound (the turn fails the task), or refused: the
		// lease runs out and the next turn forwards what is missing.
		return &postError{fmt.Errorf("upstream: posting %d events: %w", len(evs), err)}
	}
	for _, ev := range evs {
		t.fwd.track(ev)
	}
	t.fwd.state, t.done = p.State, p.Released
	t.posts++
	return nil
}

// postError is a failure to commit on our task: it ends the turn.
type postError struct{ err error }

func (e *postError) Error() string { return e.err.Error() }
func (e *postError) Unwrap() error { return e.err }

// agentMessage is a text message of ours to the client about its task.
func (t *turn) agentMessage(text string) *a2a.Message {
	return &a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleAgent, TaskID: t.taskID, ContextID: t.ctxID,
		Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
}
