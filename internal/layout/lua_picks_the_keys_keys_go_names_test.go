package layout

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// The Lua library picks a status index from KEYS by the order in which
// StatusIndexes names them: each indexed status gets its own index, and
// delivered (not indexed) none.
func TestLuaPicksTheStatusIndexKeysGoNames(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := New(strings.TrimSuffix(prefix, ":"), 4)
	pick := Script("return statusIndexes(2)[ARGV[1]]")
	const p = 3
	keys := append([]string{k.Retries(p)}, k.StatusIndexes(p)...)
	for _, st := range IndexedStatuses() {
		got, err := pick.Run(context.Background(), rdb, keys, st).Text()
		if err != nil || got != k.StatusIndex(p, st) {
			t.Errorf("statusIndexes(2)[%q] = %q, %v; want %q", st, got, err, k.StatusIndex(p, st))
		}
	}
	if got, err := pick.Run(context.Background(), rdb, keys, "delivered").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("statusIndexes(2).delivered = %v, %v; want none", got, err)
	}
}

// lib.lua's laneOf, the one Lua spelling of a lane's name, names the lane
// Lane names, from the partition's Lanes and the ids read.
func TestLuaNamesLanesAsGoDoes(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := New(strings.TrimSuffix(prefix, ":"), 4)
	lane := Script("return laneOf(ARGV[1], ARGV[2], ARGV[3])")
	for _, id := range []string{"a", "task-1", "x:y", "{p}", "é"} {
		for _, c := range []string{"c", "a:b"} {
			p := k.Partition(id)
			got, err := lane.Run(context.Background(), rdb, []string{k.Retries(p)}, k.Lanes(p), id, c).Text()
			if err != nil || got != k.Lane(id, c) {
				t.Errorf("laneOf(Lanes(%d), %q, %q) = %q, %v; want Lane %q", p, id, c, got, err, k.Lane(id, c))
			}
		}
	}
}
