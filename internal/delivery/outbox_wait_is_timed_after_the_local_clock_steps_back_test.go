package delivery

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/backpressure"
	"github.com/a2arelay/relay/internal/outbox"
)

// The owner decides whether to read Redis's clock again by comparing the
// local wall clock with when it last did (redisClockAt). When the local
// clock steps back (NTP, a VM restored), that difference stays negative
// for as long as the step: Redis's clock is not read again, and the waits
// computed from the stale offset are off by the step, so backpressure no
// longer sees the outbox's wait. (Before, every load read TIME.)
func TestOutboxWaitIsTimedAfterTheLocalClockStepsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &countingHook{status: http.StatusOK}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "stepped", hook)
	q := &clockAhead{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{}), ahead: time.Minute}
	pressure, err := backpressure.New(backpressure.Deps{}, backpressure.Config{Target: time.Hour, MaxHold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := mustNew(t, fx.deps(q, func(d *Deps) { d.Pressure = pressure }), Config{Outbox: true})
	var back atomic.Int64
	w.now = func() time.Time { return time.Now().Add(-time.Duration(back.Load())) }
	stop := runWorkers(w)
	defer stop()
	posted := int32(1) // the creation's
	post := func(n int) {
		for range n {
			ev := a2a.Event{Kind: a2a.EventStatus, TaskID: "stepped", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
			if _, err := fx.commit.Append(ctx, "stepped", ev); err != nil {
				t.Fatal(err)
			}
			posted++
			for hook.n.Load() < posted {
				time.Sleep(time.Millisecond)
			}
		}
	}
	post(5)
	if lag := pressure.Lag(); lag < 50*time.Second {
		t.Fatalf("before the step backpressure sees %v, want the minute", lag)
	}
	back.Store(int64(time.Hour)) // the relay's clock steps back an hour
	time.Sleep(1200 * time.Millisecond)
	before, loads := q.clocks.Load(), q.loads.Load()
	post(10)
	if lag := pressure.Lag(); lag < 50*time.Second {
		t.Errorf("after the local clock stepped back, backpressure sees a wait of %v (Redis's clock read in %d of the %d loads since), want the minute",
			lag, q.clocks.Load()-before, q.loads.Load()-loads)
	}
}
