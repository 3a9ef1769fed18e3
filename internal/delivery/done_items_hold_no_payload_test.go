package delivery

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// The items done behind a slow POST (up to outboxHeld) wait only for the
// offset to move past them: they keep no event and no config in memory,
// nor the event their outbox entry carried (OutboxEntry.Event, which the
// loaded head takes over).
func TestDoneItemsHeldBehindASlowPostKeepNoPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &slowFastHook{release: make(chan struct{})}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "slow", hook)
	defer close(hook.release)
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{Attempt: time.Minute})), Config{Outbox: true, Timeout: time.Minute})
	o, ok, err := w.q.Own(ctx, 0)
	if err != nil || !ok {
		t.Fatal("own", err)
	}
	op := newOutboxPart(w, 0, o)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { op.run(rctx) })
	defer func() { cancel(); hook.release <- struct{}{}; wg.Wait() }()
	fast := strings.Replace(fx.hookURL, "/hook", "/fast", 1)
	task := a2a.Task{ID: "fast", ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted}}
	if _, err := fx.commit.Create(ctx, task, a2a.V10, []a2a.PushConfig{{ID: "hook", TaskID: "fast", URL: fast, Dialect: a2a.V10}}); err != nil {
		t.Fatal(err)
	}
	ev := a2a.Event{Kind: a2a.EventStatus, TaskID: "fast", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "fast", ev, ev, ev); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fast webhook got nothing", func() bool { return hook.fast.Load() == 4 })
	time.Sleep(100 * time.Millisecond)
	op.mu.Lock()
	defer op.mu.Unlock()
	held, withPayload := 0, 0
	for _, it := range op.items {
		if it.done {
			held++
			if it.h.Event != nil || it.h.Config != nil || it.e.Event != nil {
				withPayload++
			}
		}
	}
	if held == 0 || withPayload > 0 {
		t.Fatalf("%d done items held behind the slow POST, %d of them still hold their event/config", held, withPayload)
	}
}
