package quota

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// counted is a task store on real Redis that counts what the quota asks of
// it (the reads and prunes are what the tests look at; the figures are the
// store's own).
type counted struct {
	*taskstore.Store
	rdb           redis.UniversalClient
	mu            sync.Mutex
	reads, prunes int
}

func (c *counted) Usage(ctx context.Context, owner string, now time.Time) (taskstore.Usage, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Store.Usage(ctx, owner, now)
}

func (c *counted) PruneIndex(ctx context.Context, owner string, idle time.Time) (int, error) {
	c.mu.Lock()
	c.prunes++
	c.mu.Unlock()
	return c.Store.PruneIndex(ctx, owner, idle)
}

// newStore is a task store of the test's own on real Redis.
func newStore(t *testing.T) *counted {
	t.Helper()
	rdb, prefix := redistest.New(t)
	return &counted{Store: must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: layout.New(strings.TrimSuffix(prefix, ":"), 4), Batch: groupcommit.New(rdb)}, taskstore.Config{})), rdb: rdb}
}

// put commits a task of owner whose snapshot takes size bytes, last
// updated at.
func put(t *testing.T, s *counted, owner, id string, size int, at time.Time) {
	t.Helper()
	c := taskstore.Commit{TaskID: id, Snapshot: []byte(strings.Repeat("s", size)), UpdatedAt: at, Owner: owner}
	if _, err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

func wantQuota(t *testing.T, err error, limit string, max int64) {
	t.Helper()
	var qe *a2a.QuotaError
	if !errors.As(err, &qe) || qe.Limit != limit || qe.Max != max {
		t.Fatalf("err %v, want a QuotaError on %s (max %d)", err, limit, max)
	}
}

// Usage is read from Redis once per refresh per client; in between, what
// this instance admits is added to it, and what others store is not seen;
// past a budget a request is refused, and another client is not.
func TestBudgetsAreReadOnceARefreshAndRefusePastThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	s := newStore(t)
	put(t, s, "alice", "a1", 900, now)
	u, err := s.Store.Usage(ctx, "alice", now)
	if err != nil || u.Bytes < 900 || u.Tasks != 1 {
		t.Fatalf("alice's usage %+v, %v; want her task's 900 bytes and more", u, err)
	}
	budget := u.Bytes + 100
	q := New(s, Config{MaxBytes: budget, MaxTasks: 10, Now: func() time.Time { return now }})
	if err := q.Admit(ctx, "alice", 60, false); err != nil {
		t.Fatal(err)
	}
	wantQuota(t, q.Admit(ctx, "alice", 60, false), a2a.QuotaStorageBytes, budget) // 60 + 60 > 100 left
	if err := q.Admit(ctx, "bob", budget, true); err != nil {
		t.Fatalf("bob, up to his budget: %v", err)
	}
	// Another instance stores a task of alice's: not seen before the refresh.
	put(t, s, "alice", "a2", 500, now)
	if err := q.Admit(ctx, "alice", 10, false); err != nil {
		t.Fatalf("within the refresh: %v", err)
	}
	if s.reads != 2 {
		t.Fatalf("%d reads, want 2 (alice once, bob once)", s.reads)
	}
	now = now.Add(time.Second)
	wantQuota(t, q.Admit(ctx, "alice", 10, false), a2a.QuotaStorageBytes, budget)
	if s.reads != 3 {
		t.Fatalf("%d reads after the refresh, want 3", s.reads)
	}
}

// At its tasks budget, a client's index is pruned of expired tasks before a
// new task is refused (once a refresh); a message to a task it has is
// never refused for it.
func TestTasksBudgetPrunesExpiredTasksBeforeRefusing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	s := newStore(t)
	for _, id := range []string{"a1", "a2", "a3"} {
		put(t, s, "alice", id, 10, now.Add(-2*time.Hour))
	}
	// One of them expires (its keys go; its index entry stays).
	if err := s.rdb.Del(ctx, s.TaskKeys("a2")...).Err(); err != nil {
		t.Fatal(err)
	}
	q := New(s, Config{MaxTasks: 3, Idle: time.Hour, Now: func() time.Time { return now }})
	if err := q.Admit(ctx, "alice", 10, true); err != nil {
		t.Fatalf("with an expired task in the index: %v", err)
	}
	if s.prunes != 1 {
		t.Fatalf("%d prunes, want 1", s.prunes)
	}
	if u, _ := s.Store.Usage(ctx, "alice", now); u.Tasks != 2 {
		t.Fatalf("index lists %d tasks after the prune, want the 2 alive", u.Tasks)
	}
	wantQuota(t, q.Admit(ctx, "alice", 10, true), a2a.QuotaTasks, 3)
	if err := q.Admit(ctx, "alice", 10, false); err != nil {
		t.Fatalf("a message to a task alice has: %v", err)
	}
	if s.prunes != 1 {
		t.Fatalf("%d prunes within one refresh, want 1", s.prunes)
	}
}

// Zero budgets admit everything without reading Redis.
func TestNoBudgetReadsNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	q := New(s, Config{})
	if err := q.Admit(context.Background(), "alice", 1<<40, true); err != nil || s.reads != 0 {
		t.Fatalf("err %v, %d reads; want none", err, s.reads)
	}
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
