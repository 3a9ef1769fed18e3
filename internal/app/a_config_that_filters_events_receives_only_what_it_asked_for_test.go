package app

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// A config that asks relay's webhook extension for an event filter
// receives only what it asked for, in order, and the events it filters out
// never become deliveries: no record of them is listed. One demo task, on
// each delivery path, with configs that take every event, only final and
// interrupted states (v1.0 and v0.3, whose notifications are snapshots),
// and no artifact chunks.
func TestAConfigThatFiltersEventsReceivesOnlyWhatItAskedFor(t *testing.T) {
	eachPath(t, testAConfigThatFiltersEventsReceivesOnlyWhatItAskedFor)
}

func testAConfigThatFiltersEventsReceivesOnlyWhatItAskedFor(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelayOn(t, path, nil)
	ext := func(events string) map[string]any {
		return map[string]any{a2a.WebhookExtensionURI: map[string]any{"events": events}}
	}
	// The first turn ends input-required, before any config: the configs
	// see the next two turns whole.
	var first struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("first", map[string]any{
		"metadata": demo(map[string]any{"steps": 0, "outcome": "input-required"})})}, &first)
	task := first.Task.ID
	if first.Task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first turn: %+v", first.Task)
	}
	before := deliveredEvents(t, r, task)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": task, "id": "all", "url": s.url("/all"), "metadata": ext("all")}, nil)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": task, "id": "plain", "url": s.url("/plain")}, nil)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": task, "id": "final", "url": s.url("/final"), "metadata": ext("final")}, nil)
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": task, "id": "nochunks", "url": s.url("/nochunks"), "metadata": ext("no-artifact-chunks")}, nil)
	r.call("tasks/pushNotificationConfig/set", map[string]any{"taskId": task,
		"pushNotificationConfig": map[string]any{"id": "final03", "url": s.url("/final03"), "metadata": ext("final")}}, nil)

	var turn struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("second", map[string]any{"taskId": task,
		"metadata": demo(map[string]any{"steps": 1, "outcome": "input-required"})})}, &turn)
	r.call("SendMessage", map[string]any{"message": v10Message("third", map[string]any{"taskId": task,
		"metadata": demo(map[string]any{"steps": 2, "artifactChunks": 3})})}, &turn)
	if turn.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("last turn: %+v", turn.Task)
	}

	// Every event the commits delivered, as the config that takes all got
	// them; the plain config (no extension) gets the same.
	stored := deliveredEvents(t, r, task) - before
	all := bodies(t, s.waitHits(t, "/all", stored, 20*time.Second))
	plain := bodies(t, s.waitHits(t, "/plain", stored, 20*time.Second))
	var wantFinal, wantNoChunks []string
	chunks := 0
	for _, b := range all {
		switch k := filterKind(t, b); k {
		case "input_required", "completed":
			wantFinal = append(wantFinal, b)
			wantNoChunks = append(wantNoChunks, b)
		case "chunk":
			chunks++
		default:
			wantNoChunks = append(wantNoChunks, b)
		}
	}
	if chunks != 2 || len(wantFinal) != 2 || !slices.Equal(all, plain) {
		t.Fatalf("the unfiltered configs got %d chunks, %d final states (want 2, 2); same: %v\n%s", chunks, len(wantFinal), slices.Equal(all, plain), strings.Join(all, "\n"))
	}
	final := bodies(t, s.waitHits(t, "/final", len(wantFinal), 20*time.Second))
	noChunks := bodies(t, s.waitHits(t, "/nochunks", len(wantNoChunks), 20*time.Second))
	var states03 []string
	for _, h := range s.waitHits(t, "/final03", 2, 20*time.Second) {
		var snap v03Task
		if err := json.Unmarshal(h.body, &snap); err != nil || snap.Kind != "task" {
			t.Fatalf("v0.3 notification %s", h.body)
		}
		states03 = append(states03, snap.Status.State)
	}

	// What each config asked for, in order, and nothing more: the records
	// listed are those of the notifications received.
	want := map[string]int{"all": stored, "plain": stored, "final": 2, "nochunks": len(wantNoChunks), "final03": 2}
	for cfg, n := range want {
		waitRecords(t, r, task, cfg, n)
	}
	if !slices.Equal(final, wantFinal) {
		t.Fatalf("final got\n%s\nwant\n%s", strings.Join(final, "\n"), strings.Join(wantFinal, "\n"))
	}
	if !slices.Equal(noChunks, wantNoChunks) {
		t.Fatalf("no-artifact-chunks got\n%s\nwant\n%s", strings.Join(noChunks, "\n"), strings.Join(wantNoChunks, "\n"))
	}
	if got := strings.Join(states03, ","); got != "input-required,completed" {
		t.Fatalf("v0.3 final got snapshots in states %s", got)
	}
	for p, n := range map[string]int{"/all": stored, "/plain": stored, "/final": 2, "/nochunks": len(wantNoChunks), "/final03": 2} {
		if got := len(s.hitsOf(p)); got != n {
			t.Fatalf("%s received %d notifications, want %d", p, got, n)
		}
	}
}

// deliveredEvents counts the events of task's stream that are delivered (all
// but messages).
func deliveredEvents(t *testing.T, r *relay, task string) int {
	n := 0
	for _, e := range readEvents(t, r, task) {
		if e.Kind != "message" {
			n++
		}
	}
	return n
}

// bodies are the hits' bodies, in arrival order.
func bodies(t *testing.T, hits []hit) []string {
	t.Helper()
	out := make([]string, len(hits))
	for i, h := range hits {
		if h.status != 200 {
			t.Fatalf("a notification was answered %d", h.status)
		}
		out[i] = string(h.body)
	}
	return out
}

// filterKind names a v1.0 notification for the filters: its state (for a
// task or status update), "artifact" for the first chunk of an artifact,
// "chunk" for one that appends.
func filterKind(t *testing.T, body string) string {
	t.Helper()
	var sr struct {
		ArtifactUpdate *struct{ Append bool }
	}
	if err := json.Unmarshal([]byte(body), &sr); err != nil {
		t.Fatal(err)
	}
	if sr.ArtifactUpdate != nil && sr.ArtifactUpdate.Append {
		return "chunk"
	}
	return streamKind(t, []byte(body))
}

// waitRecords waits until the delivery records of task's config cfg are n,
// all delivered, and fails when they are more.
func waitRecords(t *testing.T, r *relay, task, cfg string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs := listDeliveries(t, r, "task="+task+"&config="+cfg)
		delivered := 0
		for _, d := range recs {
			if d.Status == "delivered" {
				delivered++
			}
		}
		if len(recs) > n {
			t.Fatalf("config %s: %d delivery records, want %d: %+v", cfg, len(recs), n, recs)
		}
		if delivered == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("config %s: %d of %d records delivered: %+v", cfg, delivered, n, recs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
