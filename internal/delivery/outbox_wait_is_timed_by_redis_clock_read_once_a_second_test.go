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

// clockAhead is a store whose Redis clock reads ahead of the local one by
// ahead, and which counts the loads and those that asked for the clock.
type clockAhead struct {
	*outbox.Consumer
	ahead         time.Duration
	loads, clocks atomic.Int32
}

func (c *clockAhead) LoadOutbox(ctx context.Context, p int, es []outbox.OutboxEntry, o outbox.LoadOptions) ([]outbox.Loaded, time.Time, error) {
	l, now, err := c.Consumer.LoadOutbox(ctx, p, es, o)
	c.loads.Add(1)
	if o.Clock {
		c.clocks.Add(1)
		now = now.Add(c.ahead)
	}
	return l, now, err
}

// The outbox owner tells backpressure how long a read's first entry waited
// by Redis's clock (the entry's id is its Redis time), but it reads that
// clock at most once a second, not with every load: it keeps the offset
// from the local clock.
func TestOutboxWaitIsTimedByRedisClockReadOnceASecond(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &countingHook{status: http.StatusOK}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "timed", hook)
	q := &clockAhead{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{}), ahead: time.Minute}
	pressure, err := backpressure.New(backpressure.Deps{}, backpressure.Config{Target: time.Hour, MaxHold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := runWorkers(mustNew(t, fx.deps(q, func(d *Deps) { d.Pressure = pressure }), Config{Outbox: true}))
	defer stop()
	const events = 20
	for i := range events {
		ev := a2a.Event{Kind: a2a.EventStatus, TaskID: "timed", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
		if _, err := fx.commit.Append(ctx, "timed", ev); err != nil {
			t.Fatal(err)
		}
		for hook.n.Load() < int32(i+2) { // the creation's, then this one's
			time.Sleep(time.Millisecond)
		}
	}
	if lag := pressure.Lag(); lag < 50*time.Second {
		t.Errorf("backpressure sees a wait of %v, want the minute Redis's clock is ahead", lag)
	}
	loads, clocks := q.loads.Load(), q.clocks.Load()
	if loads < events || clocks > loads/4+1 {
		t.Errorf("%d of %d loads read Redis's clock, want about one a second", clocks, loads)
	}
}
