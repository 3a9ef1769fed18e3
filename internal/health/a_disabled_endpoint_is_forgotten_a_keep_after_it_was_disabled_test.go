package health

import (
	"context"
	"testing"
	"time"
)

// Endpoints are implicit (any URL a push config names), and many are
// abandoned (a per-task callback URL of a client that went away): one
// that is disabled must not stay in Redis, and in the set every relay
// reads each second, forever. Its health is kept for Keep after it was
// disabled, then forgotten, and it is taken out of the disabled set: the
// endpoint is as new (a notification to it is POSTed again).
func TestADisabledEndpointIsForgottenAKeepAfterItWasDisabled(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{DisableAfterFailures: 1, Keep: 300 * time.Millisecond})
	ctx := context.Background()
	now := time.Now()
	if _, err := s.Record(ctx, now, []Outcomes{fail("a", 1, now)}); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Disabled(ctx); err != nil || len(d) != 1 {
		t.Fatalf("Disabled = %v, %v, want a", d, err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d, err := s.Disabled(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.rdb.Exists(ctx, s.k.EndpointHealth(id("a"))).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(d) == 0 && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("long after Keep, the disabled endpoint is still kept: disabled set %v, record %d", d, n)
		}
	}
}
