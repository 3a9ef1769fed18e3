package delivery

import (
	"encoding/json"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// A replay decodes only the head of each stored event; the class it finds
// for the configs' event filters, and whether the event notifies, must be
// what the commit found from the whole event.
func TestAReplayClassesEventsAsTheCommitDid(t *testing.T) {
	t.Parallel()
	st := func(s a2a.TaskState) *a2a.TaskStatus {
		return &a2a.TaskStatus{State: s, Timestamp: "2026-11-26T00:00:00Z"}
	}
	big := make([]a2a.Part, 50)
	for i := range big {
		big[i] = a2a.Part{Kind: "text", Text: "chunk of an artifact"}
	}
	for _, ev := range []a2a.Event{
		{Kind: a2a.EventTask, TaskID: "t", Task: &a2a.Task{ID: "t", Status: *st(a2a.StateSubmitted)}},
		{Kind: a2a.EventTask, TaskID: "t", Task: &a2a.Task{ID: "t", Status: *st(a2a.StateRejected)}},
		{Kind: a2a.EventStatus, TaskID: "t", Status: st(a2a.StateWorking)},
		{Kind: a2a.EventStatus, TaskID: "t", Status: st(a2a.StateCompleted), Final: true},
		{Kind: a2a.EventStatus, TaskID: "t", Status: st(a2a.StateInputRequired)},
		{Kind: a2a.EventStatus, TaskID: "t", Status: st(a2a.StateAuthRequired)},
		{Kind: a2a.EventArtifact, TaskID: "t", Artifact: &a2a.Artifact{ArtifactID: "a", Parts: big}},
		{Kind: a2a.EventArtifact, TaskID: "t", Artifact: &a2a.Artifact{ArtifactID: "a", Parts: big}, Append: true, LastChunk: true},
		{Kind: a2a.EventMessage, TaskID: "t", Message: &a2a.Message{MessageID: "m", Role: "agent"}},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var whole a2a.Event
		if err := json.Unmarshal(b, &whole); err != nil {
			t.Fatal(err)
		}
		head, err := eventHead(b)
		if err != nil {
			t.Fatal(err)
		}
		if head.FilterClass() != whole.FilterClass() || head.Kind.Notifies() != whole.Kind.Notifies() {
			t.Errorf("%s: the head gives class %c notifies %v, the whole event %c %v", b[:60], head.FilterClass(),
				head.Kind.Notifies(), whole.FilterClass(), whole.Kind.Notifies())
		}
	}
	if _, err := eventHead([]byte(`{"kind":`)); err == nil {
		t.Error("a broken event decoded")
	}
}
