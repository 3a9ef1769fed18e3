package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// the "Fresh" decision (outbox.Consumer.Begin) is made on the
// consumer's clock and against its own lane lease, before Begin's round
// trip. Two ways it is wrong about the token by the time begin.lua
// runs, and begin.lua (fresh: no XCLAIM) then gives the lane to a token
// another worker has already finished:
//
//   - instances configured with different lane leases (it is
//     delivery_timeout+5s per instance: a rolling change of
//     delivery_timeout), where the one with the shorter lease reclaims
//     and finishes a token that waits in the other's memory;
//   - a delay between the decision and the script (a process frozen, the
//     batcher's queue, go-redis retrying the pipeline on a bad connection)
//     longer than half a lane lease.
//
// The stale copy then takes the lane's lease, POSTs the lane's next head
// while the lane's real (new) token exists, and the lane run's steps apply
// without an XACK check (the lease is taken as proof the token is
// pending). The run's last step finds the token acked and is dropped as
// stale: its POST is not recorded, the head is not popped, and the lane
// stays leased to nobody until the lease expires; the real token then
// POSTs that head again.
//
// Fixed: begin.lua skips the re-claim only when Redis shows the token
// pending, the caller's, and delivered to no one else (XPENDING).

// freshSetup: a lane with three heads; w1 read its token; w2 reclaims
// and delivers the first head (LaneRun 1), which puts a new token for the
// lane in the stream.
func freshSetup(t *testing.T, hook *idRecorder, task string) (fixture, outbox.Token, *Workers) {
	t.Helper()
	ctx := context.Background()
	fx := newFixture(t, 1, task, hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: task, ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, task, working, working); err != nil {
		t.Fatal(err)
	}
	w1 := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{LaneLease: time.Minute})), Config{})
	return fx, fx.oneToken(t, w1.consumer), w1
}

// w2 (lane lease 50ms, LaneRun 1) takes the token over and delivers head 1.
func freshTakeover(t *testing.T, fx fixture) {
	t.Helper()
	ctx := context.Background()
	cfg := Config{Timeout: 20 * time.Millisecond, LaneRun: 1}
	lease := outbox.ConsumerConfig{LaneLease: 50 * time.Millisecond, Attempt: cfg.Timeout}
	w2 := mustNew(t, fx.deps(fx.store.consumer(t, lease)), cfg)
	time.Sleep(80 * time.Millisecond)
	again, err := fx.store.Reclaim(ctx, 0, w2.consumer, lease.LaneLease, 10)
	if err != nil || len(again) != 1 {
		t.Fatalf("reclaimed %v, %v", again, err)
	}
	w2.Process(ctx, again[0])
}

// Instances with different lane leases: w1 (1 minute) holds the token in
// memory for 80ms (well within its fresh window of 30s); w2 (50ms)
// reclaims and finishes it meanwhile. w1's copy must not POST.
func TestFreshCopyFinishedByInstanceWithShorterLaneLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx, late, w1 := freshSetup(t, hook, "mixed")
	late.Read = time.Now()
	freshTakeover(t, fx)
	if ids := hook.got(); len(ids) != 1 {
		t.Fatalf("POSTs %v after the takeover, want head 1 once", ids)
	}
	w1.Process(ctx, late) // began 80ms after the read: "fresh"
	ids := hook.got()
	if len(ids) == 1 {
		return
	}
	// What the stale copy did.
	recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "mixed", Limit: 10})
	for _, r := range recs {
		t.Logf("record %s: status %s attempts %d", r.ID, r.Status, r.Attempts)
	}
	more, _ := fx.store.ReadTokens(ctx, 0, "w3", 10, 10*time.Millisecond)
	t.Logf("tokens in the stream for the lane besides the stale copy: %d", len(more))
	if len(more) == 1 {
		if _, st, _ := fx.store.Begin(ctx, more[0], "w3", time.Minute); st == outbox.Busy {
			t.Logf("the lane's real token finds the lane leased by the stale copy's finished run")
		}
	}
	t.Fatalf("a copy of a token finished by another instance was begun as fresh and POSTed %v after head 1 (%s)", ids[1:], ids[0])
}

// beginDelayed runs hold (another worker's whole takeover) when Begin is
// called, before the consumer decides whether the token is fresh. The
// test stops the consumer's clock for the delay, so that the decision is
// the one it made before it: as if begin.lua ran that long after the
// decision (a process frozen, or a Begin stuck in the batcher / a retried
// pipeline), for longer than half a lane lease.
type beginDelayed struct {
	*outbox.Consumer
	hold func()
}

func (b *beginDelayed) Begin(ctx context.Context, t outbox.Token) (outbox.Head, int, error) {
	if b.hold != nil {
		b.hold()
		b.hold = nil
	}
	return b.Consumer.Begin(ctx, t)
}

// Same lane lease everywhere (1s, with a 50ms timeout: like a 1s
// delivery_timeout with its default lane lease of 6s, scaled). w1's token
// waited 450ms in memory, so w1 decides "fresh"; then its Begin is delayed
// by 650ms (a freeze, a retried pipeline), during which w2 reclaims and
// finishes the token. 650ms is within what errLeaseShort lets through
// (the lane lease - Timeout), so w1 POSTs. The old Begin (XCLAIM) found the
// token done.
func TestFreshDecisionGoesStaleBeforeBeginRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx := newFixture(t, 1, "frozen", hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "frozen", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "frozen", working, working); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Timeout: 50 * time.Millisecond}
	lease := outbox.ConsumerConfig{LaneLease: time.Second, Attempt: cfg.Timeout}
	read := time.Now()
	clock := read
	w1lease := lease
	w1lease.Now = func() time.Time { return clock }
	delayed := &beginDelayed{Consumer: fx.store.consumer(t, w1lease)}
	w1 := mustNew(t, fx.deps(delayed), cfg)
	w2cfg := cfg
	w2cfg.LaneRun = 1
	w2 := mustNew(t, fx.deps(fx.store.consumer(t, lease)), w2cfg)
	tok := fx.oneToken(t, w1.consumer)
	tok.Read = read
	delayed.hold = func() {
		time.Sleep(600 * time.Millisecond)
		again, err := fx.store.Reclaim(ctx, 0, w2.consumer, lease.LaneLease, 10)
		if err != nil || len(again) != 1 {
			t.Errorf("reclaimed %v, %v", again, err)
			return
		}
		w2.Process(ctx, again[0]) // head 1 delivered, token acked, a new token for heads 2, 3
	}
	time.Sleep(450 * time.Millisecond)       // waiting in memory for a worker
	clock = read.Add(450 * time.Millisecond) // w1's consumer decides "fresh" at this time, though it runs Begin after the delay
	w1.Process(ctx, tok)
	if ids := hook.got(); len(ids) != 1 {
		t.Fatalf("POSTs %v: the stale copy (finished by w2 while its Begin was delayed) POSTed %v", ids, ids[1:])
	}
}
