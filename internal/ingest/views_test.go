package ingest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// A task that expired and was created again under the same id (v0.1
// client-chosen ids) restarts at version 1. An instance still holding a
// view of the old task must not commit over the new one, even when the
// versions happen to match.
func TestCachedViewOfAnExpiredTaskIsNotUsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 1)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	clock := &fakeClock{t: time.Now()}
	a := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub(), Now: clock.now}, CommitterConfig{})
	b := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: NewHub()}, CommitterConfig{})
	msg := func(text string) a2a.Event {
		return a2a.Event{Kind: a2a.EventMessage, TaskID: "same", Message: &a2a.Message{MessageID: text, Role: a2a.RoleUser,
			Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}}
	}
	old := a2a.Task{ID: "same", ContextID: "old", Status: a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := a.Create(ctx, old, a2a.V01, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, "same", msg("old message")); err != nil { // a caches version 2
		t.Fatal(err)
	}
	// The task expires; another instance creates it again and takes it to version 2.
	if err := rdb.Del(ctx, store.TaskKeys("same")...).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := a2a.Task{ID: "same", ContextID: "new", Status: a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := b.Create(ctx, fresh, a2a.V01, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "same", msg("new message")); err != nil {
		t.Fatal(err)
	}
	clock.add(11 * time.Second) // a retention is never that short; a cached view never lives that long
	v, err := a.Append(ctx, "same", msg("third"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Task.ContextID != "new" || len(v.Task.History) != 2 || v.Task.History[0].MessageID != "new message" {
		t.Fatalf("instance a committed over the new task from its old view: %+v", v.Task)
	}
}
