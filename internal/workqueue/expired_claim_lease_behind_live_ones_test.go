package workqueue

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Claims.Claim runs XAUTOCLAIM from "0-0" with COUNT 1 and drops
// the returned cursor. Redis scans at most COUNT*10 pending entries per
// XAUTOCLAIM, so when the ten oldest pending entries are live leases (workers
// heartbeating long tasks), an expired lease behind them is never found: its
// task stays "working" until ten of the older ones finish.
func TestExpiredLeaseBehindTenLiveOnesIsReclaimed(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	const ttl = 300 * time.Millisecond
	var live []*Work
	for i := range 10 {
		id := fmt.Sprintf("long-%02d", i)
		if err := c.Offer(ctx, "q", id, "m", 1); err != nil {
			t.Fatal(err)
		}
		w, err := c.Claim(ctx, "q", "busy", ttl, time.Second)
		if err != nil || w == nil || w.TaskID != id {
			t.Fatalf("claim %d = %+v, %v", i, w, err)
		}
		live = append(live, w)
	}
	if err := c.Offer(ctx, "q", "crashed", "m", 1); err != nil {
		t.Fatal(err)
	}
	w, err := c.Claim(ctx, "q", "dies", ttl, time.Second)
	if err != nil || w == nil || w.TaskID != "crashed" {
		t.Fatalf("claim of the 11th = %+v, %v", w, err)
	}
	// The worker of "crashed" dies; the ten others keep heartbeating.
	renew := func() {
		for _, l := range live {
			if err := c.Renew(context.Background(), l.LeaseID, l.TaskID, LeaseRenew, ttl); err != nil {
				t.Errorf("renew %s: %v", l.TaskID, err)
			}
		}
	}
	deadline := time.Now().Add(4 * ttl)
	var got *Work
	for got == nil && time.Now().Before(deadline) {
		renew()
		got, err = c.Claim(ctx, "q", "rescuer", ttl, ttl/3)
		if err != nil {
			t.Fatal(err)
		}
	}
	if got == nil || got.TaskID != "crashed" {
		t.Fatalf("the expired lease on %q was never reclaimed within %v (got %+v): XAUTOCLAIM only looks at the first 10 pending entries", "crashed", 4*ttl, got)
	}
}
