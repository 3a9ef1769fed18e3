package delivery

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

type statsQueue struct {
	Queue
	fail  bool
	added []outbox.Stat
}

func (q *statsQueue) AddStats(_ context.Context, s []outbox.Stat) error {
	if q.fail {
		return errors.New("redis down")
	}
	q.added = append(q.added, s...)
	return nil
}

// Outcomes are counted per partition and minute in memory, and a count
// Redis did not take is kept for the next flush.
func TestTallyCountsUntilRedisTakesThem(t *testing.T) {
	t.Parallel()
	q := &statsQueue{fail: true}
	w := &Workers{q: q, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	at := time.Unix(600, 0)
	for _, o := range []outbox.Outcome{outbox.Delivered, outbox.Delivered, outbox.Retry, outbox.Skip, outbox.Drop} {
		w.tally.add(2, at, o)
	}
	w.flushStats(context.Background())
	q.fail = false
	w.tally.add(2, at, outbox.Delivered)
	w.flushStats(context.Background())
	got := map[string]int64{}
	for _, s := range q.added {
		if s.Partition != 2 || !s.Minute.Equal(at) {
			t.Fatalf("stat %+v", s)
		}
		got[s.Outcome] += s.N
	}
	if len(got) != 2 || got["delivered"] != 3 || got["failed"] != 1 {
		t.Fatalf("added %v, want 3 delivered and 1 failed (skips and drops are not counted)", got)
	}
	w.flushStats(context.Background())
	if len(q.added) != 2 {
		t.Fatalf("a flush with nothing counted added %v", q.added[2:])
	}
}
