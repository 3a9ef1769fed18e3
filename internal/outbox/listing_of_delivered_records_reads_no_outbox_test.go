package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// The commit lists notifications waiting in the outbox in their task's
// delivery index. A task listing filtered to another status than pending
// never shows them, so it reads no outbox for them (before, each one met
// in the index cost a scan of up to 4,096 outbox entries); a listing that
// shows them reads each outbox once.
func TestListingOfDeliveredRecordsReadsNoOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 1)
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
		t.Fatal(res)
	}
	c := taskstore.Commit{TaskID: "run", Version: 2, Snapshot: []byte(`{}`), UpdatedAt: time.Now()}
	for range 300 { // 300 notifications waiting in the outbox (an owner behind)
		c.Events = append(c.Events, []byte(`{}`))
		c.Deliver = append(c.Deliver, true)
	}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	log := &commandLog{}
	s.rdb.AddHook(log)
	outboxReads := func() (n int) {
		for _, c := range log.take() {
			if c == "xrange" {
				n++
			}
		}
		return n
	}
	// Filtered pages may be short: the cursor leads to the delivered one.
	var found []DeliveryRecord
	f := DeliveryFilter{TaskID: "run", Status: "delivered", Limit: 1}
	for page := 0; ; page++ {
		list, cur, err := s.ListDeliveries(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, list...)
		if n := outboxReads(); n > 0 {
			t.Fatalf("page %d of delivered records read the outbox %d times", page, n)
		}
		if cur == nil || page > 10 {
			break
		}
		f.Cursor = cur
	}
	if len(found) != 1 || found[0].ID != es[0].NotificationID || found[0].Status != "delivered" {
		t.Fatalf("listed %+v, want the delivered one", found)
	}
	all, _, err := s.ListDeliveries(ctx, DeliveryFilter{TaskID: "run", Limit: 500})
	if err != nil || len(all) != 301 {
		t.Fatalf("listed %d of 301 (%v)", len(all), err)
	}
	if n := outboxReads(); n != 1 {
		t.Fatalf("a listing of 301 with 300 waiting read the outbox %d times, want once", n)
	}
}
