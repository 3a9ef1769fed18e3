package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

// counted names the outcomes the per-minute counts keep.
var counted = map[outbox.Outcome]string{outbox.Delivered: "delivered", outbox.Retry: "failed", outbox.Dead: "dead", outbox.Gone: "gone"}

// tally counts outcomes in memory until they are added to Redis
// (outbox.Stats.AddStats), about once a second: the operator's chart costs
// one write per partition and minute, not one per notification. Counts of
// the last second are lost when the process dies.
type tally struct {
	mu     sync.Mutex
	counts map[tallyKey]int64
}

type tallyKey struct {
	partition int
	minute    int64 // unix ms of the minute
	outcome   string
}

func (t *tally) add(partition int, at time.Time, o outbox.Outcome) {
	name, ok := counted[o]
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[tallyKey]int64{}
	}
	t.counts[tallyKey{partition, at.UnixMilli() / 60000 * 60000, name}]++
}

// take returns the counts so far and starts again from zero.
func (t *tally) take() []outbox.Stat {
	t.mu.Lock()
	counts := t.counts
	t.counts = nil
	t.mu.Unlock()
	out := make([]outbox.Stat, 0, len(counts))
	for k, n := range counts {
		out = append(out, outbox.Stat{Partition: k.partition, Minute: time.UnixMilli(k.minute), Outcome: k.outcome, N: n})
	}
	return out
}

// flushStats adds the counted outcomes to Redis; on failure they are kept
// for the next flush.
func (w *Workers) flushStats(ctx context.Context) {
	stats := w.tally.take()
	if err := w.q.AddStats(ctx, stats); err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "adding delivery stats", "err", err)
		}
		w.tally.mu.Lock()
		if w.tally.counts == nil {
			w.tally.counts = map[tallyKey]int64{}
		}
		for _, st := range stats {
			w.tally.counts[tallyKey{st.Partition, st.Minute.UnixMilli(), st.Outcome}] += st.N
		}
		w.tally.mu.Unlock()
	}
}
