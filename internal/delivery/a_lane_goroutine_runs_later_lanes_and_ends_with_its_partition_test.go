package delivery

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// idsHook records the notification ids POSTed to it.
type idsHook struct {
	mu  sync.Mutex
	ids []string
}

func (h *idsHook) ServeHTTP(_ http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	h.ids = append(h.ids, req.Header.Get("A2A-Notification-Id"))
	h.mu.Unlock()
}

func (h *idsHook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

// laneGoroutines returns the ids of the goroutines running op's lanes, and
// of those among them that wait for another lane's turn.
func laneGoroutines(op *outboxPart) (all, idle []string) {
	mark := fmt.Appendf(nil, "(*outboxPart).runLanes(%p", op)
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if !bytes.Contains(g, mark) {
			continue
		}
		id, _, _ := bytes.Cut(bytes.TrimPrefix(g, []byte("goroutine ")), []byte(" "))
		all = append(all, string(id))
		if bytes.Contains(g, []byte("[chan receive")) && !bytes.Contains(g, []byte(".runLane(")) {
			idle = append(idle, string(id))
		}
	}
	return all, idle
}

// oneIdleLaneGoroutine waits until op has one lane goroutine, waiting for a
// lane's turn, and returns its id.
func oneIdleLaneGoroutine(t *testing.T, op *outboxPart) string {
	t.Helper()
	var idle []string
	waitFor(t, "no lane goroutine alone waits for a lane", func() bool {
		var all []string
		all, idle = laneGoroutines(op)
		return len(all) == 1 && len(idle) == 1
	})
	return idle[0]
}

// The goroutine that ran a lane waits for the next lane's turn and runs it
// (one of a new goroutine would grow its stack again each time): one after
// the other, lanes of new tasks are each POSTed once, in turn, by the same
// goroutine, which ends with the partition's work.
func TestALaneGoroutineRunsLaterLanesAndEndsWithItsPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idsHook{}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "reuse0", hook)
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
	waitFor(t, "the first task's notification was not POSTed", func() bool { return len(hook.got()) == 1 })
	first := oneIdleLaneGoroutine(t, op)
	const tasks = 10
	for i := 1; i <= tasks; i++ {
		id := fmt.Sprintf("reuse%d", i)
		task := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted}}
		if _, err := fx.commit.Create(ctx, task, a2a.V10, []a2a.PushConfig{{ID: "hook", TaskID: id, URL: fx.hookURL, Dialect: a2a.V10}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, id+"'s notification was not POSTed", func() bool { return len(hook.got()) == i+1 })
		if g := oneIdleLaneGoroutine(t, op); g != first {
			t.Fatalf("%s's lane ran on goroutine %s, not on %s, which ran the first", id, g, first)
		}
	}
	seen := map[string]bool{}
	for _, id := range hook.got() {
		if seen[id] {
			t.Fatalf("notification %s POSTed twice: %v", id, hook.got())
		}
		seen[id] = true
	}
	if len(seen) != tasks+1 {
		t.Fatalf("POSTed %v, want %d notifications", hook.got(), tasks+1)
	}
	cancel()
	wg.Wait()
	if g, _ := laneGoroutines(op); len(g) != 0 {
		t.Fatalf("lane goroutines %v outlive their partition's work", g)
	}
}
