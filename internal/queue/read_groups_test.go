package queue

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// One read takes the tokens of every partition of a group, each token
// with its own partition; on a single Redis the group is every partition,
// on a Redis Cluster each partition is read alone.
func TestOneReadTakesTokensOfAGroupsPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := NewStore(rdb, Config{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 4})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	groups := s.ReadGroups()
	if _, cluster := rdb.(*redis.ClusterClient); cluster {
		if len(groups) != 4 {
			t.Fatalf("groups on a cluster = %v, want each partition alone", groups)
		}
	} else if len(groups) != 1 || !slices.Equal(groups[0], []int{0, 1, 2, 3}) {
		t.Fatalf("groups on a single Redis = %v, want one of all partitions", groups)
	}
	cfg := map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}
	want := map[string]int{}
	for i := 0; len(want) < 4; i++ {
		task := "task-" + string(rune('a'+i))
		p := s.k.partition(task)
		if slices.Contains(slices.Collect(maps.Values(want)), p) {
			continue
		}
		want[task] = p
		c := Commit{TaskID: task, Snapshot: []byte(`{}`), UpdatedAt: time.Now(), PushConfigs: cfg,
			Events: [][]byte{[]byte(`{}`)}, Deliver: []bool{true}}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for _, g := range groups {
		ts, err := s.ReadTokensOf(ctx, g, "w1", 4, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) == 1 && len(ts) != 4 {
			t.Fatalf("one read of all partitions took %d tokens, want 4", len(ts))
		}
		for _, tok := range ts {
			got[tok.TaskID] = tok.Partition
		}
	}
	if len(got) != 4 {
		t.Fatalf("tokens read: %v, want one per task of %v", got, want)
	}
	for task, p := range want {
		if got[task] != p {
			t.Errorf("token of %s carries partition %d, want %d", task, got[task], p)
		}
	}
}
