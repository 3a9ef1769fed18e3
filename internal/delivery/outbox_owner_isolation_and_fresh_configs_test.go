package delivery

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/outbox"
)

// blockingHook holds the first POST until release is closed.
type blockingHook struct {
	n       atomic.Int32
	release chan struct{}
}

func (h *blockingHook) ServeHTTP(http.ResponseWriter, *http.Request) {
	if h.n.Add(1) == 1 {
		<-h.release
	}
}

// waitFor polls ok until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A push config its client deletes gets no POST of a notification whose
// attempt had not begun, on both paths: the lanes read the config at each
// attempt; the outbox owner reads it again for an item that waited.
func TestDeletedConfigGetsNoMorePosts(t *testing.T) {
	t.Parallel()
	for _, onOutbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[onOutbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			hook := &blockingHook{release: make(chan struct{})}
			fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: onOutbox}, a2a.V10, "del", hook)
			stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: onOutbox}))
			defer stop()
			waitFor(t, "the first notification was not POSTed", func() bool { return hook.n.Load() > 0 })
			working := a2a.Event{Kind: a2a.EventStatus, TaskID: "del", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
			if _, err := fx.commit.Append(ctx, "del", working); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // (the owner reads the second, with its config, and queues it behind the first)
			if err := fx.store.DeletePushConfig(ctx, "del", "hook"); err != nil {
				t.Fatal(err)
			}
			close(hook.release)
			waitFor(t, "the second notification was not finished", func() bool {
				recs, _, err := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "del", Status: "dropped", Limit: 10})
				return err == nil && len(recs) == 1
			})
			if n := hook.n.Load(); n != 1 {
				t.Fatalf("%d POSTs; the second notification was POSTed to a config deleted before its attempt began", n)
			}
		})
	}
}

// slowFastHook holds every POST to /hook until release is closed, and
// counts those to /fast.
type slowFastHook struct {
	release chan struct{}
	fast    atomic.Int32
}

func (h *slowFastHook) ServeHTTP(_ http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/hook" {
		<-h.release
		return
	}
	h.fast.Add(1)
}

// A slow webhook does not hold up the other webhooks of its partition, on
// both paths: while its first POST hangs, the others' notifications (more
// than the outbox owner holds undone at once) are all delivered.
func TestSlowWebhookDoesNotStallItsPartition(t *testing.T) {
	t.Parallel()
	for _, onOutbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "lanes", true: "outbox"}[onOutbox], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			hook := &slowFastHook{release: make(chan struct{})}
			fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: onOutbox}, a2a.V10, "slow", hook)
			working := a2a.Event{Kind: a2a.EventStatus, TaskID: "slow", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
			if _, err := fx.commit.Append(ctx, "slow", working, working); err != nil {
				t.Fatal(err)
			}
			const tasks, per = 60, 80 // 4,800: over outboxBacklog
			fast := strings.Replace(fx.hookURL, "/hook", "/fast", 1)
			for i := range tasks {
				id := "fast" + string(rune('A'+i/26)) + string(rune('a'+i%26))
				task := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted}}
				if _, err := fx.commit.Create(ctx, task, a2a.V10, []a2a.PushConfig{{ID: "hook", TaskID: id, URL: fast, Dialect: a2a.V10}}); err != nil {
					t.Fatal(err)
				}
				ev := working
				ev.TaskID = id
				evs := make([]a2a.Event, per-1)
				for j := range evs {
					evs[j] = ev
				}
				if _, err := fx.commit.Append(ctx, id, evs...); err != nil {
					t.Fatal(err)
				}
			}
			stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{Attempt: time.Minute})),
				Config{Outbox: onOutbox, Timeout: time.Minute}))
			defer func() { close(hook.release); stop() }()
			waitFor(t, "the other webhooks waited for the slow one", func() bool { return hook.fast.Load() == tasks*per })
		})
	}
}

// failOnceHook answers the first POST 500 and the others 200.
type failOnceHook struct{ n atomic.Int32 }

func (h *failOnceHook) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.n.Add(1) == 1 {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// The owner forgets a lane it parked once it finds the lane empty again
// (an append answered LaneEmpty): its memory does not grow with every lane
// that ever failed once.
func TestOwnerForgetsAnUnparkedLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &failOnceHook{}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "leak", hook) // N1: fails, parked
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: true})
	o, ok, err := w.q.Own(ctx, 0)
	if err != nil || !ok {
		t.Fatal("own", err)
	}
	op := newOutboxPart(w, 0, o)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { op.run(rctx) })
	defer func() { cancel(); wg.Wait() }()
	lane := ""
	waitFor(t, "N1 was not parked", func() bool {
		op.mu.Lock()
		defer op.mu.Unlock()
		for l := range op.o.Parked {
			lane = l
		}
		return lane != ""
	})
	// N1's retry comes due (1 s, with up to 20% jitter); the lanes'
	// workers deliver it and empty the lane.
	waitFor(t, "N1's retry was not moved back", func() bool {
		n, _, err := fx.store.MoveDue(ctx, 0, time.Now(), 10)
		return err == nil && n == 1
	})
	fx.drain(t, w)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "leak", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "leak", working); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "N2 was not delivered", func() bool { return hook.n.Load() == 3 })
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.o.Parked[lane] {
		t.Fatal("the lane is still parked")
	}
	if _, kept := op.parkedAt[lane]; kept {
		t.Fatal("the owner still remembers when the unparked lane was parked")
	}
}

// orderHook records the notification ids POSTed, holding the first POST
// until release is closed.
type orderHook struct {
	mu      sync.Mutex
	ids     []string
	release chan struct{}
}

func (h *orderHook) ServeHTTP(_ http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	h.ids = append(h.ids, req.Header.Get("A2A-Notification-Id"))
	first := len(h.ids) == 1
	h.mu.Unlock()
	if first {
		<-h.release
	}
}

func (h *orderHook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

// A lane that queues more than laneSpill notifications behind a slow POST
// is handed to the lanes: the owner holds no more of it in memory, and
// every notification is still delivered once, in order.
func TestBusySlowLaneIsHandedToTheLanesInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &orderHook{release: make(chan struct{})}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "busy", hook)
	stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: true}))
	defer stop()
	waitFor(t, "the first notification was not POSTed", func() bool { return len(hook.got()) == 1 })
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "busy", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	const more = laneSpill + 44
	evs := make([]a2a.Event, more)
	for i := range evs {
		evs[i] = working
	}
	if _, err := fx.commit.Append(ctx, "busy", evs...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // (the owner reads them, queued behind the first)
	close(hook.release)
	waitFor(t, "not every notification was delivered", func() bool { return len(hook.got()) >= more+1 })
	ids := hook.got()
	seen := map[string]bool{}
	last := ""
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("notification %s POSTed twice", id)
		}
		seen[id] = true
		r, err := fx.store.Delivery(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if last != "" && !layout.IDBefore(last, r.EventID) {
			t.Fatalf("event %s POSTed after %s", r.EventID, last)
		}
		last = r.EventID
	}
	if parked, err := fx.store.ParkedLanes(ctx, 0); err != nil || len(parked) > 1 {
		t.Fatalf("parked lanes %v (%v)", parked, err)
	}
}
