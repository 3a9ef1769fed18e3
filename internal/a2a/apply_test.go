package a2a

import (
	"errors"
	"testing"
)

func TestCanTransition(t *testing.T) {
	t.Parallel()
	legal := map[[2]TaskState]bool{
		{StateSubmitted, StateWorking}: true, {StateSubmitted, StateRejected}: true,
		{StateSubmitted, StateCanceled}: true, {StateSubmitted, StateFailed}: true,
		{StateWorking, StateWorking}: true, {StateWorking, StateInputRequired}: true,
		{StateWorking, StateAuthRequired}: true, {StateWorking, StateCompleted}: true,
		{StateWorking, StateFailed}: true, {StateWorking, StateCanceled}: true,
		{StateInputRequired, StateWorking}: true, {StateInputRequired, StateCanceled}: true,
		{StateInputRequired, StateFailed}: true, {StateInputRequired, StateInputRequired}: true,
		{StateAuthRequired, StateWorking}: true, {StateAuthRequired, StateFailed}: true,
		{StateAuthRequired, StateCanceled}: true, {StateAuthRequired, StateAuthRequired}: true,
	}
	all := []TaskState{StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired,
		StateCompleted, StateFailed, StateCanceled, StateRejected, StateUnknown, "bogus"}
	for _, from := range all[:8] {
		for _, to := range all {
			if got, want := CanTransition(from, to), legal[[2]TaskState{from, to}]; got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	base := func() Task { return Task{ID: "t1", ContextID: "c1", Status: TaskStatus{State: StateWorking}} }
	art := func(id, text string) *Artifact {
		return &Artifact{ArtifactID: id, Parts: []Part{{Kind: PartText, Text: text}}}
	}
	t.Run("chunks append", func(t *testing.T) {
		t.Parallel()
		task := base()
		for i, chunk := range []string{"a", "b", "c"} {
			if err := Apply(&task, Event{Kind: EventArtifact, TaskID: "t1", Artifact: art("x", chunk), Append: i > 0}); err != nil {
				t.Fatal(err)
			}
		}
		if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 3 || task.Artifacts[0].Parts[2].Text != "c" {
			t.Fatalf("artifacts = %+v", task.Artifacts)
		}
		if err := Apply(&task, Event{Kind: EventArtifact, TaskID: "t1", Artifact: art("x", "z")}); err != nil {
			t.Fatal(err)
		}
		if len(task.Artifacts[0].Parts) != 1 {
			t.Fatalf("non-append update should replace: %+v", task.Artifacts)
		}
	})
	t.Run("terminal refuses", func(t *testing.T) {
		t.Parallel()
		task := base()
		task.Status.State = StateCompleted
		var te *TransitionError
		if err := Apply(&task, Event{Kind: EventStatus, TaskID: "t1", Status: &TaskStatus{State: StateWorking}}); !errors.As(err, &te) {
			t.Fatalf("err = %v, want TransitionError", err)
		}
		if err := Apply(&task, Event{Kind: EventArtifact, TaskID: "t1", Artifact: art("x", "a")}); !errors.As(err, &te) {
			t.Fatalf("artifact on terminal task: err = %v", err)
		}
	})
	t.Run("context mismatch", func(t *testing.T) {
		t.Parallel()
		task := base()
		err := Apply(&task, Event{Kind: EventStatus, TaskID: "t1", ContextID: "other", Status: &TaskStatus{State: StateCompleted}})
		if e, ok := AsError(err); !ok || e.Kind != KindInvalidParams {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestWithHistory(t *testing.T) {
	t.Parallel()
	task := Task{History: []Message{{MessageID: "1"}, {MessageID: "2"}, {MessageID: "3"}}}
	zero, two, ten := 0, 2, 10
	for _, tc := range []struct {
		n    *int
		want int
	}{{nil, 3}, {&zero, 0}, {&two, 2}, {&ten, 3}} {
		if got := len(WithHistory(task, tc.n).History); got != tc.want {
			t.Errorf("WithHistory(%v) kept %d, want %d", tc.n, got, tc.want)
		}
	}
	if got := WithHistory(task, &two).History[0].MessageID; got != "2" {
		t.Errorf("kept the wrong end: first = %s", got)
	}
}
