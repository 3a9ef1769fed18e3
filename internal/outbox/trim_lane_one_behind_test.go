package outbox

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// A webhook that keeps up but is always one notification behind (its POST
// of version v-1 is in flight while version v commits: a streaming agent
// whose events come faster than one round trip) needs only the newest
// entries of the stream: compaction still cuts the stream back, and a fold
// starts at the checkpoint, not at the creation. (Review: the first
// version moved its checkpoint only when no lane waited on an older entry,
// so this stream was never trimmed.)
func TestTrimBoundedWhenLaneIsAlwaysOneBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 20})
	lane := s.k.Lane("busy", "hook")
	var ids []string
	for v := 1; v <= 200; v++ {
		var push map[string][]byte
		if v == 1 {
			push = map[string][]byte{"hook": []byte(`{}`)}
		}
		ids = append(ids, commitN(t, s, "busy", v, 1, push)...)
		if v%10 == 0 {
			compact(t, s, "busy") // the compactor runs every second
		}
		// The webhook finished everything but the newest notification.
		for {
			n, err := rdb.LLen(ctx, lane).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n <= 1 {
				break
			}
			if err := rdb.LPop(ctx, lane).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := rdb.XLen(ctx, s.EventsKey("busy")).Result()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := rdb.HGetAll(ctx, s.k.Task("busy").Base).Result()
	if n > 20+16+8+8 {
		t.Fatalf("stream of %d entries (max length 20) while the lane refers to its newest %d only; checkpoint %v",
			n, 1, base)
	}
	// And the fold of the version the webhook was just sent (199) starts
	// near it, not at the creation.
	at, err := s.TaskAt(ctx, "busy", ids[198], 199)
	if err != nil {
		t.Fatal(err)
	}
	if len(at.Events) > 20+16+8+8 {
		t.Fatalf("TaskAt(199) folds %d events, from %s", len(at.Events), strconv.Quote(string(at.Events[0])))
	}
}
