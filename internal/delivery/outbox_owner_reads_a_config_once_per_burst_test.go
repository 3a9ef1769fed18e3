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

// configReads is a store that counts the loads and the configs they read.
type configReads struct {
	*outbox.Consumer
	loads, reads atomic.Int32
}

func (c *configReads) LoadOutbox(ctx context.Context, p int, es []outbox.OutboxEntry, o outbox.LoadOptions) ([]outbox.Loaded, time.Time, error) {
	c.loads.Add(1)
	for _, e := range es {
		if o.Known == nil || !o.Known(e.Lane) {
			c.reads.Add(1)
			break // (one lane here)
		}
	}
	return c.Consumer.LoadOutbox(ctx, p, es, o)
}

// The owner keeps the config a load read for the next reads of the lane
// within configFresh/2: a burst of one task's notifications reads its
// config from Redis about once, not once per read.
func TestOutboxOwnerReadsAConfigOncePerBurst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &countingHook{status: http.StatusOK}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "burst", hook)
	q := &configReads{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{})}
	stop := runWorkers(mustNew(t, fx.deps(q), Config{Outbox: true}))
	defer stop()
	for hook.n.Load() < 1 { // the creation's
		time.Sleep(time.Millisecond)
	}
	start, loads0, reads0 := time.Now(), q.loads.Load(), q.reads.Load()
	const events = 10
	for i := range events {
		ev := a2a.Event{Kind: a2a.EventStatus, TaskID: "burst", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
		if _, err := fx.commit.Append(ctx, "burst", ev); err != nil {
			t.Fatal(err)
		}
		for hook.n.Load() < int32(i+2) {
			time.Sleep(time.Millisecond)
		}
	}
	took := time.Since(start)
	loads, reads := q.loads.Load()-loads0, q.reads.Load()-reads0
	// One read per configFresh/2 of the burst, and one to spare.
	if limit := int32(took/(configFresh/2)) + 2; loads < events || reads > limit {
		t.Fatalf("%d of %d loads read the config in %v, want at most %d", reads, loads, took, limit)
	}
}

// heldRead is a store whose outbox reads that return entries, once armed,
// are held until release is closed: the read is numbered after what the
// test does meanwhile.
type heldRead struct {
	*outbox.Consumer
	armed   atomic.Bool
	release chan struct{}
}

func (h *heldRead) ReadOutbox(ctx context.Context, p int, after string, count int, block time.Duration) ([]outbox.OutboxEntry, error) {
	es, err := h.Consumer.ReadOutbox(ctx, p, after, count, block)
	if len(es) > 0 && h.armed.CompareAndSwap(true, false) {
		<-h.release
	}
	return es, err
}

// A config the owner cached is forgotten when a notification of its lane
// gets 410 Gone: a notification committed before the 410 but read after
// it is dropped with the config, not POSTed with the cached one.
func TestOutboxOwnerForgetsACachedConfigAtA410(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var posts atomic.Int32
	answer := make(chan int)
	hook := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if posts.Add(1) == 1 {
			w.WriteHeader(http.StatusOK) // the creation's
			return
		}
		w.WriteHeader(<-answer)
	})
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "gone", hook)
	q := &heldRead{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{}), release: make(chan struct{})}
	stop := runWorkers(mustNew(t, fx.deps(q), Config{Outbox: true}))
	defer stop()
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "gone", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "gone", working); err != nil { // POSTed with the config its read loaded and cached
		t.Fatal(err)
	}
	for posts.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	q.armed.Store(true)
	if _, err := fx.commit.Append(ctx, "gone", working); err != nil { // committed while the config still exists
		t.Fatal(err)
	}
	for q.armed.Load() { // its read is held
		time.Sleep(time.Millisecond)
	}
	answer <- http.StatusGone
	for disabled := false; !disabled; { // the owner has taken the 410 in
		recs, _, err := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "gone", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			disabled = disabled || r.Status == "disabled"
		}
		time.Sleep(time.Millisecond)
	}
	close(q.release)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		recs, _, _ := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "gone", Status: "dropped", Limit: 10})
		if len(recs) == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(answer) // a POST now would get status 0 and fail
	time.Sleep(50 * time.Millisecond)
	if n := posts.Load(); n != 2 {
		t.Fatalf("%d POSTs, want 2: none after the 410", n)
	}
}

// The configs the owner cached are dropped once too old to be used: a
// lane gone quiet leaves no config (and no credentials) in memory.
func TestOutboxOwnerDropsConfigsTooOldToUse(t *testing.T) {
	t.Parallel()
	op := newOutboxPart(nil, 0, outbox.Ownership{Parked: map[string]bool{}})
	now := time.Now()
	op.configs["old"] = cachedConfig{config: []byte(`{"authentication":"secret"}`), at: now.Add(-configFresh)}
	op.configs["new"] = cachedConfig{config: []byte(`{}`), at: now}
	op.forgetConfigs(now)
	if _, ok := op.configs["old"]; ok || len(op.configs) != 1 {
		t.Fatalf("cached configs %v, want only the fresh one", op.configs)
	}
}
