package app

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Events cut from a task's stream (retention) cannot be replayed: the
// replay queues what is left and says from when the window is available.
func TestAReplaySaysWhichPartOfItsWindowIsGone(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	since := time.Now().Add(-time.Second)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("cut", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": s.url("/cut")}}}, &res)
	originals := idsOf(s.waitHits(t, "/cut", 5, 10*time.Second))
	ctx := context.Background()
	events := r.app.store.EventsKey(res.Task.ID)
	kept, err := r.app.rdb.XRevRangeN(ctx, events, "+", "-", 2).Result()
	if err != nil || len(kept) != 2 {
		t.Fatalf("events: %v %v", kept, err)
	}
	if err := r.app.rdb.XTrimMinID(ctx, events, kept[1].ID).Err(); err != nil {
		t.Fatal(err)
	}
	status, ans := replay(t, r, map[string]any{"taskId": res.Task.ID, "since": rfc3339(since)})
	if status != http.StatusAccepted || ans.Queued != 2 || ans.UnavailableBefore == nil || !ans.UnavailableBefore.After(since) {
		t.Fatalf("replay: %d %+v, want 2 queued and the window unavailable before some time", status, ans)
	}
	if got := idsOf(s.waitHits(t, "/cut", 7, 10*time.Second)[5:]); !slices.Equal(got, originals[3:]) {
		t.Fatalf("replayed %v, want the last two %v", got, originals[3:])
	}
	// A window after the cut is whole.
	status, ans = replay(t, r, map[string]any{"taskId": res.Task.ID, "since": rfc3339(*ans.UnavailableBefore)})
	if status != http.StatusAccepted || ans.UnavailableBefore != nil {
		t.Fatalf("replay after the cut: %d %+v, want no unavailable part", status, ans)
	}
}
