package delivery

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

// deadAfterOneAttempt waits (up to 10 s) for taskID's notification to be
// dead-lettered, checks it took one attempt, and returns its record and
// that attempt.
func (fx fixture) deadAfterOneAttempt(t *testing.T, ctx context.Context, taskID string) (outbox.DeliveryRecord, Attempt) {
	t.Helper()
	var dead []outbox.DeliveryRecord
	var err error
	for deadline := time.Now().Add(10 * time.Second); len(dead) == 0; {
		if time.Now().After(deadline) {
			recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: taskID, Limit: 10})
			for _, r := range recs {
				t.Logf("%s: %s after %d attempts %s", r.ID, r.Status, r.Attempts, r.AttemptLog)
			}
			t.Fatal("not dead-lettered within 10 s (a retry is due 1 s after the first attempt)")
		}
		time.Sleep(20 * time.Millisecond)
		if dead, _, err = fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: taskID, Status: "dead", Limit: 10}); err != nil {
			t.Fatal(err)
		}
	}
	r := dead[0]
	if r.Attempts != 1 || len(r.AttemptLog) != 1 {
		t.Fatalf("dead after %d attempts (%d logged), want 1", r.Attempts, len(r.AttemptLog))
	}
	var a Attempt
	if err := json.Unmarshal(r.AttemptLog[0], &a); err != nil {
		t.Fatalf("attempt %s: %v", r.AttemptLog[0], err)
	}
	return r, a
}
