package taskstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A commit counts in its owner's usage what it stores: the snapshot's
// growth (not the whole snapshot again), its events, push configs and
// fields, and NotificationBytes per notification; other owners' usage is
// untouched.
func TestUsageCountsWhatCommitsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t, 4)
	now := time.Now()
	snap := []byte(strings.Repeat("s", 1000))
	cfg := map[string][]byte{"c1": []byte(`{"url":"https://hooks.example.test/h"}`)}
	fields := map[string]string{"owner": "alice"}
	c := Commit{TaskID: "t1", Snapshot: snap, Events: [][]byte{[]byte(strings.Repeat("e", 300))}, Deliver: []bool{true},
		PushConfigs: cfg, Fields: fields, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	want := int64(1000 + 300 + len("c1") + len(cfg["c1"]) + len("owner") + len("alice") + NotificationBytes)
	if u, err := s.Usage(ctx, "alice", now); err != nil || u.Bytes != want || u.Tasks != 1 {
		t.Fatalf("after creating: usage %+v, %v; want %d bytes, 1 task", u, err, want)
	}
	// The next version: the snapshot grows by 200 bytes, one event of 50.
	next := Commit{TaskID: "t1", Version: 1, Snapshot: []byte(strings.Repeat("s", 1200)), PrevSnapshotLen: 1000,
		Events: [][]byte{[]byte(strings.Repeat("e", 50))}, Deliver: []bool{false}, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, next); err != nil {
		t.Fatal(err)
	}
	want += 200 + 50
	// A snapshot that shrinks is not subtracted.
	shrink := Commit{TaskID: "t1", Version: 2, Snapshot: []byte("s"), PrevSnapshotLen: 1200, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, shrink); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.Usage(ctx, "alice", now); u.Bytes != want {
		t.Fatalf("after two more versions: %d bytes, want %d", u.Bytes, want)
	}
	if err := s.SetPushConfig(ctx, "alice", "t1", "c2", []byte("config-2"), "", 16); err != nil {
		t.Fatal(err)
	}
	want += int64(len("c2") + len("config-2"))
	if u, _ := s.Usage(ctx, "alice", now); u.Bytes != want {
		t.Fatalf("after a push config: %d bytes, want %d", u.Bytes, want)
	}
	if u, _ := s.Usage(ctx, "bob", now); u.Bytes != 0 || u.Tasks != 0 {
		t.Fatalf("bob's usage %+v, want none", u)
	}
}

// The bound: while a task lives, its bytes stay counted, however long it
// ran before it finished; once it has expired, its usage is forgotten.
// (A window of 400ms, so buckets of 100ms; the task runs across several
// buckets and expires a window after its last commit.)
func TestUsageCountsATaskUntilItExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := newStoreRedis(t)
	const window = 400 * time.Millisecond
	s := storeOn(rdb, prefix, 2, Config{UsageWindow: window})
	total := int64(0)
	commit := func(v int64, size int, expire time.Duration) {
		t.Helper()
		c := Commit{TaskID: "long", Version: v, Snapshot: []byte(strings.Repeat("s", size)), PrevSnapshotLen: int(v) * 100,
			UpdatedAt: time.Now(), Owner: "alice", ExpireAfter: expire}
		if v == 0 {
			c.PrevSnapshotLen = 0
		}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		total += int64(size - c.PrevSnapshotLen)
	}
	for v := range int64(6) { // six versions, 120ms apart: across six buckets, longer than a window
		commit(v, int(v+1)*100, 0)
		time.Sleep(120 * time.Millisecond)
	}
	commit(6, 700, window) // finished: it expires a window from now
	for lives := time.Now().Add(2*window + time.Second); ; {
		if time.Now().After(lives) {
			t.Fatalf("the finished task still lives %s after its last commit", 2*window+time.Second)
		}
		// Usage first: read after the task, it could see counters that
		// expired after the task did.
		u, err := s.Usage(ctx, "alice", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		alive, err := rdb.Exists(ctx, s.k.Task("long").Hash).Result()
		if err != nil {
			t.Fatal(err)
		}
		if alive == 0 {
			break
		}
		if u.Bytes < total {
			t.Fatalf("usage %d bytes while the task of %d bytes lives", u.Bytes, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(2 * window)
	for {
		u, _ := s.Usage(ctx, "alice", time.Now())
		if u.Bytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage %d bytes %v after the task expired, want none", u.Bytes, 2*window)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Its index entry outlives it until PruneIndex drops it.
	if u, _ := s.Usage(ctx, "alice", time.Now()); u.Tasks != 1 {
		t.Fatalf("index lists %d tasks, want the expired one still", u.Tasks)
	}
	if n, err := s.PruneIndex(ctx, "alice", time.Now().Add(-window)); err != nil || n != 1 {
		t.Fatalf("PruneIndex dropped %d, %v; want 1", n, err)
	}
	if u, _ := s.Usage(ctx, "alice", time.Now()); u.Tasks != 0 {
		t.Fatalf("index lists %d tasks after pruning, want 0", u.Tasks)
	}
}

// newStoreRedis is the test's Redis and key prefix, for a store of its own
// configuration.
func newStoreRedis(t *testing.T) (redis.UniversalClient, string) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	return rdb, strings.TrimSuffix(prefix, ":")
}
