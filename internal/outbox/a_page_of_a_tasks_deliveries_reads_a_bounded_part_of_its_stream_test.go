package outbox

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// scriptsOn counts the script calls that name key.
type scriptsOn struct {
	key string
	mu  sync.Mutex
	n   int
}

func (h *scriptsOn) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *scriptsOn) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *scriptsOn) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); (n == "evalsha" || n == "eval") && slices.Contains(cmd.Args(), any(h.key)) {
			h.mu.Lock()
			h.n++
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *scriptsOn) take() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.n
	h.n = 0
	return n
}

// A task whose events mostly notify nobody (1,000 entries after its one
// notification) lists its deliveries in pages that each read a bounded
// part of its event stream (about 512 entries and the rest of the ms it
// stops in, 64 a script call), not the
// whole stream: a page may come back short, with a cursor, and the pages
// still list the notification, once.
func TestAPageOfATasksDeliveriesReadsABoundedPartOfItsStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: true})
	ids := commitN(t, s, "quiet", 1, 1, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	for v := 1; v <= 100; v++ {
		c := taskstore.Commit{TaskID: "quiet", Version: int64(v), Snapshot: []byte("v"), UpdatedAt: time.Now()}
		for range 10 {
			c.Events = append(c.Events, []byte(`{"quiet":1}`))
			c.Deliver = append(c.Deliver, false)
		}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	h := &scriptsOn{key: s.EventsKey("quiet")}
	rdb.AddHook(h)
	var got []string
	f := DeliveryFilter{TaskID: "quiet", Limit: 10}
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("the listing does not end")
		}
		list, next, err := s.ListDeliveries(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if calls := h.take(); calls > 10 {
			t.Fatalf("page %d read the stream in %d script calls (up to %d entries of 1,001)", page, calls, 64*calls)
		}
		got = append(got, idsOf(list)...)
		if next == nil {
			break
		}
		f.Cursor = next
	}
	if want := []string{s.k.NotificationID("quiet", ids[0], "c1")}; !slices.Equal(got, want) {
		t.Fatalf("the task lists %q, want %q", got, want)
	}
}

// Pages that stop short in the stream (their rounds read a bounded part of
// it) still list a task's notifications newest first, each once (all
// waiting in the outbox here, beside an index member whose record has
// expired), whatever the page size.
func TestPagesThatStopShortInTheStreamListEachDeliveryOnceInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: true})
	ids := commitN(t, s, "sparse", 1, 1, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	var want []noted
	want = append(want, noted{s.k.NotificationID("sparse", ids[0], "c1"), idMsInt(ids[0])})
	for v := 1; v <= 120; v++ {
		c := taskstore.Commit{TaskID: "sparse", Version: int64(v), Snapshot: []byte("v"), UpdatedAt: time.Now()}
		for i := range 10 {
			c.Events = append(c.Events, []byte(`{"n":1}`))
			c.Deliver = append(c.Deliver, v%9 == 0 && i == 3)
		}
		got, err := s.Commit(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if v%9 == 0 {
			want = append(want, noted{s.k.NotificationID("sparse", got[3], "c1"), idMsInt(got[3])})
		}
		if v == 50 { // an index member whose record expired: not listed
			rdb.ZAdd(ctx, s.k.TaskDeliveries("sparse"), redis.Z{Score: float64(idMsInt(got[0])), Member: "0.indexed"})
		}
	}
	order := newestFirst(want)
	for _, limit := range []int{1, 3, 10, 100} {
		got := idsOf(listAll(t, s, DeliveryFilter{TaskID: "sparse", Limit: limit}))
		if !slices.Equal(got, order) {
			t.Fatalf("pages of %d list %d: %q, want %d: %q", limit, len(got), got, len(order), order)
		}
	}
}
