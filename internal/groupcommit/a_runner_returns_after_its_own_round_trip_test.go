package groupcommit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A runner returns to its caller once its own commands have run, while
// another runner is left to send what others queued meanwhile: a caller
// does not wait for other callers' round trips.
func TestACallerReturnsOnceItsCommandsRan(t *testing.T) {
	rdb, prefix := redistest.New(t)
	b := &Batcher{rdb: rdb, maxRunners: 2, maxBatch: 128}
	ctx := context.Background()

	// A and B become the two runners; each holds its pipeline open (in its
	// add) until released.
	holdA, holdB := make(chan struct{}), make(chan struct{})
	inA, inB := make(chan struct{}), make(chan struct{})
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(doneA)
		b.Do(func(p redis.Pipeliner) { close(inA); <-holdA; p.Set(ctx, prefix+"a", "a", 0) })
	}()
	<-inA
	go func() {
		defer close(doneB)
		b.Do(func(p redis.Pipeliner) { close(inB); <-holdB; p.Set(ctx, prefix+"b", "b", 0) })
	}()
	<-inB

	// C finds two runners and queues.
	added := make(chan string, 1)
	doneC := make(chan struct{})
	go func() {
		defer close(doneC)
		b.Do(func(p redis.Pipeliner) { added <- "c"; p.Set(ctx, prefix+"c", "c", 0) })
	}()
	for queued := 0; queued == 0; {
		b.mu.Lock()
		queued = len(b.pending)
		b.mu.Unlock()
	}

	// A's round trip ends: A returns, and leaves C to B, the runner still
	// in flight.
	close(holdA)
	<-doneA
	select {
	case who := <-added:
		t.Fatalf("A's caller waited for %s's round trip", who)
	default:
	}
	close(holdB)
	<-doneB
	select {
	case <-doneC:
	case <-time.After(10 * time.Second): // (liveness, not speed)
		t.Fatal("C's command was left queued with no runner")
	}
	if got := rdb.Get(ctx, prefix+"c").Val(); got != "c" {
		t.Fatalf("C's command did not run: %q", got)
	}
}

// The last runner sends what is queued before it returns: a command
// queued while every runner is in flight runs, however the runners finish.
func TestTheLastRunnerSendsWhatIsQueued(t *testing.T) {
	rdb, prefix := redistest.New(t)
	b := &Batcher{rdb: rdb, maxRunners: 1, maxBatch: 128}
	ctx := context.Background()
	hold, in, doneA := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(doneA)
		b.Do(func(p redis.Pipeliner) { close(in); <-hold; p.Set(ctx, prefix+"a", "a", 0) })
	}()
	<-in
	doneC := make(chan struct{})
	go func() {
		defer close(doneC)
		b.Do(func(p redis.Pipeliner) { p.Set(ctx, prefix+"c", "c", 0) })
	}()
	for queued := 0; queued == 0; {
		b.mu.Lock()
		queued = len(b.pending)
		b.mu.Unlock()
	}
	close(hold)
	<-doneA
	select {
	case <-doneC:
	case <-time.After(10 * time.Second): // (liveness, not speed: without a runner C never runs)
		t.Fatal("C's command was left queued with no runner")
	}
	if got := rdb.Get(ctx, prefix+"c").Val(); got != "c" {
		t.Fatalf("C's command did not run: %q", got)
	}
}
