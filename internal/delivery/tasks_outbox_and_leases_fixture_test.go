package delivery

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/leader"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/taskstore"
)

// tasks is the task store, embedded in testStore under this name.
type tasks = taskstore.Store

// testStore is what the app hands the workers, over one Redis: the outbox's parts
// (consumed through a Consumer, Deps.Queue: see consumer), the task store
// (Deps.Tasks) and the leader leases (Deps.Leader). Tests pass it, or a
// wrapper of it that overrides a method, as the last two.
type testStore struct {
	*outbox.Outboxes
	*outbox.Lanes
	*outbox.Owners
	*outbox.Stats
	*outbox.Records
	*tasks
	*leader.Leases
	// hosts are the task store's host validations (ValidatorDeps.Store).
	hosts *taskstore.HostValidations
	// compaction is the task store's compaction (CompactorDeps.Store).
	compaction *taskstore.Compaction
	// urls is the task store's URL index (CommitterDeps.URLs).
	urls *taskstore.URLIndex
	// turns is the task store's turn bookkeeping (CommitterDeps.Turns).
	turns *taskstore.Turns
}

// Partitions is the partition count the outbox and the task store share.
func (s *testStore) Partitions() int { return s.tasks.Partitions() }

// storeConfig configures a testStore's outbox and task store alike.
type storeConfig struct {
	Prefix            string
	Partitions        int
	EventsMaxLen      int
	DeliveryRetention time.Duration
	Outbox            bool
}

func newTestStore(rdb redis.UniversalClient, c storeConfig) *testStore {
	k := layout.New(c.Prefix, c.Partitions)
	b := groupcommit.New(rdb)
	// The outbox's parts, as the app builds them.
	parts, cfg := outbox.Deps{RDB: rdb, Keys: k, Batch: b}, outbox.Config{DeliveryRetention: c.DeliveryRetention, Outbox: c.Outbox}
	return &testStore{
		Outboxes: must(outbox.NewOutboxes(parts, cfg)),
		Lanes:    must(outbox.NewLanes(parts, cfg)),
		Owners:   must(outbox.NewOwners(parts)),
		Stats:    must(outbox.NewStats(parts)),
		Records:  must(outbox.NewRecords(parts, cfg)),
		tasks: must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: b}, taskstore.Config{EventsMaxLen: c.EventsMaxLen,
			DeliveryRetention: c.DeliveryRetention, Outbox: c.Outbox})),
		Leases: leader.New(rdb, k),
		hosts:  must(taskstore.NewHostValidations(taskstore.Deps{RDB: rdb, Keys: k, Batch: b})),
		urls:   must(taskstore.NewURLIndex(taskstore.Deps{RDB: rdb, Keys: k, Batch: b}, taskstore.URLIndexConfig{})),
		compaction: must(taskstore.NewCompaction(taskstore.Deps{RDB: rdb, Keys: k, Batch: b},
			taskstore.CompactionConfig{EventsMaxLen: c.EventsMaxLen, DeliveryRetention: c.DeliveryRetention})),
	}
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// consumer returns a new relay's consumer of the store's outbox (what
// Deps.Queue takes), with cfg's lease timing under a name of its own.
// Tests that inject faults into the outbox wrap it.
func (s *testStore) consumer(t testing.TB, cfg outbox.ConsumerConfig) *outbox.Consumer {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "relay-" + uuid.NewString()
	}
	c, err := outbox.NewConsumer(outbox.ConsumerDeps{Outboxes: s.Outboxes, Lanes: s.Lanes, Owners: s.Owners, Stats: s.Stats, Records: s.Records}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
