package outbox

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A task's delivery index (written by the commit when the task retention is
// shorter than the records': its event stream may expire before them)
// outlives its newest notification by at least the retention, and is not
// renewed at every commit: only once less than a retention of it is left.
func TestDeliveryIndexOutlivesTheRetentionRenewedOnlyWhenShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: time.Hour, TaskRetention: time.Minute})
	cfg := map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}
	index := s.k.TaskDeliveries("t")
	deadline := func() int64 {
		t.Helper()
		v, err := rdb.HGet(ctx, s.k.Task("t").Hash, "dx").Result()
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
	if err := rdb.HSet(ctx, s.k.Task("t").Hash, "dx", short.UnixMilli()).Err(); err != nil {
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

// A task that commits for ever keeps its delivery index alive for ever:
// the members older than 1.5 retentions, whose records have expired (half
// a retention spares clocks that differ), are cut when the index is
// renewed, so that it holds about two retentions of them. On both
// delivery paths (with a task retention shorter than the records', which
// has the commit write the index).
func TestDeliveryIndexOfATaskThatNeverEndsIsCutToTheRetention(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[outbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb, prefix := redistest.New(t)
			keep := time.Hour
			s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: keep, TaskRetention: keep / 2,
				Outbox: outbox})
			index := s.k.TaskDeliveries("t")
			commitN(t, s, "t", 1, 3, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
			old, err := rdb.ZRange(ctx, index, 0, -1).Result()
			if err != nil || len(old) != 3 {
				t.Fatalf("index %v (%v)", old, err)
			}
			// The task commits on, 1.5 retentions and more later (as the
			// relay's clock has it): the index is renewed, and its
			// members from before that are cut.
			later := time.Now().Add(keep + keep/2 + time.Minute)
			c := taskstore.Commit{TaskID: "t", Version: 3, Snapshot: []byte("v4"), UpdatedAt: later, Events: [][]byte{[]byte("e4")}, Deliver: []bool{true}}
			if _, err := s.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			now, err := rdb.ZRange(ctx, index, 0, -1).Result()
			if err != nil || len(now) != 1 || slices.Contains(old, now[0]) {
				t.Fatalf("index after the renewal %v (%v), want only the new notification", now, err)
			}
		})
	}
}
