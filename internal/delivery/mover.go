package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/cadence"
)

// moveBatch is the most retries one call moves back per partition.
const moveBatch = 256

// mover puts due retries back onto the delivery streams. It asks Redis
// about a partition only when a retry there is due as far as it knows
// (one this instance scheduled, or the earliest one the last look saw), and
// otherwise once per recheck, for retries that other instances scheduled
// and left behind: an idle relay makes one call per partition per recheck,
// not one per tick.
//
// Between passes it sleeps until the earliest partition's next look (run),
// not tick by tick: a retry scheduled sooner wakes it.
type mover struct {
	q       Queue
	recheck time.Duration
	log     *slog.Logger
	mu      sync.Mutex
	next    []time.Time // per partition: when to look next
	// wake is when the run's next pass is due (zero before its first; while
	// a pass runs, the time of that pass, so that no retry scheduled during
	// it signals: the sleep after it is worked out from next). sooner tells
	// the sleeping run of a look due before wake.
	wake   time.Time
	sooner chan struct{}
}

func newMover(q Queue, recheck time.Duration, log *slog.Logger) *mover {
	return &mover{q: q, recheck: recheck, log: log, next: make([]time.Time, q.Partitions()), sooner: make(chan struct{}, 1)}
}

// scheduled tells the mover of a retry of partition p due at due.
func (m *mover) scheduled(p int, due time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p < len(m.next) && due.Before(m.next[p]) {
		m.next[p] = due
		if !m.wake.IsZero() && due.Before(m.wake) {
			select {
			case m.sooner <- struct{}{}:
			default:
			}
		}
	}
}

// run makes passes until ctx ends, each at the first point of the grid of
// every (internal/cadence) at or after the earliest partition's next
// look: a retry goes back within every of its due time, and an idle relay
// wakes once per recheck, not once per every.
func (m *mover) run(ctx context.Context, now func() time.Time, every time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.sooner:
		}
		m.pass(ctx, now())
		at := now()
		m.mu.Lock()
		m.wake = m.nextLook(at, every)
		m.mu.Unlock()
		t.Reset(m.wake.Sub(at))
	}
}

// nextLook is when the next pass is due, after a pass at now (m.mu held):
// the earliest partition's next look, put on the grid of every and no
// sooner than a grid point after now.
func (m *mover) nextLook(now time.Time, every time.Duration) time.Time {
	first := now.Add(m.recheck)
	for _, n := range m.next {
		if n.Before(first) {
			first = n
		}
	}
	return cadence.Next(maxTime(first, now.Add(time.Millisecond)), every)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
