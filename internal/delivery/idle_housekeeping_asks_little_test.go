package delivery

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

// trimQueue counts the housekeeping calls of a leader.
type trimQueue struct {
	Queue
	trimmed []int
}

func (q *trimQueue) Partitions() int { return 4 }
func (q *trimQueue) Lead(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (q *trimQueue) TrimAcked(_ context.Context, p int) error {
	q.trimmed = append(q.trimmed, p)
	return nil
}

// The housekeeping leader trims a partition's delivery stream at a pass
// only after this instance finished a token there, and every partition
// every 10th pass (for tokens other instances finished): an idle relay does
// not ask Redis about every partition every second.
func TestIdleHousekeepingTrimsOnlyWhereTokensWereFinished(t *testing.T) {
	t.Parallel()
	q := &trimQueue{}
	w := &Workers{q: q, leader: q, log: slog.New(slog.NewTextHandler(io.Discard, nil)), acked: make([]atomic.Bool, 4),
		now: func() time.Time { return time.Unix(1, 0) }} // not a whole minute: no pruning
	pass := func() []int {
		q.trimmed = nil
		w.trim(context.Background())
		return q.trimmed
	}
	if got := pass(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("first pass trimmed %v, want every partition", got)
	}
	if got := pass(); len(got) != 0 {
		t.Fatalf("an idle pass trimmed %v, want none", got)
	}
	w.acked[2].Store(true)
	if got := pass(); !slices.Equal(got, []int{2}) {
		t.Fatalf("after a token finished in partition 2 the pass trimmed %v, want [2]", got)
	}
	for range 7 {
		if got := pass(); len(got) != 0 {
			t.Fatalf("an idle pass trimmed %v, want none", got)
		}
	}
	if got := pass(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("the 11th pass trimmed %v, want every partition", got)
	}
}

// A token finished here marks its partition for the next trim.
func TestFinishedTokenMarksItsPartitionForTrimming(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, 1, "trimmed", &idRecorder{})
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{})
	if w.acked[0].Load() {
		t.Fatal("a partition is marked before any token was finished")
	}
	fx.drain(t, w) // the task's first notification
	if !w.acked[0].Load() {
		t.Fatal("the partition of a finished token is not marked for trimming")
	}
}
