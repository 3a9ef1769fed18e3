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

// A claim whose SET NX of a fresh turn's lease was sent again (its answer
// lost) finds its own lease there: that is still the turn's first attempt.
func TestAClaimThatFindsItsOwnLeaseGrantsTheSameAttempt(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "task-b", "m1", 1); err != nil {
		t.Fatal(err)
	}
	res, err := c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: layout.Group, Consumer: "w1", Streams: []string{c.stream("q"), ">"}, Count: 1, Block: -1}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 1 {
		t.Fatalf("read = %v, %v", res, err)
	}
	w := &Work{Queue: "q", TaskID: "task-b", Turn: 1, entry: res[0].Messages[0].ID, LeaseID: "cQ.0123abcd"}
	if err := c.rdb.Set(ctx, c.lease("q", "task-b"), leaseValue(w.LeaseID+".1", w, "w1"), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := grantScript.Run(ctx, c.rdb, []string{c.stream("q"), c.lease("q", "task-b")}, grantScript.Args(&grantArgs{
		EntryID: w.entry, LeaseID: w.LeaseID, LeaseMs: time.Hour.Milliseconds(), Consumer: "w1", Turn: 1, Delivered: 1})...).Int64Slice()
	if err != nil || len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Fatalf("grant over the claim's own lease = %v, %v; want granted as attempt 1", got, err)
	}
}
