package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// PruneConsumers removes idle consumers that hold nothing, and only those.
func TestPruneConsumers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	key := s.k.Deliveries(0)
	for _, c := range []string{"gone", "busy"} {
		if err := rdb.XGroupCreateConsumer(ctx, key, layout.Group, c).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"t", "x", "c", "y", "a", 1, "f", 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadTokens(ctx, 0, "busy", 1, 0); err != nil { // "busy" now holds a pending token
		t.Fatal(err)
	}
	n, err := s.PruneConsumers(ctx, 0, -1) // any idle time counts
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, err %v; want 1 (the idle consumer without pending entries)", n, err)
	}
	cs, _ := rdb.XInfoConsumers(ctx, key, group).Result()
	if len(cs) != 1 || cs[0].Name != "busy" {
		t.Fatalf("consumers left: %+v", cs)
	}
}
