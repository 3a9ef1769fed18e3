package ingest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A demo task whose instance dies mid-task is claimed by another instance
// once its lease runs out, which resumes it at the next step: no step, no
// chunk is emitted twice, and the task completes.
func TestDemoTaskOfADeadInstanceIsResumedElsewhere(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	log := slog.New(slog.DiscardHandler)
	const lease = 500 * time.Millisecond
	a := newDemoInstance(t, srv.Addr(), "dead", lease, DemoConfig{}, log)
	b := newDemoInstance(t, srv.Addr(), "dead", lease, DemoConfig{}, log)
	a.run()
	id := a.send(t, "hello, takeover", map[string]any{"steps": 6, "delayMs": 150, "artifactChunks": 3})
	waitFor(t, 10*time.Second, "step 2 on instance A", func() bool { return stepOfTask(a.task(id)) >= 2 })
	a.die(t)
	at := stepOfTask(b.task(id))
	b.run()
	waitFor(t, 15*time.Second, "the task completed by instance B", func() bool { return b.task(id).Status.State == a2a.StateCompleted })
	checkEvents(t, b, id, 6, 3, a2a.StateCompleted)
	task := b.task(id)
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 3 {
		t.Fatalf("artifacts %+v, want one of 3 chunks", task.Artifacts)
	}
	t.Logf("instance A died at step %d; B resumed at step %d", at, at+1)
}

// On shutdown an instance hands its demo turns back, so that another
// instance takes them over at once, long before their leases would end.
func TestDemoShutdownHandsTasksToAnotherInstanceAtOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	log := slog.New(slog.DiscardHandler)
	const lease = time.Hour // only a release can move the task within the test
	a := newDemoInstance(t, srv.Addr(), "shut", lease, DemoConfig{}, log)
	b := newDemoInstance(t, srv.Addr(), "shut", lease, DemoConfig{}, log)
	a.run()
	id := a.send(t, "hello, shutdown", map[string]any{"steps": 5, "delayMs": 100})
	waitFor(t, 10*time.Second, "step 1 on instance A", func() bool { return stepOfTask(a.task(id)) >= 1 })
	b.run()
	a.demo.Close()
	a.wait(t)
	waitFor(t, 10*time.Second, "the task completed by instance B", func() bool { return b.task(id).Status.State == a2a.StateCompleted })
	checkEvents(t, b, id, 5, 1, a2a.StateCompleted)
}

// A client's cancel stops the demo's turn at once on the instance that
// takes it, even in the middle of a long pause, and ends its lease.
func TestDemoCancelStopsTheTurnAtOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a := newDemoInstance(t, srv.Addr(), "cancel", time.Hour, DemoConfig{}, slog.New(slog.DiscardHandler))
	a.run()
	id := a.send(t, "cancel me", map[string]any{"steps": 3, "delayMs": 60000})
	waitFor(t, 10*time.Second, "the turn claimed", func() bool {
		a.demo.mu.Lock()
		defer a.demo.mu.Unlock()
		return a.demo.running[id] != nil
	})
	if _, err := a.svc.CancelTask(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the turn ended", func() bool {
		a.demo.mu.Lock()
		defer a.demo.mu.Unlock()
		return a.demo.running[id] == nil
	})
	n, err := a.rdb.XLen(t.Context(), layout.New("cancel", 2).WorkQueue(DemoQueue).Stream).Result()
	if err != nil || n != 0 {
		t.Fatalf("the demo queue holds %d entries (%v) after the cancel: the lease was not ended", n, err)
	}
}
