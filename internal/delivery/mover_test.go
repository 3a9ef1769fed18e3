package delivery

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// countingQueue counts MoveDue calls per partition and answers with a due
// time set by the test.
type countingQueue struct {
	Queue
	mu    sync.Mutex
	calls map[int]int
	due   map[int]time.Time
}

func (c *countingQueue) Partitions() int { return 4 }

func (c *countingQueue) MoveDue(_ context.Context, p int, _ time.Time, _ int) (int, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[p]++
	return 0, c.due[p], nil
}

// An idle mover asks Redis once per recheck, not once per tick; a retry
// scheduled here, or one the last look saw, is looked for when it is due.
func TestMoverAsksOnlyWhenSomethingMayBeDue(t *testing.T) {
	t.Parallel()
	q := &countingQueue{calls: map[int]int{}, due: map[int]time.Time{}}
	m := newMover(q, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	for tick := range 10 { // one second of 100 ms ticks
		m.pass(ctx, t0.Add(time.Duration(tick)*100*time.Millisecond))
	}
	for p := range 4 {
		if q.calls[p] != 1 {
			t.Fatalf("idle partition %d asked %d times in a second, want 1", p, q.calls[p])
		}
	}
	q.due[0] = t0.Add(1300 * time.Millisecond) // partition 0's look at 1s sees a retry due at 1.3s
	m.pass(ctx, t0.Add(time.Second))
	m.scheduled(2, t0.Add(1500*time.Millisecond)) // a worker here schedules one
	delete(q.due, 0)
	m.pass(ctx, t0.Add(1200*time.Millisecond))
	m.pass(ctx, t0.Add(1300*time.Millisecond))
	m.pass(ctx, t0.Add(1500*time.Millisecond))
	want := map[int]int{0: 3, 1: 2, 2: 3, 3: 2}
	for p, n := range want {
		if q.calls[p] != n {
			t.Fatalf("calls per partition %v, want %v", q.calls, want)
		}
	}
}
