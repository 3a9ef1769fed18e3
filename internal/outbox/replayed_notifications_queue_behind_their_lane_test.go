package outbox

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A replayed notification keeps the id its commit gave it and goes to the
// end of its lane, behind what is queued there; one still queued is left
// where it is (so a second replay of the same window queues nothing twice).
func TestReplayedNotificationsQueueBehindTheirLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixtureWith(t, 3, storeConfig{}) // task "run": three notifications to c1, on the lanes path
	lane := s.k.Lane("run", "c1")
	entries := s.rdb.LRange(ctx, lane, 0, -1).Val()
	want := make([]string, len(ids))
	for i, id := range ids {
		want[i] = id + " " + s.k.NotificationID("run", id, "c1")
	}
	if !slices.Equal(entries, want) {
		t.Fatalf("lane %v, want the commit's ids %v", entries, want)
	}
	all := []Requeued{{ids[0], "c1"}, {ids[1], "c1"}, {ids[2], "c1"}}
	if res, err := s.Requeue(ctx, "run", all, time.Now()); err != nil || res != (RequeueResult{Waiting: 3}) {
		t.Fatalf("replay of queued ones: %+v, %v; want all left waiting", res, err)
	}
	// The first is delivered; the replay puts it behind the two left.
	ts, err := s.ReadTokens(ctx, 0, "w1", 10, 10*time.Millisecond)
	if err != nil || len(ts) != 1 {
		t.Fatalf("tokens %v, %v", ts, err)
	}
	h, st, err := s.Begin(ctx, ts[0], "w1", time.Minute)
	if err != nil || st != Go || h.EventID != ids[0] {
		t.Fatalf("begin: %+v %d %v", h, st, err)
	}
	now := time.Now()
	if _, err := s.FinishToken(ctx, ts[0], h, Finish{Outcome: Delivered, Attempt: []byte(`{}`), Now: now, First: now,
		Lease: time.Minute, Consumer: "w1"}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Requeue(ctx, "run", all, time.Now()); err != nil || res != (RequeueResult{Queued: 1, Waiting: 2}) {
		t.Fatalf("replay: %+v, %v; want the delivered one queued", res, err)
	}
	if got := s.rdb.LRange(ctx, lane, 0, -1).Val(); !slices.Equal(got, []string{want[1], want[2], want[0]}) {
		t.Fatalf("lane %v, want the replayed one behind the others", got)
	}
	if r, err := s.Delivery(ctx, s.k.NotificationID("run", ids[0], "c1")); err != nil || r.Status != "pending" || r.Attempts != 1 {
		t.Fatalf("replayed record %+v, %v; want pending with its attempt", r, err)
	}
	if res, err := s.Requeue(ctx, "run", all, time.Now()); err != nil || res != (RequeueResult{Waiting: 3}) {
		t.Fatalf("second replay: %+v, %v; want nothing queued twice", res, err)
	}
}
