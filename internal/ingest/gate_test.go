package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

type countingGate struct {
	calls int
	err   error
}

func (g *countingGate) Admit(context.Context) (time.Duration, error) {
	g.calls++
	return 0, g.err
}

type idleAgent struct{}

func (idleAgent) Validate(a2a.Message) error        { return nil }
func (idleAgent) Start(a2a.Task, a2a.Message) error { return nil }
func (idleAgent) Cancel(string)                     {}

// Backpressure holds new tasks only: a follow-up message to an existing
// task passes, and a send whose wait was given up creates nothing.
func TestGateHoldsNewTasksOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	keys := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	gate := &countingGate{}
	hub := NewHub()
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: hub}, CommitterConfig{})
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: idleAgent{}}, Config{Gate: gate})
	msg := func(id string) a2a.Message {
		return a2a.Message{MessageID: id, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "hi"}}}
	}
	view, err := svc.Send(ctx, a2a.SendParams{Dialect: a2a.V10, Message: msg("m1")})
	if err != nil || gate.calls != 1 {
		t.Fatalf("first send: %v, gate calls %d", err, gate.calls)
	}
	if _, err := commit.Append(ctx, view.Task.ID,
		a2a.Event{Kind: a2a.EventStatus, TaskID: view.Task.ID, Status: &a2a.TaskStatus{State: a2a.StateWorking}},
		a2a.Event{Kind: a2a.EventStatus, TaskID: view.Task.ID, Status: &a2a.TaskStatus{State: a2a.StateInputRequired}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Send(ctx, a2a.SendParams{Dialect: a2a.V10, TaskID: view.Task.ID, Message: msg("m2")}); err != nil || gate.calls != 1 {
		t.Fatalf("follow-up send: %v, gate calls %d (want no new call)", err, gate.calls)
	}
	gate.err = context.DeadlineExceeded
	before, _ := store.IndexSize(ctx, "")
	if _, err := svc.Send(ctx, a2a.SendParams{Dialect: a2a.V10, Message: msg("m3")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past a refusing gate: err = %v", err)
	}
	if after, _ := store.IndexSize(ctx, ""); after != before {
		t.Fatalf("a refused send created a task: %d tasks, had %d", after, before)
	}
}
