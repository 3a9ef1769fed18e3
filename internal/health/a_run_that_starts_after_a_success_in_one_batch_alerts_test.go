package health

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A batch that holds a success and then a failure ends the stored failure
// run and starts another: that is a first failure after a success, and
// alerts "failing" (once AlertEvery has passed since the last alert) as it
// does when the success and the failure come in batches of their own. A
// busy endpoint that flaps has both in every batch.
func TestARunThatStartsAfterASuccessInOneBatchAlerts(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{DisableAfterFailures: 100, AlertEvery: time.Hour})
	ctx := context.Background()
	if cs, err := s.Record(ctx, t0, []Outcomes{fail("a", 3, t0)}); err != nil || !slices.Equal(events(cs), []string{"a:failing"}) {
		t.Fatalf("first failures: %v, %v", events(cs), err)
	}
	at := t0.Add(2 * time.Hour)
	b := fail("a", 1, at.Add(time.Millisecond))
	b.OK, b.LastOK = 1, at
	b.RunFailed, b.RunStart = 1, at.Add(time.Millisecond)
	cs, err := s.Record(ctx, at.Add(time.Second), []Outcomes{b})
	if err != nil || !slices.Equal(events(cs), []string{"a:failing"}) {
		t.Fatalf("a success then a failure, hours after the last alert: %v, %v, want a:failing", events(cs), err)
	}
	if e, _ := s.Get(ctx, id("a"), at.Add(time.Second)); e.ConsecutiveFailures != 1 {
		t.Fatalf("run = %d, want 1 (the failure after the success)", e.ConsecutiveFailures)
	}
}
