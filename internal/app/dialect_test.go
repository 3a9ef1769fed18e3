package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSendBlockingEachDialect(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)

	t.Run("v0.3", func(t *testing.T) {
		var task v03Task
		r.call("message/send", map[string]any{"message": v03Message("hello three", nil)}, &task)
		if task.Kind != "task" || task.Status.State != "completed" {
			t.Fatalf("task = %+v", task)
		}
		if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text != "hello three" || task.Artifacts[0].Parts[0].Kind != "text" {
			t.Fatalf("artifacts = %+v", task.Artifacts)
		}
		if len(task.History) != 1 || task.History[0].Kind != "message" || task.History[0].Parts[0].Text != "hello three" {
			t.Fatalf("history = %+v", task.History)
		}
	})
	t.Run("v1.0", func(t *testing.T) {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message("hello one", nil)}, &res)
		if res.Task.Status.State != "TASK_STATE_COMPLETED" || res.Task.ID == "" {
			t.Fatalf("task = %+v", res.Task)
		}
		if len(res.Task.Artifacts) != 1 || *res.Task.Artifacts[0].Parts[0].Text != "hello one" {
			t.Fatalf("artifacts = %+v", res.Task.Artifacts)
		}
		if res.Task.History[0].Role != "ROLE_USER" {
			t.Fatalf("history role = %q", res.Task.History[0].Role)
		}
	})
	t.Run("v0.1", func(t *testing.T) {
		var task v01Task
		r.call("tasks/send", map[string]any{"id": "v01-task-1", "sessionId": "s-1", "message": v01Message("hello zero one", nil)}, &task)
		if task.ID != "v01-task-1" || task.SessionID != "s-1" || task.Status.State != "completed" {
			t.Fatalf("task = %+v", task)
		}
		if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Type != "text" || task.Artifacts[0].Parts[0].Text != "hello zero one" {
			t.Fatalf("artifacts = %+v", task.Artifacts)
		}
	})
}

func TestTaskReadAcrossDialects(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var created v01Task
	r.call("tasks/send", map[string]any{"id": "cross-1", "message": v01Message("across", nil)}, &created)

	var asV10 v10Task
	r.call("GetTask", map[string]any{"id": "cross-1"}, &asV10)
	if asV10.Status.State != "TASK_STATE_COMPLETED" || asV10.ContextID != created.SessionID {
		t.Fatalf("v1.0 view = %+v (v0.1 session %q)", asV10, created.SessionID)
	}
	// tasks/get is shared by v0.1 and v0.3: the reply follows the task's dialect.
	var asV01 v01Task
	r.call("tasks/get", map[string]any{"id": "cross-1"}, &asV01)
	if asV01.SessionID == "" {
		t.Fatalf("tasks/get of a v0.1 task should answer in v0.1 shape: %+v", asV01)
	}
	var sent struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("made in one", nil)}, &sent)
	var asV03 v03Task
	r.call("tasks/get", map[string]any{"id": sent.Task.ID}, &asV03)
	if asV03.Kind != "task" || asV03.Status.State != "completed" || asV03.Artifacts[0].Parts[0].Text != "made in one" {
		t.Fatalf("v0.3 view of a v1.0 task = %+v", asV03)
	}
}

func TestNonBlockingThenPoll(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("later", map[string]any{"metadata": demo(map[string]any{"delayMs": 50})}),
		"configuration": map[string]any{"blocking": false}}, &task)
	if task.Status.State != "submitted" {
		t.Fatalf("non-blocking send returned %q, want submitted", task.Status.State)
	}
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("later too", nil), "configuration": map[string]any{"returnImmediately": true}}, &res)
	if res.Task.Status.State != "TASK_STATE_SUBMITTED" {
		t.Fatalf("returnImmediately returned %q", res.Task.Status.State)
	}
	for _, id := range []string{task.ID, res.Task.ID} {
		if got := pollUntil(t, r, id, "TASK_STATE_COMPLETED"); len(got.Artifacts) != 1 {
			t.Fatalf("completed task has no artifact: %+v", got)
		}
	}
}

// pollUntil polls GetTask until the task reaches state (bounded).
func pollUntil(t *testing.T, r *relay, id, state string) v10Task {
	t.Helper()
	var task v10Task
	for range 500 {
		r.call("GetTask", map[string]any{"id": id}, &task)
		if task.Status.State == state {
			return task
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s stuck in %s, want %s", id, task.Status.State, state)
	return task
}

func TestHistoryLengthAndMetadata(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var res struct{ Task v10Task }
	meta := map[string]any{"trace": "abc", "demo": map[string]any{"steps": 1}}
	r.call("SendMessage", map[string]any{"message": v10Message("meta", map[string]any{"metadata": meta}),
		"configuration": map[string]any{"historyLength": 0}, "metadata": map[string]any{"team": "x"}}, &res)
	if len(res.Task.History) != 0 {
		t.Fatalf("historyLength 0 kept %d messages", len(res.Task.History))
	}
	if res.Task.Metadata["team"] != "x" {
		t.Fatalf("task metadata lost: %v", res.Task.Metadata)
	}
	var full v10Task
	r.call("GetTask", map[string]any{"id": res.Task.ID, "historyLength": 5}, &full)
	if len(full.History) != 1 {
		t.Fatalf("history = %d messages, want 1", len(full.History))
	}
}

func TestInputRequiredMultiTurnV01(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var first v01Task
	r.call("tasks/send", map[string]any{"id": "multi-1", "sessionId": "sess-9",
		"message": v01Message("book a flight", demo(map[string]any{"outcome": "input-required"}))}, &first)
	if first.Status.State != "input-required" || first.Status.Message == nil || first.Status.Message.Role != "agent" {
		t.Fatalf("first turn = %+v", first)
	}
	var second v01Task
	r.call("tasks/send", map[string]any{"id": "multi-1", "sessionId": "sess-9", "message": v01Message("to Paris", nil)}, &second)
	if second.Status.State != "completed" || second.Artifacts[0].Parts[0].Text != "to Paris" || len(second.History) != 2 {
		t.Fatalf("second turn = %+v", second)
	}
	// A message to a finished task is refused; v1.0 says -32004.
	res := r.callRaw("SendMessage", map[string]any{"message": v10Message("again", map[string]any{"taskId": "multi-1"})})
	wantError(t, res, -32004)
	if len(res.Error.Data) != 1 || !strings.Contains(string(res.Error.Data[0]), `"reason":"UNSUPPORTED_OPERATION"`) {
		t.Fatalf("v1.0 error data = %s", res.Error.Data)
	}
	// A mismatched sessionId is refused.
	wantError(t, r.callRaw("tasks/send", map[string]any{"id": "multi-1", "sessionId": "other", "message": v01Message("x", nil)}), -32602)
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	for _, tc := range []struct{ outcome, want string }{
		{"failed", "failed"}, {"rejected", "rejected"}, {"input-required", "input-required"}, {"completed", "completed"},
	} {
		var task v03Task
		r.call("message/send", map[string]any{"message": v03Message("o-"+tc.outcome, map[string]any{"metadata": demo(map[string]any{"outcome": tc.outcome})})}, &task)
		if task.Status.State != tc.want {
			t.Errorf("outcome %s: state %s", tc.outcome, task.Status.State)
		}
	}
	wantError(t, r.callRaw("message/send", map[string]any{"message": v03Message("bad", map[string]any{"metadata": demo(map[string]any{"outcome": "exploded"})})}), -32602)
	wantError(t, r.callRaw("message/send", map[string]any{"message": v03Message("bad", map[string]any{"metadata": demo(map[string]any{"steps": -1})})}), -32602)
}

func TestArtifactChunksAndEventMetadata(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("abcdefghij", map[string]any{"metadata": demo(map[string]any{"artifactChunks": 4, "steps": 3})})}, &res)
	a := res.Task.Artifacts
	if len(a) != 1 || len(a[0].Parts) != 4 {
		t.Fatalf("artifacts = %+v", a)
	}
	var joined string
	for _, p := range a[0].Parts {
		joined += *p.Text
	}
	if joined != "abcdefghij" {
		t.Fatalf("chunks join to %q", joined)
	}
	// Every event the demo agent emits carries emitNs and seq, in order.
	events := readEvents(t, r, res.Task.ID)
	seq := 0
	for _, ev := range events[1:] {
		var m struct {
			EmitNs string `json:"emitNs"`
			Seq    int    `json:"seq"`
		}
		if err := json.Unmarshal(ev.Metadata, &m); err != nil || m.EmitNs == "" || m.Seq != seq+1 {
			t.Fatalf("event metadata %s (previous seq %d)", ev.Metadata, seq)
		}
		seq = m.Seq
	}
	if seq != 3+4+1 {
		t.Fatalf("demo emitted %d events, want 8", seq)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("long", map[string]any{"metadata": demo(map[string]any{"steps": 100, "delayMs": 100})}),
		"configuration": map[string]any{"returnImmediately": true}}, &res)
	var canceled v10Task
	r.call("CancelTask", map[string]any{"id": res.Task.ID}, &canceled)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel returned %s", canceled.Status.State)
	}
	wantError(t, r.callRaw("CancelTask", map[string]any{"id": res.Task.ID}), -32002)
	wantError(t, r.callRaw("tasks/cancel", map[string]any{"id": res.Task.ID}), -32002)
	wantError(t, r.callRaw("CancelTask", map[string]any{"id": "no-such-task"}), -32001)
	// The demo agent stopped: no event follows the cancel.
	before := len(readEvents(t, r, res.Task.ID))
	time.Sleep(100 * time.Millisecond)
	if after := readEvents(t, r, res.Task.ID); len(after) != before || after[len(after)-1].Status.State != "canceled" {
		t.Fatalf("events after cancel: %d -> %d", before, len(after))
	}
}

func TestUnknownTask(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	wantError(t, r.callRaw("GetTask", map[string]any{"id": "nope"}), -32001)
	wantError(t, r.callRaw("tasks/get", map[string]any{"id": "nope"}), -32001)
	wantError(t, r.callRaw("message/send", map[string]any{"message": v03Message("x", map[string]any{"taskId": "nope"})}), -32001)
	res := r.callRaw("GetTask", map[string]any{"id": "nope"})
	if len(res.Error.Data) != 1 || !strings.Contains(string(res.Error.Data[0]), "TASK_NOT_FOUND") {
		t.Fatalf("v1.0 -32001 without ErrorInfo: %s", res.Error.Data)
	}
}
