package outbox

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// afterCommand is a hook that, once armed, runs do right after the first
// command that names one of keys: something another relay does between
// two reads of one call.
type afterCommand struct {
	armed atomic.Bool
	keys  []string
	do    func()
}

func (h *afterCommand) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *afterCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *afterCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if slices.ContainsFunc(cmd.Args(), func(a any) bool { k, _ := a.(string); return slices.Contains(h.keys, k) }) &&
			h.armed.CompareAndSwap(true, false) {
			h.do()
		}
		return err
	}
}

// A compaction that cuts the task's stream while a listing of its
// deliveries reads (after the first of its reads of the stream and of the
// delivery index) moves the notifications it cuts from the stream to the
// index: the listing still lists each of them, once.
func TestACompactionBetweenTheReadsOfAListingLosesNone(t *testing.T) {
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
	cut := false
	h := &afterCommand{keys: []string{s.k.TaskDeliveries("busy"), s.EventsKey("busy")}, do: func() { cut = compact(t, s, "busy") }}
	rdb.AddHook(h)
	h.armed.Store(true)
	got := listAll(t, s, DeliveryFilter{TaskID: "busy", Limit: 50})
	if !cut {
		t.Fatal("not compacted during the listing")
	}
	if !slices.Equal(idsOf(got), order) {
		t.Fatalf("a listing during a cut lists %d: %q, want %q", len(got), idsOf(got), order)
	}
}
