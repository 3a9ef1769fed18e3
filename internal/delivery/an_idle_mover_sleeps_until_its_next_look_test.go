package delivery

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/cadence"
)

// Between passes the mover sleeps until the earliest partition's next
// look, on the grid of MoveEvery, instead of waking every MoveEvery: an
// idle relay's mover wakes once per recheck. A retry scheduled before that
// wakes it (and is looked for when due, within MoveEvery).
func TestAnIdleMoverSleepsUntilItsNextLook(t *testing.T) {
	t.Parallel()
	q := &countingQueue{calls: map[int]int{}, due: map[int]time.Time{}}
	const every = 100 * time.Millisecond
	m := newMover(q, 50*every, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	m.pass(ctx, t0) // every partition looked at: the next looks are a recheck away
	next := m.nextLook(t0, every)
	if want := cadence.Next(t0.Add(50*every), every); !next.Equal(want) {
		t.Fatalf("an idle mover wakes next at %v, want a recheck later, %v", next.Sub(t0), want.Sub(t0))
	}
	due := t0.Add(50*every + 1234*time.Millisecond)
	q.due[3] = due // the next look at partition 3 sees a retry due then
	m.pass(ctx, t0.Add(50*every))
	if got := m.nextLook(t0.Add(50*every), every); got.Before(due) || got.Sub(due) >= every {
		t.Fatalf("with a retry due at %v the mover wakes at %v, want within %v after it", due.Sub(t0), got.Sub(t0), every)
	}

	// A retry scheduled here before the sleeping mover's wake tells it.
	m.mu.Lock()
	m.wake = t0.Add(10 * time.Second)
	m.mu.Unlock()
	m.scheduled(1, t0.Add(7*time.Second))
	select {
	case <-m.sooner:
	default:
		t.Fatal("a retry scheduled before the mover's wake did not wake it")
	}
	m.scheduled(2, t0.Add(11*time.Second)) // (after it: no need)
	select {
	case <-m.sooner:
		t.Fatal("a retry scheduled after the mover's wake woke it")
	default:
	}
}
