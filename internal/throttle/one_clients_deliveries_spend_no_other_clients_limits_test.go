package throttle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// Two clients whose configs name one URL with the same limits: Bob's
// deliveries, however many, spend none of Alice's rate or concurrency (the
// operator's host limits are the ones they share).
func TestOneClientsDeliveriesSpendNoOtherClientsLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 4)
	clock := &fakeClock{t: time.UnixMilli(1_700_000_000_000)}
	th, err := New(rdb, k, Config{Lease: 5 * time.Second, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://alice.example.test/hook"
	bob := Limits{Rate: 1, MaxConcurrent: 1, Owner: "bob"}
	alice := Limits{Rate: 1, MaxConcurrent: 1, Owner: "alice"}
	if _, w, err := th.Acquire(ctx, u, bob); err != nil || w != nil {
		t.Fatalf("bob's first delivery: %+v %v", w, err)
	}
	if _, w, err := th.Acquire(ctx, u, bob); err != nil || w == nil {
		t.Fatalf("bob's second delivery within his limits: %+v %v, want a wait", w, err)
	}
	if _, w, err := th.Acquire(ctx, u, alice); err != nil || w != nil {
		t.Fatalf("alice's delivery to the URL bob fills: %+v %v, want none", w, err)
	}
	// The host limit is the operator's, over every client.
	host := Limits{HostMaxConcurrent: 1, Owner: "alice"}
	if _, w, err := th.Acquire(ctx, "https://h.example.test/a", Limits{HostMaxConcurrent: 1, Owner: "bob"}); err != nil || w != nil {
		t.Fatalf("bob's delivery under the host cap: %+v %v", w, err)
	}
	if _, w, err := th.Acquire(ctx, "https://h.example.test/b", host); err != nil || w == nil {
		t.Fatalf("alice's delivery to a host bob fills: %+v %v, want a wait", w, err)
	}
}
