package queue

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// A task's delivery index outlives its newest notification by at least the
// retention, and is not renewed at every commit: only once less than a
// retention of it is left.
func TestDeliveryIndexOutlivesTheRetentionRenewedOnlyWhenShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := NewStore(rdb, Config{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: time.Hour})
	cfg := map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}
	index := s.k.taskDeliveries("t")
	deadline := func() int64 {
		t.Helper()
		v, err := rdb.HGet(ctx, s.k.task("t").hash, "dx").Result()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	ttl := func() time.Duration {
		t.Helper()
		d, err := rdb.PTTL(ctx, index).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	commitN(t, s, "t", 1, 1, cfg)
	first := deadline()
	if d := ttl(); d < 89*time.Minute || d > 90*time.Minute {
		t.Fatalf("index expires in %s, want 1.5 retentions (90m)", d)
	}
	commitN(t, s, "t", 2, 3, cfg)
	if got := deadline(); got != first {
		t.Fatalf("index deadline moved from %d to %d: renewed while more than a retention was left", first, got)
	}

	// Less than a retention left (as 40 minutes later): the next commit renews it.
	short := time.Now().Add(50 * time.Minute)
	if err := rdb.PExpireAt(ctx, index, short).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, s.k.task("t").hash, "dx", short.UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "t", 5, 1, cfg)
	if d := ttl(); d < 89*time.Minute {
		t.Fatalf("index expires in %s after a commit with 50m left, want renewed to 90m", d)
	}
	if r, err := s.Load(ctx, "t"); err != nil || r.Fields["dx"] != "" {
		t.Fatalf("Load = %+v, %v: the index deadline must not show as a task field", r.Fields, err)
	}
}
