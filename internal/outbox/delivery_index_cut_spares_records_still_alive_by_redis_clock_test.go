package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// The cut of a task's delivery index (commit.lua) compares the members'
// scores with the committing relay's clock (UpdatedAt), while the records
// they point at expire by Redis's clock (outbox: PXAT entry ms + retention;
// lanes: PX retention at the commit). A relay whose clock is ahead of
// Redis's (or of the relay that listed the member) by less than half a
// retention unlists no record that still lives.
func TestDeliveryIndexCutSparesRecordsStillAliveByRedisClock(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{true, false} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[outbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			keep := 4 * time.Second
			s, es := storeKeeping(t, keep, outbox)
			rdb := s.rdb
			var id string
			if outbox {
				if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1}`), Now: time.Now()}); res != Applied {
					t.Fatalf("done: %d", res)
				}
				id = es[0].NotificationID
			} else {
				ids, err := rdb.ZRange(ctx, s.k.TaskDeliveries("run"), 0, -1).Result()
				if err != nil || len(ids) != 1 {
					t.Fatalf("index %v (%v)", ids, err)
				}
				id = ids[0]
			}
			if !listedForTask(t, s, id) {
				t.Fatal("not listed at first")
			}
			time.Sleep(2500 * time.Millisecond)
			// Another commit of the task, by a relay whose clock is 2s
			// ahead of Redis's (the record has 1.5s left by Redis's clock).
			c2 := taskstore.Commit{TaskID: "run", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now().Add(2 * time.Second),
				Events: [][]byte{[]byte(`{"n":2}`)}, Deliver: []bool{true}}
			if _, err := s.Commit(ctx, c2); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delivery(ctx, id); err != nil {
				t.Fatalf("record gone already: %v", err)
			}
			if !listedForTask(t, s, id) {
				t.Fatalf("record %s still lives (PTTL %v) but the index cut dropped it from its task's listing",
					id, rdb.PTTL(ctx, s.k.Record(0, id)).Val())
			}
		})
	}
}
