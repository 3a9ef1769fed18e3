package delivery

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/taskstore"
)

// flakyTaskAt fails its first TaskAt as a Redis blip would (a timeout, a
// failover), then answers.
type flakyTaskAt struct {
	*testStore
	mu     sync.Mutex
	failed bool
}

func (f *flakyTaskAt) TaskAt(ctx context.Context, taskID, eventID string, version int64) (taskstore.TaskAt, error) {
	f.mu.Lock()
	first := !f.failed
	f.failed = true
	f.mu.Unlock()
	if first {
		return taskstore.TaskAt{}, errors.New("queue: task at version: i/o timeout")
	}
	return f.testStore.TaskAt(ctx, taskID, eventID, version)
}

// A v0.3 body needs the task after the event (TaskAt). A transient Redis
// error while reading it is not the notification's fault: the attempt is
// retried, the notification is not dead-lettered on its first try.
func TestTransientTaskAtErrorIsRetriedNotDeadLettered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &bodyRecorder{}
	fx := newFixtureWith(t, storeConfig{Partitions: 1}, a2a.V03, "blip", hook)
	if _, err := fx.commit.Append(ctx, "blip", a2a.Event{Kind: a2a.EventStatus, TaskID: "blip",
		Status: &a2a.TaskStatus{State: a2a.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	q := &flakyTaskAt{testStore: fx.store}
	lease := outbox.ConsumerConfig{LaneLease: 300 * time.Millisecond, Attempt: time.Second}
	w := mustNew(t, fx.deps(fx.store.consumer(t, lease), func(d *Deps) { d.Tasks = q }),
		Config{Timeout: time.Second})
	fx.drain(t, w)
	dead, _, err := fx.store.ListDeliveries(ctx, outbox.DeliveryFilter{TaskID: "blip", Status: "dead", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) > 0 {
		t.Fatalf("%d notification(s) dead-lettered on their first attempt by a transient Redis error (attempts %d)",
			len(dead), dead[0].Attempts)
	}
	// The token was left pending: reclaimed once idle (its lane lease has
	// run out by then), it is delivered.
	time.Sleep(400 * time.Millisecond)
	again, err := fx.store.Reclaim(ctx, 0, w.consumer, lease.LaneLease, 10)
	if err != nil || len(again) != 1 {
		t.Fatalf("reclaimed %v, %v; want the one token left pending", again, err)
	}
	w.Process(ctx, again[0])
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if len(hook.order) != 2 {
		t.Fatalf("%d notifications delivered, want 2 (the task and its update)", len(hook.order))
	}
}
