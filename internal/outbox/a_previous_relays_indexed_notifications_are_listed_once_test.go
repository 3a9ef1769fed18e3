package outbox

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A task the previous relay committed to has its notifications in its
// delivery index (under their outbox entry's ms), its stream entries name
// none, and its outbox entries are marked i=1 (what a store whose task
// retention is shorter than the records' still writes: the same commit
// path). After the upgrade, its commits name their configs in the stream
// instead: the task lists both kinds, delivered and waiting, each once, in
// pages of any size.
func TestAPreviousRelaysIndexedNotificationsAreListedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	cfg := storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: true, DeliveryRetention: time.Hour}
	old := cfg
	old.TaskRetention = time.Minute
	before, after := newFixture(rdb, old), newFixture(rdb, cfg)
	url := []byte(`{"url":"http://127.0.0.1/hook"}`)
	commit := func(s *fixture, v int64) []string {
		t.Helper()
		c := taskstore.Commit{TaskID: "t", Version: v, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
			Events: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}, Deliver: []bool{true, true}}
		if v == 0 {
			c.PushConfigs = map[string][]byte{"a": url, "b": url}
		}
		ids, err := s.Commit(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	// Each relay's first event's notifications are delivered, its second's wait.
	deliverFirst := func(s *fixture, from string, event string) string {
		t.Helper()
		es, err := s.ReadOutbox(ctx, 0, from, 100, 0)
		if err != nil || len(es) != 4 {
			t.Fatalf("outbox %+v (%v)", es, err)
		}
		for _, e := range es {
			if e.EventID == event {
				if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
					t.Fatalf("done: %d", res)
				}
			}
		}
		return es[len(es)-1].ID
	}
	olds := commit(before, 0)
	last := deliverFirst(before, "0-0", olds[0])
	if n := rdb.ZCard(ctx, before.k.TaskDeliveries("t")).Val(); n != 4 {
		t.Fatalf("the previous relay's index lists %d, want 4", n)
	}
	news := commit(after, 1)
	deliverFirst(after, last, news[0])
	var all []string
	for _, ev := range append(olds, news...) {
		for _, c := range []string{"a", "b"} {
			all = append(all, after.k.NotificationID("t", ev, c))
		}
	}
	slices.Sort(all)
	for _, limit := range []int{1, 3, 50} {
		got := listAll(t, after, DeliveryFilter{TaskID: "t", Limit: limit})
		ids := idsOf(got)
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		if !slices.Equal(sorted, all) {
			t.Fatalf("pages of %d list %q, want each of %q once", limit, ids, all)
		}
		for i := 1; i < len(got); i++ {
			if idMsInt(got[i].EventID) > idMsInt(got[i-1].EventID) {
				t.Fatalf("pages of %d list event %s after %s: not newest first (by ms)", limit, got[i].EventID, got[i-1].EventID)
			}
		}
		pending := 0
		for _, r := range got {
			if r.Status == "pending" {
				pending++
			}
		}
		if pending != 4 {
			t.Fatalf("pages of %d list %d pending, want the 4 waiting", limit, pending)
		}
	}
}
