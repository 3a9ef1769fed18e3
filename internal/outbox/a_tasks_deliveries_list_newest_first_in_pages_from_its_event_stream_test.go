package outbox

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// listAll pages through task's deliveries limit at a time (the cursor of
// GET /v1/deliveries?task=), and returns their ids in order.
func listAll(t *testing.T, s *fixture, f DeliveryFilter) []DeliveryRecord {
	t.Helper()
	var all []DeliveryRecord
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the listing does not end")
		}
		page, next, err := s.ListDeliveries(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if next == nil {
			return all
		}
		f.Cursor = next
	}
}

func idsOf(rs []DeliveryRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// noted is one notification the test expects listed: its id and its
// event's ms.
type noted struct {
	id string
	ms int64
}

// newestFirst orders ns as the listing does: by their event's ms, newest
// first, then by id (the higher first).
func newestFirst(ns []noted) []string {
	slices.SortFunc(ns, func(a, b noted) int {
		if c := cmp.Compare(b.ms, a.ms); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.id
	}
	return out
}

// A task's deliveries are listed from the configs its event stream's
// entries name, newest first (by their event's ms), each once, through
// pages of any size: every config's, a config deleted since (its records
// stay), none of a config that filtered the event out, and those still
// waiting in the outbox (pending, no record yet). The filters (config,
// status) apply. On both delivery paths.
func TestATasksDeliveriesListNewestFirstInPagesFromItsEventStream(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{true, false} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[outbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb, prefix := redistest.New(t)
			s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: outbox})
			url := []byte(`{"url":"http://127.0.0.1/hook"}`)
			// Config f takes class x only: the first event (class y) is not
			// queued for it.
			c1 := taskstore.Commit{TaskID: "t", Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
				PushConfigs: map[string][]byte{"a": url, "b": url, "f": url}, PushAccept: map[string]string{"f": "x"},
				Events: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}, Deliver: []bool{true, true}, Class: []byte{'y', 'x'}}
			first, err := s.Commit(ctx, c1)
			if err != nil {
				t.Fatal(err)
			}
			if outbox { // the first commit's are delivered
				es, err := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
				if err != nil || len(es) != 5 {
					t.Fatalf("outbox %+v (%v)", es, err)
				}
				for _, e := range es {
					if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
						t.Fatalf("done: %d", res)
					}
				}
			}
			if err := s.tasks.DeletePushConfig(ctx, "t", "b"); err != nil {
				t.Fatal(err)
			}
			c2 := taskstore.Commit{TaskID: "t", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
				Events: [][]byte{[]byte(`{"n":3}`), []byte(`{"n":4}`)}, Deliver: []bool{true, true}, Class: []byte{'x', 'y'}}
			second, err := s.Commit(ctx, c2)
			if err != nil {
				t.Fatal(err)
			}
			var want []noted
			byConfig := map[string]int{}
			for i, ev := range append(first, second...) {
				cfgs := []string{"a", "b", "f"}[:2+i%2] // (events 2 and 3 are of class x)
				if i >= 2 {
					cfgs = []string{"a", "f"}[:1+(1-i%2)]
				}
				for _, c := range cfgs {
					want = append(want, noted{s.k.NotificationID("t", ev, c), idMsInt(ev)})
					byConfig[c]++
				}
			}
			order := newestFirst(want)
			if len(order) != 8 {
				t.Fatalf("the test expects %d notifications, want 8", len(order))
			}
			for _, limit := range []int{1, 2, 3, 8, 50} {
				got := listAll(t, s, DeliveryFilter{TaskID: "t", Limit: limit})
				if !slices.Equal(idsOf(got), order) {
					t.Fatalf("pages of %d list %q, want %q", limit, idsOf(got), order)
				}
				for _, r := range got {
					if r.TaskID != "t" || r.EventID == "" || r.ConfigID == "" || s.k.NotificationID("t", r.EventID, r.ConfigID) != r.ID {
						t.Fatalf("listed %+v", r)
					}
					waiting := outbox && slices.Contains(second, r.EventID)
					if wantSt := map[bool]string{true: "pending", false: map[bool]string{true: "delivered", false: "pending"}[outbox]}[waiting]; r.Status != wantSt {
						t.Fatalf("listed %s %s, want %s", r.ID, r.Status, wantSt)
					}
				}
			}
			for c, n := range byConfig {
				got := listAll(t, s, DeliveryFilter{TaskID: "t", ConfigID: c, Limit: 2})
				if len(got) != n {
					t.Fatalf("config %s: %d listed, want %d", c, len(got), n)
				}
			}
			wantPending := 8
			if outbox {
				wantPending = 3 // the second commit's, waiting
			}
			if got := listAll(t, s, DeliveryFilter{TaskID: "t", Status: "pending", Limit: 2}); len(got) != wantPending {
				t.Fatalf("%d pending listed, want %d", len(got), wantPending)
			}
		})
	}
}
