package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

func TestExpireRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: time.Hour})
	now := time.Now()
	old, fresh := now.Add(-2*time.Hour), now.Add(-time.Minute)
	key := s.k.StatusIndex(0, "dead")
	rdb.ZAdd(ctx, key, redis.Z{Score: float64(old.UnixMilli()), Member: "old"}, redis.Z{Score: float64(fresh.UnixMilli()), Member: "fresh"})
	dead := s.k.Tag(0) + "dead"
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
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	c := taskstore.Commit{TaskID: "waits", Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{"n":1}`)}, Deliver: []bool{true},
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
