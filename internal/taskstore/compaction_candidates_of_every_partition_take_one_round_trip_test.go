package taskstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// roundTrips counts what a client sends, single commands and pipelines,
// leaving out a new connection's own (hello, client setinfo).
type roundTrips struct {
	mu        sync.Mutex
	singles   int
	pipelines int
	pipelined int
}

func connSetup(c redis.Cmder) bool { return c.Name() == "hello" || c.Name() == "client" }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		if !connSetup(cmd) {
			r.singles++
		}
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.mu.Lock()
		n := 0
		for _, c := range cmds {
			if !connSetup(c) {
				n++
			}
		}
		if n > 0 {
			r.pipelines++
			r.pipelined += n
		}
		r.mu.Unlock()
		return next(ctx, cmds)
	}
}

// A compaction pass lists the due streams of every partition in one round
// trip, each partition's earliest due first and up to the count asked: an
// idle relay's compactor wakes once a second, not once per partition.
func TestCompactionCandidatesOfEveryPartitionTakeOneRoundTrip(t *testing.T) {
	t.Parallel()
	s, rdb, _ := newStore(t, 8)
	ctx := context.Background()
	now := t0
	due := map[int][]redis.Z{
		1: {{Score: float64(now.Add(-time.Second).UnixMilli()), Member: "b"}, {Score: float64(now.Add(-2 * time.Second).UnixMilli()), Member: "a"},
			{Score: float64(now.Add(-3 * time.Second).UnixMilli()), Member: "z"}},
		5: {{Score: float64(now.UnixMilli()), Member: "c"}, {Score: float64(now.Add(time.Millisecond).UnixMilli()), Member: "later"}},
	}
	for p, zs := range due {
		if err := rdb.ZAdd(ctx, s.k.Compact(p), zs...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rt := &roundTrips{}
	rdb.AddHook(rt)

	got, err := must(NewCompaction(partsOf(s), CompactionConfig{})).CompactCandidates(ctx, 2, now)
	if err != nil {
		t.Fatal(err)
	}
	if rt.singles != 0 || rt.pipelines != 1 || rt.pipelined != 8 {
		t.Fatalf("sent %d commands alone and %d pipelines (%d commands); want one pipeline of the 8 partitions' reads",
			rt.singles, rt.pipelines, rt.pipelined)
	}
	if len(got) != 8 {
		t.Fatalf("got %d partitions' candidates, want 8", len(got))
	}
	for p, ids := range got {
		var want []string
		switch p {
		case 1:
			want = []string{"z", "a"} // the earliest due first, two asked for
		case 5:
			want = []string{"c"} // "later" is not due yet
		}
		if !slices.Equal(ids, want) {
			t.Errorf("partition %d: candidates %q, want %q", p, ids, want)
		}
	}
}
