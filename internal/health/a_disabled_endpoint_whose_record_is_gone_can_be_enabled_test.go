package health

import (
	"context"
	"testing"
)

// An endpoint still in the disabled set after its health record went (a
// Redis that evicts keys of any kind under memory pressure) would be
// skipped with nothing to show for it until a read of the set forgot it:
// Enable takes it out of the set all the same.
func TestADisabledEndpointWhoseRecordIsGoneCanBeEnabled(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{DisableAfterFailures: 1})
	ctx := context.Background()
	if _, err := s.Record(ctx, t0, []Outcomes{fail("a", 1, t0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.Del(ctx, s.k.EndpointHealth(id("a"))).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Enable(ctx, id("a"), t0); err != nil {
		t.Fatalf("Enable of a disabled endpoint without its record: %v", err)
	}
	if d, err := s.Disabled(ctx); err != nil || len(d) != 0 {
		t.Fatalf("Disabled = %v, %v, want none", d, err)
	}
}
