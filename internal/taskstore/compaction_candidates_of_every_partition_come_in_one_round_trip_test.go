package taskstore

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// roundTrips counts the round trips a client makes (a command alone or a
// pipeline), but for those that set a new connection up.
type roundTrips struct{ n atomic.Int64 }

func setUp(name string) bool { return name == "hello" || name == "client" || name == "select" }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !setUp(cmd.Name()) {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !setUp(cmds[0].Name()) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// The compaction sweep runs every second on the elected instance, idle or
// not: it lists the due streams of all partitions in one round trip, not
// one per partition, and lists each partition's due tasks, earliest first,
// up to the count asked per partition.
func TestCompactionCandidatesOfEveryPartitionComeInOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, rdb, prefix := newStore(t, 16)
	k := layout.New(prefix, 16)
	now := time.Now()
	var due []string
	for p := range 16 {
		for i := range 3 { // 3 due per partition, one more not due yet
			id := "p" + strconv.Itoa(p) + "-" + strconv.Itoa(i)
			rdb.ZAdd(ctx, k.Compact(p), redis.Z{Score: float64(now.Add(-time.Duration(3-i) * time.Second).UnixMilli()), Member: id})
			if i < 2 {
				due = append(due, id)
			}
		}
		rdb.ZAdd(ctx, k.Compact(p), redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: "later-" + strconv.Itoa(p)})
	}

	counted := &roundTrips{}
	hooked := redis.NewClient(rdb.(*redis.Client).Options())
	defer hooked.Close()
	hooked.AddHook(counted)
	hs := storeOn(hooked, prefix, 16, Config{})

	got, err := hs.CompactCandidates(ctx, 2, now)
	if err != nil {
		t.Fatal(err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Errorf("listing the candidates of 16 partitions took %d round trips, want 1", n)
	}
	slices.Sort(got)
	slices.Sort(due)
	if !slices.Equal(got, due) {
		t.Errorf("candidates %v, want the 2 earliest due of each partition %v", got, due)
	}
}
