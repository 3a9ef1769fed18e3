package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// A replay sends a config only what its event filter takes: the events the
// filter left out never were notifications, so a replay must not make them
// ones (they would reach the receiver for the first time, with ids no
// commit gave).
func TestAReplayKeepsEachConfigsEventFilter(t *testing.T) {
	eachPath(t, testAReplayKeepsEachConfigsEventFilter)
}

func testAReplayKeepsEachConfigsEventFilter(t *testing.T, path string) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelayOn(t, path, nil)
	since := time.Now().Add(-time.Second)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("filtered replay", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "all", "url": s.url("/all")}}}, &res)
	for _, h := range s.waitHits(t, "/all", 5, 10*time.Second) {
		var rec struct{ Status string }
		waitDelivered(t, r, h.header.Get("A2A-Notification-Id"), &rec) // (or the replay finds it still queued)
	}
	// A second config, filtered to final states, on the finished task:
	// its one notification would be the task's last event; a replay since
	// the start must give it that alone.
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": res.Task.ID, "id": "final", "url": s.url("/final"),
		"metadata": map[string]any{a2a.WebhookExtensionURI: map[string]any{"events": "final"}}}, nil)

	status, ans := replay(t, r, map[string]any{"taskId": res.Task.ID, "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Configs != 2 {
		t.Fatalf("replay answered %d %+v", status, ans)
	}
	s.waitHits(t, "/all", 10, 10*time.Second)
	s.waitHits(t, "/final", 1, 10*time.Second)
	if ans.Queued != 6 {
		t.Fatalf("replay queued %d, want 5 for the unfiltered config and 1 for the final one", ans.Queued)
	}
	time.Sleep(300 * time.Millisecond) // anything more the replay queued for /final would have come by now
	final := s.hitsOf("/final")
	if len(final) != 1 {
		t.Fatalf("the final-only config got %d notifications from the replay, want 1", len(final))
	}
	if body := string(final[0].body); !strings.Contains(body, "TASK_STATE_COMPLETED") || strings.Contains(body, "TASK_STATE_WORKING") {
		t.Fatalf("the final config got %s, want the completed status update", body)
	}
}
