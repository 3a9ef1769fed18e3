package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// Failures are counted per address across instances (two Strikes on one
// Redis); the instance that sees an address go over refuses it until the
// end of the next second, without Redis; other addresses are not touched.
func TestStrikesRefuseAnAddressOverTheLimit(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := layout.New(prefix+"s", 0)
	a, errA := NewStrikes(Deps{RDB: rdb, Keys: k}, Config{Limit: 3})
	b, errB := NewStrikes(Deps{RDB: rdb, Keys: k}, Config{Limit: 3})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	ctx := context.Background()
	now := time.Unix(1_900_000_000, 200_000_000)
	for i, s := range []*Strikes{a, b, a} { // three failures, on two instances: at the limit
		if over, err := s.Strike(ctx, "10.0.0.1", now); over || err != nil {
			t.Fatalf("failure %d: over %v, %v", i+1, over, err)
		}
	}
	if over, _ := b.Strike(ctx, "10.0.0.1", now); !over {
		t.Fatal("the fourth failure in the second, on the other instance, is not over the limit")
	}
	if !b.Refused("10.0.0.1", now.Add(1500*time.Millisecond)) {
		t.Fatal("not refused during the next second")
	}
	if !b.Refused("10.0.0.1", now.Add(1799*time.Millisecond)) {
		t.Fatal("refusal ended before the end of the next second")
	}
	if b.Refused("10.0.0.1", now.Add(1800*time.Millisecond)) {
		t.Fatal("still refused after the end of the next second")
	}
	if a.Refused("10.0.0.1", now) {
		t.Fatal("refused by an instance that never saw it go over (it counts in Redis, and learns at its next failure)")
	}
	if b.Refused("10.0.0.2", now) {
		t.Fatal("another address refused")
	}
	if over, _ := a.Strike(ctx, "10.0.0.1", now.Add(time.Second)); over {
		t.Fatal("a failure in the next window counted with the last one")
	}
}
