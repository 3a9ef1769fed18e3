package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// laneFixture commits one task with n events, all delivered to config c1,
// and returns the store and the events' stream ids.
func laneFixture(t *testing.T, n int) (*fixture, []string) {
	t.Helper()
	return laneFixtureWith(t, n, storeConfig{})
}

// laneFixtureWith is laneFixture on a store configured as cfg (its prefix
// and one partition set here).
func laneFixtureWith(t *testing.T, n int, cfg storeConfig) (*fixture, []string) {
	t.Helper()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	cfg.Prefix, cfg.Partitions = strings.TrimSuffix(prefix, ":"), 1
	s := newFixture(rdb, cfg)
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	c := taskstore.Commit{TaskID: "run", Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}}
	for i := range n {
		c.Events = append(c.Events, []byte(`{"n":`+string(rune('1'+i))+`}`))
		c.Deliver = append(c.Deliver, true)
	}
	ids, err := s.Commit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return s, ids
}

func (s *fixture) pendingTokens(t *testing.T) int64 {
	t.Helper()
	p, err := s.rdb.XPending(context.Background(), s.k.Deliveries(0), group).Result()
	if err != nil {
		t.Fatal(err)
	}
	return p.Count
}

func readOne(t *testing.T, s *fixture, consumer string) Token {
	t.Helper()
	ts, err := s.ReadTokens(context.Background(), 0, consumer, 10, 10*time.Millisecond)
	if err != nil || len(ts) != 1 {
		t.Fatalf("ReadTokens = %v, %v; want one token", ts, err)
	}
	return ts[0]
}

// begun begins tok for consumer and fails the test unless it may go.
func begun(t *testing.T, s *fixture, tok Token, consumer string) Head {
	t.Helper()
	h, st, err := s.Begin(context.Background(), tok, consumer, time.Minute)
	if err != nil || st != Go {
		t.Fatalf("Begin = %+v, %v, %v", h, st, err)
	}
	return h
}

func delivered(now time.Time, lease time.Duration, run bool) Finish {
	return Finish{Outcome: Delivered, Attempt: []byte(`{}`), Now: now, First: now, Run: run, Lease: lease, Consumer: "w1"}
}

// A lane run: after a delivered head, the same token and lease go on with
// the lane's next head, without a trip through the stream; when the caller
// does not ask for it, or the lane is empty, the token is finished as
// before.
func TestLaneRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	tok := readOne(t, s, "w1")
	h, st, err := s.Begin(ctx, tok, "w1", time.Minute)
	if err != nil || st != Go || h.EventID != ids[0] || h.Lease == "" {
		t.Fatalf("Begin = %+v, %v, %v", h, st, err)
	}
	lease := s.k.Lease("run", "c1")
	s.rdb.PExpire(ctx, lease, time.Second) // the run must renew it

	done, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, true))
	if err != nil || !done.Applied || !done.Run || done.Next.EventID != ids[1] || done.Next.Lease != h.Lease {
		t.Fatalf("FinishToken(run) = %+v, %v; want the run to go on with %s", done, err, ids[1])
	}
	if string(done.Next.Config) != `{"url":"http://127.0.0.1/hook"}` || string(done.Next.Event) != `{"n":2}` {
		t.Fatalf("next head %+v", done.Next)
	}
	if ttl, _ := s.rdb.PTTL(ctx, lease).Result(); ttl < 30*time.Second {
		t.Fatalf("lease TTL %v after a run step: not renewed", ttl)
	}
	if n := s.pendingTokens(t); n != 1 {
		t.Fatalf("pending tokens during a run: %d, want the run's one", n)
	}
	if more, _ := s.ReadTokens(ctx, 0, "w2", 10, 10*time.Millisecond); len(more) != 0 {
		t.Fatalf("a run must not put a token in the stream: %v", more)
	}

	// Not asking for a run: the token is acknowledged, the lease released,
	// and the lane (one head left) gets a new token.
	done, err = s.FinishToken(ctx, tok, done.Next, delivered(time.Now(), time.Minute, false))
	if err != nil || !done.Applied || done.Run {
		t.Fatalf("FinishToken(no run) = %+v, %v", done, err)
	}
	if n, _ := s.rdb.Exists(ctx, lease).Result(); n != 0 {
		t.Fatal("lease kept after the run ended")
	}
	tok2 := readOne(t, s, "w2")
	h, st, err = s.Begin(ctx, tok2, "w2", time.Minute)
	if err != nil || st != Go || h.EventID != ids[2] {
		t.Fatalf("Begin of the new token = %+v, %v, %v", h, st, err)
	}
	// Asking for a run on the last head: the lane is empty, so it ends.
	done, err = s.FinishToken(ctx, tok2, h, delivered(time.Now(), time.Minute, true))
	if err != nil || !done.Applied || done.Run {
		t.Fatalf("FinishToken on the last head = %+v, %v", done, err)
	}
	if n := s.pendingTokens(t); n != 0 {
		t.Fatalf("pending tokens after the lane emptied: %d", n)
	}
	if n, _ := s.rdb.Exists(ctx, lease).Result(); n != 0 {
		t.Fatal("lease kept after the lane emptied")
	}
	for _, id := range ids {
		rec, err := s.Delivery(ctx, s.notificationID(t, id))
		if err != nil || rec.Status != "delivered" || rec.Attempts != 1 {
			t.Fatalf("record of %s: %+v, %v", id, rec, err)
		}
	}
	// The finished token again (a reclaimed copy): stale, nothing changes.
	if done, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, true)); err != nil || done.Applied {
		t.Fatalf("stale FinishToken = %+v, %v", done, err)
	}
}

// A failed attempt never goes on: the head waits for its retry, and
// nothing behind it may overtake it.
func TestLaneRunStopsAtARetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 2)
	tok := readOne(t, s, "w1")
	h, _, _ := s.Begin(ctx, tok, "w1", time.Minute)
	now := time.Now()
	done, err := s.FinishToken(ctx, tok, h, Finish{Outcome: Retry, Attempt: []byte(`{}`), Now: now, First: now,
		Due: now.Add(time.Hour), Run: true, Lease: time.Minute, Consumer: "w1"})
	if err != nil || !done.Applied || done.Run {
		t.Fatalf("FinishToken(retry) = %+v, %v", done, err)
	}
	if n, _ := s.rdb.ZCard(ctx, s.k.Tag(0)+"retries").Result(); n != 1 {
		t.Fatalf("retries: %d, want 1", n)
	}
	if head, _ := s.rdb.LIndex(ctx, s.k.Lane("run", "c1"), 0).Result(); !strings.HasPrefix(head, ids[0]+" ") {
		t.Fatalf("lane head after a retry: %q, want the failed one", head)
	}
}

// A finish whose lease ran out and went to another worker (a process
// paused between its POST and its finish; the token was taken over) logs
// its attempt and changes nothing else: it neither ends the other worker's
// run (acking the token) nor moves the lane or gives it a second token.
func TestFinishLeavesAnotherWorkersLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	tok := readOne(t, s, "w1")
	h, _, _ := s.Begin(ctx, tok, "w1", time.Minute)
	lease := s.k.Lease("run", "c1")
	s.rdb.Set(ctx, lease, "w2#1", time.Minute) // w2 took the token over and holds the lane
	for _, run := range []bool{true, false} {
		done, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, run))
		if err != nil || done.Applied || done.Run {
			t.Fatalf("FinishToken(run=%v) without the lease = %+v, %v; want not applied", run, done, err)
		}
	}
	if v, _ := s.rdb.Get(ctx, lease).Result(); v != "w2#1" {
		t.Fatalf("lease = %q: another worker's lease was released", v)
	}
	if n := s.pendingTokens(t); n != 1 {
		t.Fatalf("pending tokens %d: the other worker's token was acked", n)
	}
	if more, _ := s.ReadTokens(ctx, 0, "w3", 10, 10*time.Millisecond); len(more) != 0 {
		t.Fatalf("the lane got a second token: %v", more)
	}
	if head, _ := s.rdb.LIndex(ctx, s.k.Lane("run", "c1"), 0).Result(); !strings.HasPrefix(head, ids[0]+" ") {
		t.Fatalf("lane head %q: moved by a finish without the lease", head)
	}
	rec, err := s.Delivery(ctx, s.notificationID(t, ids[0]))
	if err != nil || rec.Attempts != 2 || rec.Status != "pending" {
		t.Fatalf("record %+v, %v: want both attempts logged, the status left to the lane's holder", rec, err)
	}
}

// A worker that dies during a run leaves the token pending: it is
// reclaimed, and the run resumes at the lane's head.
func TestLaneRunResumesAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	tok := readOne(t, s, "w1")
	h, _, _ := s.Begin(ctx, tok, "w1", 50*time.Millisecond)
	done, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), 50*time.Millisecond, true))
	if err != nil || !done.Run {
		t.Fatalf("FinishToken = %+v, %v", done, err)
	}
	// w1 dies here, with head 2 in hand.
	time.Sleep(80 * time.Millisecond)
	again, err := s.Reclaim(ctx, 0, "w2", 50*time.Millisecond, 10)
	if err != nil || len(again) != 1 || again[0].ID != tok.ID {
		t.Fatalf("Reclaim = %v, %v", again, err)
	}
	h, st, err := s.Begin(ctx, again[0], "w2", time.Minute)
	if err != nil || st != Go || h.EventID != ids[1] {
		t.Fatalf("Begin after the crash = %+v, %v, %v; want head %s", h, st, err, ids[1])
	}
}

// notificationID finds the notification id of event id of task "run".
func (s *fixture) notificationID(t *testing.T, eventID string) string {
	t.Helper()
	list, _, err := s.ListDeliveries(context.Background(), DeliveryFilter{TaskID: "run", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.EventID == eventID {
			return r.ID
		}
	}
	t.Fatalf("no notification for event %s", eventID)
	return ""
}
