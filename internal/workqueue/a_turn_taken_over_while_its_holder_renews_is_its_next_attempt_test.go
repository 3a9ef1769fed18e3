package workqueue

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// A claim that takes a turn over (its entry idle past the lease) while the
// turn's lease is still there for that entry grants the attempt after the
// held lease's, even when the holder renewed between the claim's
// XAUTOCLAIM and its grant (a renewal sets the delivery count back to the
// held attempt): two holders of one turn are never told the same attempt,
// and the later one learns that an earlier one may have left events.
func TestATurnTakenOverWhileItsHolderRenewsIsItsNextAttempt(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	const ttl = time.Hour
	if err := c.Offer(ctx, "q", "task-a", "m1", 1); err != nil {
		t.Fatal(err)
	}
	first, err := c.Claim(ctx, "q", "w1", ttl, time.Second)
	if err != nil || first == nil || first.Attempt != 1 {
		t.Fatalf("claim = %+v, %v", first, err)
	}
	// Its entry looks abandoned (a holder late to renew; on the embedded
	// store, whose keys do not expire, a dead one), and a claim takes it
	// over: the delivery count goes to 2.
	idle(t, c, first.entry)
	msgs, _, err := c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: c.stream("q"), Group: layout.Group,
		Consumer: "w2", MinIdle: ttl, Start: "0-0", Count: 1}).Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("takeover = %v, %v", msgs, err)
	}
	// The holder renews before the claim's grant runs (the count goes back
	// to its attempt, 1).
	if err := c.Renew(ctx, first.LeaseID, "task-a", LeaseRenew, ttl); err != nil {
		t.Fatal(err)
	}
	ws, err := c.grantEntries(ctx, "q", "w2", ttl, msgs, true)
	if err != nil || len(ws) != 1 {
		t.Fatalf("grant of the taken-over turn = %v, %v", ws, err)
	}
	if ws[0].Attempt != 2 {
		t.Fatalf("the turn taken over from attempt 1's lease is attempt %d (lease %s); want 2", ws[0].Attempt, ws[0].LeaseID)
	}
	if got := pendingDeliveries(t, c, "q")[first.entry]; got != 2 {
		t.Fatalf("delivery count after the takeover's grant = %d, want 2 (the attempt the lease carries)", got)
	}
	// It expires in turn: the next takeover is attempt 3.
	c.rdb.Del(ctx, c.lease("q", "task-a"))
	idle(t, c, first.entry)
	c.quiet.Delete("q")
	third, err := c.Claim(ctx, "q", "w3", ttl, time.Second)
	if err != nil || third == nil || third.Attempt != 3 {
		t.Fatalf("claim after the second lease expired = %+v, %v; want attempt 3", third, err)
	}
}
