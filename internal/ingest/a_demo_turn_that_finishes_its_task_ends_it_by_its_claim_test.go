package ingest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

// endsRecorder is a work queue that notes how leases end.
type endsRecorder struct {
	*workqueue.Claims
	mu   sync.Mutex
	ends []string // "final <task>" (Final), "<action> <task>" (Renew but renew)
}

func (r *endsRecorder) Renew(ctx context.Context, leaseID, taskID, action string, ttl time.Duration) error {
	if action != workqueue.LeaseRenew {
		r.mu.Lock()
		r.ends = append(r.ends, "renew:"+action+" "+taskID)
		r.mu.Unlock()
	}
	return r.Claims.Renew(ctx, leaseID, taskID, action, ttl)
}

func (r *endsRecorder) Final(ctx context.Context, w *workqueue.Work) error {
	r.mu.Lock()
	r.ends = append(r.ends, "Final "+w.TaskID)
	r.mu.Unlock()
	return r.Claims.Final(ctx, w)
}

// A demo turn that finishes its task ends its lease by the Work its claim
// returned (workqueue.Claims.Final: three commands, no script), and so does
// a claim that meets a turn of a task finished meanwhile (canceled before
// anyone claimed it); the queue is left empty.
func TestADemoTurnThatFinishesItsTaskEndsItByItsClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	l := layout.New(prefix+"f", 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: l, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := NewHub()
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, l), URLs: urlsOn(rdb, l), Hub: hub}, CommitterConfig{})
	q := &endsRecorder{Claims: workqueue.New(rdb, rdb, nil, l)}
	log := slog.New(slog.DiscardHandler)
	pull := mustPull(PullDeps{Queue: q, Commit: commit, Load: commit.Load, Log: log}, PullConfig{Lease: time.Hour})
	demo, err := NewDemo(pull, DemoConfig{StepDelay: time.Millisecond}, log)
	if err != nil {
		t.Fatal(err)
	}
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: demo, Log: log}, Config{})
	in := &demoInstance{rdb: rdb.(*redis.Client), svc: svc, demo: demo}

	// A task canceled before anyone claimed it: its turn is dropped by the claim.
	canceled := in.send(t, "never run", map[string]any{"steps": 0})
	if _, err := svc.CancelTask(ctx, canceled); err != nil {
		t.Fatal(err)
	}
	in.run()
	t.Cleanup(func() { demo.Close(); in.wait(t) })
	id := in.send(t, "hello", map[string]any{"steps": 1})
	waitFor(t, 10*time.Second, "the task completed", func() bool { return in.task(id).Status.State == a2a.StateCompleted })
	stream := l.WorkQueue(DemoQueue).Stream
	waitFor(t, 10*time.Second, "the queue emptied", func() bool { return rdb.XLen(ctx, stream).Val() == 0 })
	q.mu.Lock()
	defer q.mu.Unlock()
	want := []string{"Final " + canceled, "Final " + id}
	if got := slices.Sorted(slices.Values(q.ends)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("leases ended by %v, want %v", q.ends, want)
	}
	if n := rdb.Exists(ctx, l.WorkQueue(DemoQueue).Lease(id), l.WorkQueue(DemoQueue).Lease(canceled)).Val(); n != 0 {
		t.Fatalf("%d leases of finished tasks left", n)
	}
}
