package workqueue

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// A queue as a3a5dfe left it (leases "<lease id> <entry>/<turn> <consumer>",
// and a hash of grants per entry beside them): this build deletes that
// hash when it first uses the queue, ends a turn leased there (renewal,
// done, its later offer dropped), and takes over a turn whose lease
// expired there with the right attempt number (from the pending list,
// which that build's reads counted too).
func TestLeasesGrantedByThePreviousBuildEndUnderThisOne(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	rdb, stream, grants := c.rdb, c.stream("q"), c.k.WorkQueue("q").LegacyGrants
	// What a3a5dfe wrote: two turns offered and granted to "old"; the
	// lease of the first live, that of the second run out.
	if err := rdb.XGroupCreateMkStream(ctx, stream, layout.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range []string{"task-live", "task-expired"} {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"t", task, "m", "m1", "v", 1}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: layout.Group, Consumer: "old", Streams: []string{stream, ">"}, Count: 2, Block: -1}).Err(); err != nil {
		t.Fatal(err)
	}
	const oldLease = "cQ.0123456789abcdef0123456789abcdef"
	rdb.Set(ctx, c.lease("q", "task-live"), oldLease+" "+ids[0]+"/1 old", time.Hour)
	rdb.HSet(ctx, grants, ids[0], 1, ids[1], 1)
	idle(t, c, ids[1])

	// This build's first claim: the expired turn, as its second attempt.
	w, err := c.Claim(ctx, "q", "new", time.Hour, time.Second)
	if err != nil || w == nil || w.TaskID != "task-expired" || w.Attempt != 2 {
		t.Fatalf("claim = %+v, %v; want task-expired taken over as attempt 2", w, err)
	}
	if n := rdb.Exists(ctx, grants).Val(); n != 0 {
		t.Error("the grants hash of the previous build is left")
	}
	if err := c.Final(ctx, w); err != nil {
		t.Fatal(err)
	}
	// The live lease goes on and ends as it would have there.
	if err := c.Renew(ctx, oldLease, "task-live", LeaseRenew, time.Hour); err != nil {
		t.Fatalf("renewing the lease of the previous build: %v", err)
	}
	if err := c.Renew(ctx, oldLease, "task-live", LeaseDone, 0); err != nil {
		t.Fatalf("ending the lease of the previous build: %v", err)
	}
	if err := c.Renew(ctx, oldLease, "task-live", LeaseRenew, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewing it once done = %v, want ErrLeaseLost", err)
	}
	if err := c.Offer(ctx, "q", "task-live", "m1", 1); err != nil { // (a re-offer of the turn done)
		t.Fatal(err)
	}
	if w, err := c.Claim(ctx, "q", "new", time.Hour, 50*time.Millisecond); w != nil || err != nil {
		t.Fatalf("claim of the re-offered turn = %+v, %v; want it dropped", w, err)
	}
	if n := rdb.XLen(ctx, stream).Val(); n != 0 {
		t.Errorf("%d entries left in the queue, want none", n)
	}
	if n, _ := rdb.XPending(ctx, stream, layout.Group).Result(); n.Count != 0 {
		t.Errorf("%d entries left pending, want none", n.Count)
	}
}

// Final ends a turn whose task is final whoever holds its lease now: the
// worker that took the turn over from an expired lease works on a finished
// task, and loses its lease.
func TestAFinalTurnEndsWhoeverHoldsItsLease(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "task-a", "m1", 1); err != nil {
		t.Fatal(err)
	}
	a, err := c.Claim(ctx, "q", "a", time.Hour, time.Second)
	if err != nil || a == nil {
		t.Fatalf("claim = %+v, %v", a, err)
	}
	c.rdb.Del(ctx, c.lease("q", "task-a")) // (its lease runs out)
	idle(t, c, a.entry)
	c.quiet.Delete("q")
	b, err := c.Claim(ctx, "q", "b", time.Hour, time.Second)
	if err != nil || b == nil || b.Attempt != 2 {
		t.Fatalf("takeover = %+v, %v", b, err)
	}
	if err := c.Final(ctx, a); err != nil { // a finished the task meanwhile
		t.Fatal(err)
	}
	if err := c.Renew(ctx, b.LeaseID, "task-a", LeaseRenew, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the takeover's renewal = %v, want ErrLeaseLost", err)
	}
	if n := c.rdb.XLen(ctx, c.stream("q")).Val(); n != 0 {
		t.Errorf("%d entries left in the queue, want none", n)
	}
	if err := c.Final(ctx, b); err != nil { // (and its own end is harmless)
		t.Fatal(err)
	}
}
