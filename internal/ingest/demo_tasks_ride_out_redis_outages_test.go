package ingest

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/redistest"
)

// Redis is killed and restarted (from its AOF) a few seconds later while
// many demo tasks run: the demo agent waits for it and every task
// completes, each step and chunk emitted once. The leases outlast the
// test, so no takeover can hide a task the agent gave up on.
func TestDemoTasksRideOutARedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	log := slog.New(slog.DiscardHandler)
	cfg := DemoConfig{Outage: Outage{For: time.Minute, Initial: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond}}
	a := newDemoInstance(t, srv.Addr(), "outage", time.Hour, cfg, log)
	b := newDemoInstance(t, srv.Addr(), "outage", time.Hour, cfg, log)
	a.run()
	b.run()
	var ids []string
	for i := range 40 {
		in := a
		if i%2 == 1 {
			in = b
		}
		ids = append(ids, in.send(t, "outage", map[string]any{"steps": 8, "delayMs": 150, "artifactChunks": 2}))
	}
	waitFor(t, 20*time.Second, "every task at step 1", func() bool {
		for _, id := range ids {
			if stepOfTask(a.task(id)) < 1 {
				return false
			}
		}
		return true
	})
	srv.Kill()
	time.Sleep(2500 * time.Millisecond) // the outage
	srv.Restart()
	waitFor(t, 30*time.Second, "every task completed", func() bool {
		for _, id := range ids {
			if a.task(id).Status.State != a2a.StateCompleted {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		checkEvents(t, a, id, 8, 2, a2a.StateCompleted)
	}
}

// An outage longer than the bound fails the task, with a status message
// saying why, as soon as Redis answers again.
func TestDemoTaskFailsWhenRedisStaysAwayPastTheBound(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	watch := newLogWatch()
	cfg := DemoConfig{Outage: Outage{For: 300 * time.Millisecond, Initial: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond}}
	a := newDemoInstance(t, srv.Addr(), "bound", time.Hour, cfg, slog.New(watch))
	a.run()
	id := a.send(t, "too long", map[string]any{"steps": 50, "delayMs": 100})
	waitFor(t, 10*time.Second, "step 1", func() bool { return stepOfTask(a.task(id)) >= 1 })
	srv.Kill()
	waitFor(t, 20*time.Second, "the demo agent giving up on the task", func() bool { return watch.seen("demo task failed") })
	srv.Restart()
	waitFor(t, 20*time.Second, "the task failed", func() bool { return a.task(id).Status.State == a2a.StateFailed })
	st := a.task(id).Status
	if st.Message == nil || !strings.Contains(st.Message.Parts[0].Text, "Redis was unreachable for more than 300ms") {
		t.Fatalf("failed status %+v: want a message naming the outage", st.Message)
	}
}
