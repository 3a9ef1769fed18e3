package outbox

import (
	"context"
	"testing"
	"time"
)

// A notification the owner has reported (parked: failed; appended: pending)
// but whose entry is still after the stored offset is listed once across
// tasks, not once from its status index and again from the outbox.
func TestReportedButWaitingNotificationIsListedOnce(t *testing.T) {
	ctx := context.Background()
	s, es := outboxFixture(t, 3)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own")
	}
	time.Sleep(20 * time.Millisecond) // update ms differs from commit ms
	now := time.Now()
	park := OutboxOp{Kind: OpPark, Entry: es[0], Outcome: Retry, Attempt: []byte(`{"attempt":1}`), Now: now, First: now, Due: now.Add(time.Minute)}
	if res := s.finishOp(t, "a", park); res != Applied {
		t.Fatalf("park: %d", res)
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[1]}); res != Applied {
		t.Fatalf("append: %d", res)
	}
	for _, st := range []string{"", "pending"} {
		list, _, err := s.ListDeliveries(ctx, DeliveryFilter{Status: st, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, r := range list {
			seen[r.ID]++
		}
		for id, n := range seen {
			if n > 1 {
				t.Errorf("status %q: %s listed %d times (list of %d)", st, id, n, len(list))
			}
		}
	}
}
