package outbox

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// tasks is the task store, embedded in fixture under this name.
type tasks = taskstore.Store

// fixture is the task store and the outbox over one Redis, wired as the
// app wires them (one key layout, one group-commit batcher): the outbox's
// tests commit through the task store and deliver through the outbox.
type fixture struct {
	*Outboxes
	*Lanes
	*Owners
	*Stats
	*Replay
	*Records
	*tasks
	*taskstore.Compaction
	// rdb and k are the Redis and key layout all parts share.
	rdb redis.UniversalClient
	k   layout.Keys
	// keep is the delivery retention all parts share.
	keep time.Duration
	// maxLen is the task store's EventsMaxLen, as its commit script takes it.
	maxLen string
}

// Partitions is the partition count both share.
func (f *fixture) Partitions() int { return f.k.Partitions() }

// storeConfig is the configuration of both halves of a fixture.
type storeConfig struct {
	Prefix            string
	Partitions        int
	EventsMaxLen      int
	DeliveryRetention time.Duration
	TaskRetention     time.Duration // shorter than DeliveryRetention: commits write the task's delivery index
	AttemptsKept      int
	Outbox            bool
}

func newFixture(rdb redis.UniversalClient, c storeConfig) *fixture {
	k := layout.New(c.Prefix, c.Partitions)
	b := groupcommit.New(rdb)
	parts := Deps{RDB: rdb, Keys: k, Batch: b}
	cfg := Config{DeliveryRetention: c.DeliveryRetention, AttemptsKept: c.AttemptsKept, Outbox: c.Outbox}
	return &fixture{
		Outboxes: must(NewOutboxes(parts, cfg)),
		Lanes:    must(NewLanes(parts, cfg)),
		Owners:   must(NewOwners(parts)),
		Stats:    must(NewStats(parts)),
		Replay:   must(NewReplay(parts, cfg)),
		Records:  must(NewRecords(parts, cfg)),
		tasks: must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: b}, taskstore.Config{EventsMaxLen: c.EventsMaxLen,
			DeliveryRetention: c.DeliveryRetention, TaskRetention: c.TaskRetention, Outbox: c.Outbox})),
		Compaction: must(taskstore.NewCompaction(taskstore.Deps{RDB: rdb, Keys: k, Batch: b},
			taskstore.CompactionConfig{EventsMaxLen: c.EventsMaxLen, DeliveryRetention: c.DeliveryRetention})),
		rdb:    rdb,
		k:      k,
		keep:   cfg.retention(),
		maxLen: strconv.Itoa(cmp.Or(c.EventsMaxLen, 1000)),
	}
}

// consumerDeps are the fixture's parts, as a Consumer takes them.
func (f *fixture) consumerDeps() *ConsumerDeps {
	return &ConsumerDeps{Outboxes: f.Outboxes, Lanes: f.Lanes, Owners: f.Owners, Stats: f.Stats, Records: f.Records}
}

// compactAt is the length over which the task store compacts an event
// stream, as it documents it: a quarter (at least 16 entries) over the
// length kept.
func (f *fixture) compactAt() int {
	n, _ := strconv.Atoi(f.maxLen)
	return n + max(16, n/4)
}

// compactRetry is how long the task store waits before it looks again at a
// stream a lagging webhook held back.
const compactRetry = 5 * time.Second

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// newStore returns a fixture on the test's own key prefix of the shared Redis.
func newStore(t *testing.T, partitions int) (*fixture, redis.UniversalClient, string) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	prefix = strings.TrimSuffix(prefix, ":") // the store adds its own ":"
	return newFixture(rdb, storeConfig{Prefix: prefix, Partitions: partitions}), rdb, prefix
}

// candidates lists up to n tasks of partition p due for compaction at now
// (what Compactor.RunOnce reads of it).
func (f *fixture) candidates(ctx context.Context, p, n int, now time.Time) ([]string, error) {
	all, err := f.CompactCandidates(ctx, n, now)
	if err != nil {
		return nil, err
	}
	return all[p], nil
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
