package outbox

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// Compaction cuts entries whose configs the listing of the task's
// deliveries read: it lists their notifications (those whose records still
// live) in the task's delivery index, under their event's ms, and gives
// the index the expiry of the longest-lived record. The task still lists
// every delivery, in order, each once, in pages that straddle the cut.
func TestDeliveriesOfEventsCutByCompactionAreStillListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10, Outbox: true})
	ids := commitN(t, s, "busy", 1, 40, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	es, err := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
	if err != nil || len(es) != 40 {
		t.Fatalf("outbox %d entries, %v", len(es), err)
	}
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	for _, e := range es {
		if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
			t.Fatalf("done: %d", res)
		}
	}
	if ok, _ := s.KeepOwning(ctx, 0, "a", time.Minute, es[len(es)-1].ID, false); !ok {
		t.Fatal("cannot store the offset")
	}
	var want []noted
	for _, id := range ids {
		want = append(want, noted{s.k.NotificationID("busy", id, "c1"), idMsInt(id)})
	}
	order := newestFirst(want)
	if got := listAll(t, s, DeliveryFilter{TaskID: "busy", Limit: 7}); !slices.Equal(idsOf(got), order) {
		t.Fatalf("before the cut the task lists %d: %q, want %q", len(got), idsOf(got), order)
	}
	if !compact(t, s, "busy") {
		t.Fatal("not compacted")
	}
	if n := s.rdb.XLen(ctx, s.EventsKey("busy")).Val(); n >= 40 {
		t.Fatalf("the stream holds %d entries after the cut", n)
	}
	index := s.k.TaskDeliveries("busy")
	if n := s.rdb.ZCard(ctx, index).Val(); n == 0 || n+s.rdb.XLen(ctx, s.EventsKey("busy")).Val() != 40 {
		t.Fatalf("the task's delivery index lists %d of the notifications cut", n)
	}
	if ttl, rec := s.rdb.PTTL(ctx, index).Val(), s.rdb.PTTL(ctx, s.k.Record(0, order[len(order)-1])).Val(); ttl < rec {
		t.Fatalf("the index expires in %v, before the records it lists (%v)", ttl, rec)
	}
	for _, limit := range []int{1, 7, 50} {
		if got := listAll(t, s, DeliveryFilter{TaskID: "busy", Limit: limit}); !slices.Equal(idsOf(got), order) {
			t.Fatalf("after the cut pages of %d list %d: %q, want %q", limit, len(got), idsOf(got), order)
		}
	}
}
