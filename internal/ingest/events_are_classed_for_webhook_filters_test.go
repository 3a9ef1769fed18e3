package ingest

import (
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// Each event is classed for the webhook extension's filters: final and
// interrupted states (of a status update, or of a task that starts in
// one) pass "final"; artifact updates that append are the chunks
// "no-artifact-chunks" leaves out, the first chunk is not.
func TestEventsAreClassedForWebhookFilters(t *testing.T) {
	t.Parallel()
	status := func(s a2a.TaskState) a2a.Event {
		return a2a.Event{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: s}}
	}
	task := func(s a2a.TaskState) a2a.Event {
		return a2a.Event{Kind: a2a.EventTask, Task: &a2a.Task{Status: a2a.TaskStatus{State: s}}}
	}
	for _, c := range []struct {
		name string
		ev   a2a.Event
		want byte
	}{
		{"submitted task", task(a2a.StateSubmitted), classOther},
		{"task rejected at once", task(a2a.StateRejected), classFinal},
		{"working", status(a2a.StateWorking), classOther},
		{"completed", status(a2a.StateCompleted), classFinal},
		{"failed", status(a2a.StateFailed), classFinal},
		{"canceled", status(a2a.StateCanceled), classFinal},
		{"rejected", status(a2a.StateRejected), classFinal},
		{"input-required", status(a2a.StateInputRequired), classFinal},
		{"auth-required", status(a2a.StateAuthRequired), classFinal},
		{"first chunk", a2a.Event{Kind: a2a.EventArtifact, Artifact: &a2a.Artifact{}}, classOther},
		{"whole artifact", a2a.Event{Kind: a2a.EventArtifact, Artifact: &a2a.Artifact{}, LastChunk: true}, classOther},
		{"chunk", a2a.Event{Kind: a2a.EventArtifact, Artifact: &a2a.Artifact{}, Append: true}, classChunk},
		{"last chunk", a2a.Event{Kind: a2a.EventArtifact, Artifact: &a2a.Artifact{}, Append: true, LastChunk: true}, classChunk},
	} {
		if got := eventClass(c.ev); got != c.want {
			t.Errorf("%s: class %q, want %q", c.name, got, c.want)
		}
	}
	for events, want := range map[string]string{"": "", a2a.EventsAll: "", a2a.EventsFinal: "f", a2a.EventsNoArtifactChunks: "fo"} {
		if got := acceptOf(&a2a.WebhookOptions{Events: events}); got != want {
			t.Errorf("events %q: accept %q, want %q", events, got, want)
		}
	}
}
