package app

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// The URL index is written before its config is stored, so a config being
// stored (a task being created with it) is listed a moment before the
// store has it. A replay by that URL meanwhile leaves it out (nothing of it
// is stored yet to replay), but keeps it in the index: once stored, the
// next replay by URL finds it. (A replay that dropped it as stale would
// leave the config out of every later replay by URL.)
func TestAReplayByURLKeepsAConfigBeingStoredInTheIndex(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	ctx := context.Background()
	since := time.Now().Add(-time.Second)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("stored", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "c", "url": s.url("/u")}}}, &res)
	s.waitHits(t, "/u", 5, 10*time.Second)

	// A SendMessage that has listed its config under the URL, and has not
	// yet stored its task.
	if err := r.app.urls.IndexPushURL(ctx, s.url("/u"), "task-being-created", "c", time.Now()); err != nil {
		t.Fatal(err)
	}
	status, ans := replay(t, r, map[string]any{"url": s.url("/u"), "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Configs != 1 || ans.TasksGone != 0 {
		t.Fatalf("replay: %d %+v, want the stored config alone, and no task counted gone", status, ans)
	}
	if _, listed, err := r.app.urls.URLConfigSince(ctx, s.url("/u"), "task-being-created", "c"); err != nil || !listed {
		t.Fatalf("the config being stored is no longer in the URL's index (%v): later replays by URL miss it", err)
	}
}
