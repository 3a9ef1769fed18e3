package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A commit whose reply was lost is sent again by the client (go-redis
// retries pipelines): the second run must return the first run's ids and
// write nothing, not apply the events twice.
func TestCommitSentTwiceAppliesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := NewStore(rdb, Config{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 2})
	c := Commit{TaskID: "twice", Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"n":1}`)}, UpdatedAt: time.Now()}
	tk := s.k.task(c.TaskID)
	keys := []string{tk.hash, tk.events, tk.index, tk.push}
	args := s.commitArgs(c, "commit-1")
	first, err := s.commit.Run(ctx, rdb, keys, args...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.commit.Run(ctx, rdb, keys, args...).StringSlice()
	if err != nil || len(again) != 1 || again[0] != first[0] {
		t.Fatalf("replay = %v, %v; want the first run's ids %v", again, err, first)
	}
	if n, _ := rdb.XLen(ctx, tk.events).Result(); n != 1 {
		t.Fatalf("events after a replay: %d, want 1", n)
	}
	// Another commit from the same stale version is still a conflict.
	if _, err := s.Commit(ctx, c); !errors.Is(err, ErrConflict) {
		t.Fatalf("a different commit from version 0: err = %v, want ErrConflict", err)
	}
}

func TestExpireRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := NewStore(rdb, Config{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: time.Hour})
	now := time.Now()
	old, fresh := now.Add(-2*time.Hour), now.Add(-time.Minute)
	key := s.k.statusIndex(0, "dead")
	rdb.ZAdd(ctx, key, redis.Z{Score: float64(old.UnixMilli()), Member: "old"}, redis.Z{Score: float64(fresh.UnixMilli()), Member: "fresh"})
	dead := s.k.tag(0) + "dead"
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: dead, ID: "1-1", Values: []any{"n", "old"}})
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: dead, ID: "*", Values: []any{"n", "fresh"}})
	if err := s.ExpireRecords(ctx, 0, now); err != nil {
		t.Fatal(err)
	}
	if m, _ := rdb.ZRange(ctx, key, 0, -1).Result(); len(m) != 1 || m[0] != "fresh" {
		t.Fatalf("status index after expiry: %v", m)
	}
	if n, _ := rdb.XLen(ctx, dead).Result(); n != 1 {
		t.Fatalf("dead letters after expiry: %d, want 1", n)
	}
}

// Begin tells how long a token waited in the stream, on Redis's clock: the
// signal relay's backpressure holds new tasks on.
func TestBeginReportsQueueWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := NewStore(rdb, Config{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	c := Commit{TaskID: "waits", Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"n":1}`)}, Deliver: []bool{true},
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}, UpdatedAt: time.Now()}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the token waits in the stream
	ts, err := s.ReadTokens(ctx, 0, "w1", 1, time.Second)
	if err != nil || len(ts) != 1 {
		t.Fatalf("ReadTokens = %v, %v", ts, err)
	}
	h, status, err := s.Begin(ctx, ts[0], "w1", time.Minute)
	if err != nil || status != Go {
		t.Fatalf("Begin = %v, %v", status, err)
	}
	if h.Waited < 50*time.Millisecond || h.Waited > time.Minute {
		t.Fatalf("Waited = %v, want about 60ms", h.Waited)
	}
}
