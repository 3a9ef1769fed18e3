package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

// idleGap is how long the tests let a token sit: an idle time at least
// this long was not restarted since, a shorter one was (the gap is wide
// enough for the calls in between).
const idleGap = 200 * time.Millisecond

// idle is the pending token's idle time, as Redis counts it.
func (s *fixture) idle(t *testing.T, id string) time.Duration {
	t.Helper()
	ps, err := s.rdb.XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: s.k.Deliveries(0), Group: layout.Group, Start: id, End: id, Count: 1}).Result()
	if err != nil || len(ps) != 1 {
		t.Fatalf("XPENDING %s = %v, %v", id, ps, err)
	}
	return ps[0].Idle
}

// A fresh token (its consumer read it just now) is begun without a
// re-claim: its idle time runs on from the read. Any other token is
// re-claimed, so that Begin finds out whether it is still pending; a
// reclaimed token always is, even when marked fresh.
func TestBeginReclaimsOnlyTokensNotFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixture(t, 1)
	tok := readOne(t, s, "w1")
	time.Sleep(idleGap)
	tok.Fresh = true
	begun(t, s, tok, "w1")
	if idle := s.idle(t, tok.ID); idle < idleGap {
		t.Fatalf("a fresh token's idle time is %s after Begin: it was re-claimed", idle)
	}
	s.rdb.Del(ctx, s.k.Lease("run", "c1"))
	tok.Fresh = false
	begun(t, s, tok, "w1")
	if idle := s.idle(t, tok.ID); idle >= idleGap {
		t.Fatalf("a token not fresh keeps its idle time %s after Begin: it was not re-claimed", idle)
	}

	// Finished (acked), then begun again as a reclaimed copy marked fresh:
	// the re-claim finds it done.
	s.rdb.XAck(ctx, s.k.Deliveries(0), layout.Group, tok.ID)
	s.rdb.Del(ctx, s.k.Lease("run", "c1"))
	tok.Fresh, tok.Reclaimed = true, true
	if _, st, err := s.Begin(ctx, tok, "w2", time.Minute); err != nil || st != Stale {
		t.Fatalf("Begin(a finished token, reclaimed) = %v, %v; want Stale", st, err)
	}
}

// A run step restarts the token's idle time only when the caller asks.
func TestRunStepClaimsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, ids := laneFixture(t, 3)
	tok := readOne(t, s, "w1")
	h := begun(t, s, tok, "w1")
	time.Sleep(idleGap)
	done, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, true))
	if err != nil || !done.Run || done.Next.EventID != ids[1] {
		t.Fatalf("FinishToken(run) = %+v, %v", done, err)
	}
	if idle := s.idle(t, tok.ID); idle < idleGap {
		t.Fatalf("idle %s after a run step that did not ask to claim", idle)
	}
	f := delivered(time.Now(), time.Minute, true)
	f.Claim = true
	done, err = s.FinishToken(ctx, tok, done.Next, f)
	if err != nil || !done.Run || done.Next.EventID != ids[2] {
		t.Fatalf("FinishToken(run, claim) = %+v, %v", done, err)
	}
	if idle := s.idle(t, tok.ID); idle >= idleGap {
		t.Fatalf("idle %s after a run step that asked to claim", idle)
	}
}

// A token marked fresh that Redis shows finished, or taken over by another
// consumer, is not begun on the caller's word: finished, it is stale;
// delivered to another, it is re-claimed (its idle time restarts, and it is
// the caller's again).
func TestBeginChecksAFreshTokenInRedis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixture(t, 1)
	tok := readOne(t, s, "w1")
	tok.Fresh = true

	// Another consumer claims it (as a reclaim would).
	s.rdb.XClaim(ctx, &redis.XClaimArgs{Stream: s.k.Deliveries(0), Group: layout.Group, Consumer: "w2", Messages: []string{tok.ID}})
	time.Sleep(idleGap)
	begun(t, s, tok, "w1")
	ps, err := s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: s.k.Deliveries(0), Group: layout.Group, Start: tok.ID, End: tok.ID, Count: 1}).Result()
	if err != nil || len(ps) != 1 || ps[0].Consumer != "w1" || ps[0].Idle >= idleGap {
		t.Fatalf("pending %+v, %v: a fresh token another consumer held was not re-claimed", ps, err)
	}

	// Finished meanwhile: stale, whatever the caller thinks.
	s.rdb.XAck(ctx, s.k.Deliveries(0), layout.Group, tok.ID)
	s.rdb.Del(ctx, s.k.Lease("run", "c1"))
	if _, st, err := s.Begin(ctx, tok, "w1", time.Minute); err != nil || st != Stale {
		t.Fatalf("Begin(a finished token marked fresh) = %v, %v; want Stale", st, err)
	}
}
