package delivery

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// countingHook answers every POST with status, the first one after
// release is closed (nil: at once).
type countingHook struct {
	n       atomic.Int32
	status  int
	release chan struct{}
}

func (h *countingHook) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.n.Add(1) == 1 && h.release != nil {
		<-h.release
	}
	w.WriteHeader(h.status)
}

// runWorkers runs w until the returned stop is called.
func runWorkers(w *Workers) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// A webhook that answers 410 Gone gets no more POSTs of its lane, on both
// paths: the outbox owner reads the config again for the notifications it
// read along with the first, and drops them.
func TestNothingMoreIsPostedAfter410(t *testing.T) {
	t.Parallel()
	for _, onOutbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[onOutbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			hook := &countingHook{status: http.StatusGone}
			fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: onOutbox}, a2a.V10, "gone", hook)
			working := a2a.Event{Kind: a2a.EventStatus, TaskID: "gone", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
			if _, err := fx.commit.Append(ctx, "gone", working, working, working); err != nil {
				t.Fatal(err)
			}
			stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: onOutbox}))
			defer stop()
			deadline := time.Now().Add(10 * time.Second)
			for {
				recs, _, err := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "gone", Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				final := 0
				for _, r := range recs {
					if r.Status == "disabled" || r.Status == "dropped" {
						final++
					}
				}
				if final == 4 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("records %+v, want one disabled and three dropped", recs)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := hook.n.Load(); n != 1 {
				t.Fatalf("%d POSTs to a webhook that answered 410 Gone to the first, want 1", n)
			}
		})
	}
}

// An owner that stops with a POST in flight keeps its lease until the POST
// has ended (and gives it up then): no other relay reads the partition
// again meanwhile and POSTs the same notification a second time.
func TestStoppingOwnerKeepsItsLeaseWhileAPostIsInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &countingHook{status: http.StatusOK, release: make(chan struct{})}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "slow", hook)
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{Attempt: 30 * time.Second})),
		Config{Outbox: true, Timeout: 30 * time.Second})
	ownLease := w.q.Timing().OwnLease
	stop := runWorkers(w)
	for hook.n.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }() // the relay stops with one POST in flight
	// Past the lease's length, the partition is still the stopping relay's.
	deadline := time.Now().Add(ownLease + 2*time.Second)
	for time.Now().Before(deadline) {
		if _, ok, err := fx.store.Own(ctx, 0, "other-relay", ownLease); err != nil || ok {
			close(hook.release)
			<-stopped
			t.Fatalf("another relay took the partition while a POST from it was in flight (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	close(hook.release)
	<-stopped
	if _, ok, err := fx.store.Own(ctx, 0, "other-relay", ownLease); err != nil || !ok {
		t.Fatalf("the stopped relay did not give the partition up (%v)", err)
	}
}
