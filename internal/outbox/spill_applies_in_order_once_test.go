package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// failNthPipeline fails the fail-th pipeline that carries an EVALSHA (a lost
// connection), letting every other through.
type failNthPipeline struct {
	n, fail atomic.Int32
}

var errInjected = errors.New("injected: connection reset")

func (h *failNthPipeline) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failNthPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *failNthPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		eval := false
		for _, c := range cmds {
			if c.Name() == "evalsha" {
				eval = true
			}
		}
		if eval && h.n.Add(1) == h.fail.Load() {
			for _, c := range cmds {
				c.SetErr(errInjected)
			}
			return errInjected
		}
		return next(ctx, cmds)
	}
}

// A spill of more than maxOps ops goes out in several script calls. When
// one of them fails, the later calls of the same FinishOutboxOps are not
// applied: the next owner appends the failed ops (no record) in order,
// behind nothing that came after them.
func TestSpillCallFailingMidwayAppliesNothingAfterIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixtureWith(t, 0, storeConfig{Outbox: true})
	if _, ok, err := s.Own(ctx, 0, "a", time.Minute); !ok || err != nil {
		t.Fatal("cannot own the partition", err)
	}
	lane := s.k.Lane("run", "c1")
	entry := func(i int) OutboxEntry {
		return OutboxEntry{ID: fmt.Sprintf("%d-0", 1000+i), TaskID: "run", ConfigID: "c1",
			EventID: fmt.Sprintf("%d-0", 1000+i), NotificationID: fmt.Sprintf("n%03d", i), Lane: lane}
	}
	// Warm the script cache (the first EVALSHA of a script is NOSCRIPT).
	warm := entry(999)
	warm.TaskID, warm.Lane = "other", s.k.Lane("other", "c1")
	if _, err := s.FinishOutbox(ctx, 0, "a", OutboxOp{Kind: OpDone, Entry: warm, Outcome: Delivered, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h := &failNthPipeline{}
	h.fail.Store(2) // the second script call of the spill
	s.rdb.AddHook(h)
	const n = 150 // 3 script calls: 64, 64, 22
	ops := make([]OutboxOp, n)
	for i := range ops {
		ops[i] = OutboxOp{Kind: OpSpill, Entry: entry(i), Now: time.Now()}
	}
	if _, err := s.FinishOutboxOps(ctx, 0, "a", ops); err == nil {
		t.Fatal("the spill reported no error")
	}
	h.fail.Store(-1)
	// The next owner (catch-up) appends those that have no record, in order.
	for i := range n {
		e := entry(i)
		if s.rdb.Exists(ctx, s.k.Record(0, e.NotificationID)).Val() == 1 {
			continue // done at dispatch: it has a record
		}
		if _, err := s.FinishOutbox(ctx, 0, "a", OutboxOp{Kind: OpAppend, Entry: e, Now: time.Now(), Replay: true}); err != nil {
			t.Fatal(err)
		}
	}
	l := s.rdb.LRange(ctx, lane, 0, -1).Val()
	for i, v := range l {
		if want := fmt.Sprintf("%d-0 n%03d", 1000+i, i); v != want {
			t.Fatalf("lane[%d] = %q, want %q: the lane delivers out of order (%d entries, %q ... )", i, v, want, len(l), l[i:min(i+3, len(l))])
		}
	}
}

// A spill call sent twice (go-redis re-sends a pipeline after a lost reply,
// 8 ms+ later) applies once, even when the lanes' workers have delivered
// and popped the first spilled notification before the re-send: the
// record the spill made tells.
func TestSpillSentTwiceAfterTheLaneMovedAppliesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 3)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	now := time.Now()
	ops := make([]OutboxOp, len(es))
	for i, e := range es {
		ops[i] = OutboxOp{Kind: OpSpill, Entry: e, Now: now}
	}
	if _, err := s.FinishOutboxOps(ctx, 0, "a", ops); err != nil {
		t.Fatal(err)
	}
	// The lanes' worker delivers the head meanwhile (finish.lua pops it).
	s.rdb.LPop(ctx, es[0].Lane)
	if _, err := s.FinishOutboxOps(ctx, 0, "a", ops); err != nil { // the re-sent call
		t.Fatal(err)
	}
	l := s.rdb.LRange(ctx, es[0].Lane, 0, -1).Val()
	if len(l) != 2 {
		t.Fatalf("lane %q: the re-sent spill pushed %s again, behind later notifications", l, es[0].NotificationID)
	}
}
