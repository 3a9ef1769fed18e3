package quota

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// fakeReader serves usage from a table and counts reads.
type fakeReader struct {
	mu            sync.Mutex
	usage         map[string]taskstore.Usage
	expired       map[string]int64 // index entries PruneIndex finds expired
	reads, prunes int
}

func (f *fakeReader) Usage(_ context.Context, owner string, _ time.Time) (taskstore.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.usage[owner], nil
}

func (f *fakeReader) PruneIndex(_ context.Context, owner string, _ time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prunes++
	n := f.expired[owner]
	u := f.usage[owner]
	u.Tasks -= n
	f.usage[owner] = u
	f.expired[owner] = 0
	return int(n), nil
}

func wantQuota(t *testing.T, err error, limit string, max int64) {
	t.Helper()
	var qe *a2a.QuotaError
	if !errors.As(err, &qe) || qe.Limit != limit || qe.Max != max {
		t.Fatalf("err %v, want a QuotaError on %s (max %d)", err, limit, max)
	}
}

// Usage is read once per refresh per client; in between, what this
// instance admits is added to it; past a budget a request is refused, and
// another client is not.
func TestBudgetsAreReadOnceARefreshAndRefusePastThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(1000, 0)
	r := &fakeReader{usage: map[string]taskstore.Usage{"alice": {Bytes: 900, Tasks: 1}}, expired: map[string]int64{}}
	q := New(r, Config{MaxBytes: 1000, MaxTasks: 10, Now: func() time.Time { return now }})
	if err := q.Admit(ctx, "alice", 60, false); err != nil {
		t.Fatal(err)
	}
	wantQuota(t, q.Admit(ctx, "alice", 60, false), a2a.QuotaStorageBytes, 1000) // 960 + 60 > 1000
	if r.reads != 1 {
		t.Fatalf("%d reads within one refresh, want 1", r.reads)
	}
	if err := q.Admit(ctx, "bob", 1000, true); err != nil {
		t.Fatalf("bob: %v", err)
	}
	r.usage["alice"] = taskstore.Usage{Bytes: 100, Tasks: 1} // tasks expired meanwhile
	now = now.Add(time.Second)
	if err := q.Admit(ctx, "alice", 60, false); err != nil {
		t.Fatalf("after a refresh: %v", err)
	}
	if r.reads != 3 {
		t.Fatalf("%d reads, want 3 (alice twice, bob once)", r.reads)
	}
}

// At its tasks budget, a client's index is pruned of expired tasks before a
// new task is refused; a message to a task it has is never refused for it.
func TestTasksBudgetPrunesExpiredTasksBeforeRefusing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(1000, 0)
	r := &fakeReader{usage: map[string]taskstore.Usage{"alice": {Tasks: 3}}, expired: map[string]int64{"alice": 1}}
	q := New(r, Config{MaxTasks: 3, Now: func() time.Time { return now }})
	if err := q.Admit(ctx, "alice", 10, true); err != nil {
		t.Fatalf("with an expired task in the index: %v", err)
	}
	if r.prunes != 1 {
		t.Fatalf("%d prunes, want 1", r.prunes)
	}
	wantQuota(t, q.Admit(ctx, "alice", 10, true), a2a.QuotaTasks, 3)
	if err := q.Admit(ctx, "alice", 10, false); err != nil {
		t.Fatalf("a message to a task alice has: %v", err)
	}
	if r.prunes != 1 {
		t.Fatalf("%d prunes within one refresh, want 1", r.prunes)
	}
}

// Zero budgets admit everything without reading Redis.
func TestNoBudgetReadsNothing(t *testing.T) {
	t.Parallel()
	r := &fakeReader{}
	q := New(r, Config{})
	if err := q.Admit(context.Background(), "alice", 1<<40, true); err != nil || r.reads != 0 {
		t.Fatalf("err %v, %d reads; want none", err, r.reads)
	}
}
