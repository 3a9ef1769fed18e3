package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// moveBatch is the most retries one call moves back per partition.
const moveBatch = 256

// mover puts due retries back onto the delivery streams. It asks Redis
// about a partition only when a retry there is due as far as it knows
// (one this instance scheduled, or the earliest one the last look saw), and
// otherwise once per recheck, for retries that other instances scheduled
// and left behind: an idle relay makes one call per partition per recheck,
// not one per tick.
type mover struct {
	q       Queue
	recheck time.Duration
	log     *slog.Logger
	mu      sync.Mutex
	next    []time.Time // per partition: when to look next
}

func newMover(q Queue, recheck time.Duration, log *slog.Logger) *mover {
	return &mover{q: q, recheck: recheck, log: log, next: make([]time.Time, q.Partitions())}
}

// scheduled tells the mover of a retry of partition p due at due.
func (m *mover) scheduled(p int, due time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p < len(m.next) && due.Before(m.next[p]) {
		m.next[p] = due
	}
}

// pass moves the due retries of every partition that may have some.
func (m *mover) pass(ctx context.Context, now time.Time) {
	for p := range m.next {
		m.mu.Lock()
		if now.Before(m.next[p]) {
			m.mu.Unlock()
			continue
		}
		m.next[p] = now.Add(m.recheck) // a retry scheduled during the call lowers it again
		m.mu.Unlock()
		n, due, err := m.q.MoveDue(ctx, p, now, moveBatch)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				m.log.WarnContext(ctx, "moving due retries", "partition", p, "err", err)
			}
			due = now // look again on the next tick
		case n == moveBatch:
			due = now // more are due
		}
		if !due.IsZero() {
			m.scheduled(p, due)
		}
	}
}
