package workqueue

import (
	"testing"
	"time"
)

// A turn offered twice (a re-offer of a turn whose first offer was made
// after all) is granted once: while its lease is held, the claim that
// meets the other offer drops it, so that it neither runs beside the first
// nor lingers to be handed out later. An offer of another turn of the task
// waits for the lease instead.
func TestTurnOfferedTwiceIsGrantedOnceAndItsDuplicateDropped(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	for range 2 {
		if err := c.Offer(ctx, "q", "task-d", "m1"); err != nil {
			t.Fatal(err)
		}
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil || w.MessageID != "m1" {
		t.Fatalf("first claim = %+v, %v", w, err)
	}
	if w2, err := c.Claim(ctx, "q", "w2", time.Minute, 200*time.Millisecond); w2 != nil || err != nil {
		t.Fatalf("the turn's second offer was granted beside the first: %+v, %v", w2, err)
	}
	if n, _ := c.rdb.XLen(ctx, c.stream("q")).Result(); n != 1 {
		t.Fatalf("%d entries in the queue after the duplicate's claim, want 1 (the duplicate dropped)", n)
	}
	// Another turn of the same task is not a duplicate: it waits.
	if err := c.Offer(ctx, "q", "task-d", "m2"); err != nil {
		t.Fatal(err)
	}
	if w3, err := c.Claim(ctx, "q", "w3", time.Minute, 200*time.Millisecond); w3 != nil || err != nil {
		t.Fatalf("a second turn was granted while the first's lease is held: %+v, %v", w3, err)
	}
	if n, _ := c.rdb.XLen(ctx, c.stream("q")).Result(); n != 2 {
		t.Fatalf("%d entries in the queue, want 2 (the other turn kept)", n)
	}
}
