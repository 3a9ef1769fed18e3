package delivery

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// slowLoad is the store, with the owner's second LoadOutbox returning only
// after hook's 410 to the first notification has been reported: the load
// ran before the 410, its dispatch after (one round trip's window).
type slowLoad struct {
	*outbox.Consumer
	calls   atomic.Int32
	release chan struct{}
	gone    func() bool
}

func (s *slowLoad) LoadOutbox(ctx context.Context, p int, es []outbox.OutboxEntry, o outbox.LoadOptions) ([]outbox.Loaded, time.Time, error) {
	l, now, err := s.Consumer.LoadOutbox(ctx, p, es, o)
	if s.calls.Add(1) == 2 {
		close(s.release) // the webhook answers 410 to the first notification now
		for !s.gone() {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return l, now, err
}

// A read whose configs were loaded before a 410 was reported, and queued
// after it, is stale too: its notification of the disabled webhook is
// dropped, not POSTed.
func TestReadLoadedDuringA410IsNotPosted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &countingHook{status: http.StatusGone, release: make(chan struct{})}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "gone", hook)
	q := &slowLoad{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{}), release: hook.release, gone: func() bool {
		recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "gone", Limit: 10})
		for _, r := range recs {
			if r.Status == "disabled" {
				return true
			}
		}
		return false
	}}
	stop := runWorkers(mustNew(t, fx.deps(q), Config{Outbox: true}))
	defer stop()
	for hook.n.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "gone", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "gone", working); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "gone", Limit: 10})
		if len(recs) == 2 && recs[0].Status != "pending" && recs[1].Status != "pending" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := hook.n.Load(); n != 1 {
		t.Fatalf("%d POSTs to a webhook that answered 410 Gone to the first, want 1", n)
	}
}
