package health

import (
	"context"
	"testing"
)

// An endpoint still in the disabled set after its health record went (a
// Redis that evicts keys of any kind under memory pressure) would be
// skipped forever with nothing to show for it: List shows it, disabled,
// and Enable takes it out of the set all the same.
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
	if l, err := s.List(ctx, t0, 10); err != nil || len(l) != 1 || l[0].ID != id("a") || l[0].State != "disabled" {
		t.Fatalf("List = %+v, %v, want the endpoint, disabled", l, err)
	}
	if err := s.Enable(ctx, id("a"), t0); err != nil {
		t.Fatalf("Enable of a disabled endpoint without its record: %v", err)
	}
	if d, err := s.Disabled(ctx); err != nil || len(d) != 0 {
		t.Fatalf("Disabled = %v, %v, want none", d, err)
	}
}
