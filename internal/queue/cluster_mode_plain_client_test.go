package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A plain client (redis://, no +cluster) on a Redis in cluster mode that
// holds every slot: its partitions' streams live in different slots, so
// each is read alone, and reading works.
func TestPlainClientOnClusterModeRedisReadsEachPartitionAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, _ := rdb.ClusterInfo(ctx).Result()
		if strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster never came up: %s", info)
		}
	}
	s := NewStore(rdb, Config{Prefix: "relay", Partitions: 4})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	groups := s.ReadGroups()
	if len(groups) != 4 {
		t.Fatalf("ReadGroups = %v, want each partition alone", groups)
	}
	for _, g := range groups {
		if _, err := s.ReadTokensOf(ctx, g, "w1", 4, 10*time.Millisecond); err != nil {
			t.Fatalf("reading %v: %v", g, err)
		}
	}
}
