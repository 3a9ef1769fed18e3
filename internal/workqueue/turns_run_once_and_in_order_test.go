package workqueue

import (
	"context"
	"testing"
	"time"
)

// queued is the number of entries in queue q's stream.
func queued(t *testing.T, c *Claims, ctx context.Context) int64 {
	t.Helper()
	n, err := c.rdb.XLen(ctx, c.stream("q")).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A turn offered twice (a re-offer of a turn whose first offer was made
// after all) is granted once: while its lease is held, the claim that
// meets the other offer drops it, so that it neither runs beside the first
// nor lingers to be handed out later. A later turn of the task waits for
// the lease instead, even when its message reuses the held turn's message
// id (message ids are the client's): turns are told apart by number.
func TestTurnOfferedTwiceIsGrantedOnceAndItsDuplicateDropped(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	for range 2 {
		if err := c.Offer(ctx, "q", "task-d", "m1", 1); err != nil {
			t.Fatal(err)
		}
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil || w.MessageID != "m1" || w.Turn != 1 {
		t.Fatalf("first claim = %+v, %v", w, err)
	}
	if w2, err := c.Claim(ctx, "q", "w2", time.Minute, 200*time.Millisecond); w2 != nil || err != nil {
		t.Fatalf("the turn's second offer was granted beside the first: %+v, %v", w2, err)
	}
	if n := queued(t, c, ctx); n != 1 {
		t.Fatalf("%d entries in the queue after the duplicate's claim, want 1 (the duplicate dropped)", n)
	}
	// Later turns of the same task are not duplicates: they wait.
	if err := c.Offer(ctx, "q", "task-d", "m2", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Offer(ctx, "q", "task-d", "m1", 5); err != nil { // an answer reusing the message id
		t.Fatal(err)
	}
	for range 2 {
		if w3, err := c.Claim(ctx, "q", "w3", time.Minute, 200*time.Millisecond); w3 != nil || err != nil {
			t.Fatalf("a later turn was granted while the first's lease is held: %+v, %v", w3, err)
		}
	}
	if n := queued(t, c, ctx); n != 3 {
		t.Fatalf("%d entries in the queue, want 3 (the later turns kept)", n)
	}
}

// Once a turn is done, the task's lease key keeps a done marker for
// DoneHorizon: a late offer of that turn or of an older one (a re-offer)
// is dropped at its claim; a later turn is granted.
func TestDoneTurnOfferedAgainIsDropped(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "task-e", "m1", 2); err != nil {
		t.Fatal(err)
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-e", LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	if ttl, err := c.rdb.PTTL(ctx, c.lease("q", "task-e")).Result(); err != nil || ttl <= DoneHorizon-time.Minute || ttl > DoneHorizon {
		t.Fatalf("the done marker lives %v (%v), want about DoneHorizon (%v)", ttl, err, DoneHorizon)
	}
	for _, turn := range []int64{2, 1} {
		if err := c.Offer(ctx, "q", "task-e", "m1", turn); err != nil {
			t.Fatal(err)
		}
	}
	if w2, err := c.Claim(ctx, "q", "w2", time.Minute, 200*time.Millisecond); w2 != nil || err != nil {
		t.Fatalf("a done turn was granted again: %+v, %v", w2, err)
	}
	if n := queued(t, c, ctx); n != 0 {
		t.Fatalf("%d entries left after the late offers' claim, want none", n)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-e", LeaseRenew, time.Minute); err == nil {
		t.Fatal("a done lease was renewed: the done marker passed for a lease")
	}
	if err := c.Offer(ctx, "q", "task-e", "m1", 4); err != nil { // the client's answer, reusing the id
		t.Fatal(err)
	}
	if w3, err := c.Claim(ctx, "q", "w3", time.Minute, time.Second); err != nil || w3 == nil || w3.Turn != 4 {
		t.Fatalf("the next turn's claim = %+v, %v; want turn 4", w3, err)
	}
}

// A turn handed back is not done: it is granted again. The turns before it
// are over, though: an offer of an older one that a claim meets before the
// handed-back entry is dropped.
func TestReleasedTurnIsGrantedAgainAndOlderTurnsDropped(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "task-r", "m3", 3); err != nil {
		t.Fatal(err)
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-r", LeaseRelease, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.Offer(ctx, "q", "task-r", "m1", 1); err != nil { // a late offer of an older turn
		t.Fatal(err)
	}
	// The search for expired leases resumes past the handed-back entry, so
	// the claim reads the late offer first.
	c.scan.Store("q", "9999999999999-0")
	// (That search finds nothing, and the next comes up to a second later:
	// the claim waits past it.)
	w2, err := c.Claim(ctx, "q", "w2", time.Minute, 3*time.Second)
	if err != nil || w2 == nil || w2.Turn != 3 || w2.Attempt != 2 {
		t.Fatalf("claim after the release = %+v, %v; want turn 3 again", w2, err)
	}
	if n := queued(t, c, ctx); n != 1 {
		t.Fatalf("%d entries in the queue, want 1 (the older turn's offer dropped)", n)
	}
}

// Offers without a turn number (written before turns were numbered) are
// never taken for duplicates: one waits while the other is held, and is
// granted once the first is done.
func TestOffersWithoutATurnNumberAreNotDropped(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	for range 2 {
		if err := c.Offer(ctx, "q", "task-o", "m1", 0); err != nil {
			t.Fatal(err)
		}
	}
	const ttl = 200 * time.Millisecond
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil || w.Turn != 0 {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if w2, err := c.Claim(ctx, "q", "w2", time.Minute, ttl); w2 != nil || err != nil {
		t.Fatalf("granted beside the held one: %+v, %v", w2, err)
	}
	if n := queued(t, c, ctx); n != 2 {
		t.Fatalf("%d entries, want 2 (nothing dropped)", n)
	}
	if err := c.Renew(ctx, w.LeaseID, "task-o", LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.rdb.Exists(ctx, c.lease("q", "task-o")).Result(); n != 0 {
		t.Fatal("a done marker was kept for a turn without a number")
	}
	var w3 *Work
	for deadline := time.Now().Add(5 * time.Second); w3 == nil && time.Now().Before(deadline); {
		if w3, err = c.Claim(ctx, "q", "w3", ttl, ttl); err != nil {
			t.Fatal(err)
		}
	}
	if w3 == nil || w3.TaskID != "task-o" {
		t.Fatalf("the other offer was never granted after the first was done: %+v", w3)
	}
}
