package outbox

import (
	"context"
	"testing"
	"time"
)

// a finish of a lane-run step is not idempotent. Before lane runs,
// the XACK made a second execution of the same finish (go-redis re-sends a
// whole pipeline after a read timeout or a reset connection, and the
// batcher's pipelines carry finish.lua) a stale no-op. A run step skips the
// XACK and relies on the lease, which the first execution renewed: the
// second execution records the attempt again, counts it again in the
// per-minute stats, and reports Applied.
func TestReplayedRunFinishIsNotStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	tok := readOne(t, s, "w1")
	h, st, err := s.Begin(ctx, tok, "w1", time.Minute)
	if err != nil || st != Go {
		t.Fatalf("Begin = %+v, %v, %v", h, st, err)
	}
	f := delivered(time.Now(), time.Minute, true)
	first, err := s.FinishToken(ctx, tok, h, f)
	if err != nil || !first.Run {
		t.Fatalf("FinishToken = %+v, %v", first, err)
	}
	again, err := s.FinishToken(ctx, tok, h, f) // the same script run again
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Delivery(ctx, s.notificationID(t, ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if again.Applied || rec.Attempts != 1 {
		t.Fatalf("the same finish sent twice: second Applied=%v, head 1 attempts %d (want stale, 1)", again.Applied, rec.Attempts)
	}
}

// A Begin sent twice (a lost reply) finds its own lease: it is Go both
// times, not Busy, which would leave the lane to wait out the lease.
func TestBeginSentTwiceIsGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 1)
	tok := readOne(t, s, "w1")
	keys := s.beginKeys(tok)
	for i := range 2 {
		res, err := beginScript.Run(ctx, s.rdb, keys, beginScript.Args(&beginArgs{TokenID: tok.ID, Consumer: "w1", LeaseMs: 60000, Config: "c1", LeaseValue: "w1#only"})...).Slice()
		if err != nil || res[0].(int64) != Go || headOf(res).EventID != ids[0] {
			t.Fatalf("begin #%d = %v, %v", i+1, res, err)
		}
	}
	res, err := beginScript.Run(ctx, s.rdb, keys, beginScript.Args(&beginArgs{TokenID: tok.ID, Consumer: "w2", LeaseMs: 60000, Config: "c1", LeaseValue: "w2#other"})...).Slice()
	if err != nil || res[0].(int64) != Busy {
		t.Fatalf("another Begin = %v, %v; want Busy", res, err)
	}
}
