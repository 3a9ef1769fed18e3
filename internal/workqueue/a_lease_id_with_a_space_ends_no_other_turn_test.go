package workqueue

import (
	"errors"
	"testing"
	"time"
)

// A lease id is checked whole: a worker that chose a consumer name with
// spaces (the worker API's workerId) cannot pass its lease id followed by
// part of its lease's value, so that the rest of the value reads as
// another task's entry, and renew, hand back or end that task's turn.
func TestALeaseIDWithASpaceEndsNoOtherTurn(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	if err := c.Offer(ctx, "q", "victim", "m1", 1); err != nil {
		t.Fatal(err)
	}
	victim, err := c.Claim(ctx, "q", "w1", time.Hour, time.Second)
	if err != nil || victim == nil {
		t.Fatalf("claim = %+v, %v", victim, err)
	}
	if err := c.Offer(ctx, "q", "mine", "m1", 1); err != nil {
		t.Fatal(err)
	}
	// The attacker names itself so that its lease's value reads
	// "<lease> <entry>/1 worker-x <victim's entry>/1 y".
	consumer := "worker-x " + victim.entry + "/1 y"
	mine, err := c.Claim(ctx, "q", consumer, time.Hour, time.Second)
	if err != nil || mine == nil || mine.TaskID != "mine" {
		t.Fatalf("claim = %+v, %v", mine, err)
	}
	crafted := mine.LeaseID + " " + mine.entry + "/1 worker-x"
	for _, action := range []string{LeaseDone, LeaseRenew, LeaseRelease, LeaseFinal} {
		if err := c.Renew(ctx, crafted, "mine", action, time.Hour); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("%s under the crafted lease id = %v, want ErrLeaseLost", action, err)
		}
	}
	if _, ok := pendingDeliveries(t, c, "q")[victim.entry]; !ok {
		t.Fatal("the victim's turn was acknowledged under another task's lease")
	}
	if n, err := c.rdb.XLen(ctx, c.stream("q")).Result(); err != nil || n != 2 {
		t.Fatalf("stream length = %d, %v; want both turns still there", n, err)
	}
	// The victim's lease still works, and so does the attacker's own.
	if err := c.Renew(ctx, victim.LeaseID, "victim", LeaseRenew, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Renew(ctx, mine.LeaseID, "mine", LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
}
