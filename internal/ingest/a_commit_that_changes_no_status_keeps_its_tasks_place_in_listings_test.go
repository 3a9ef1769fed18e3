package ingest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// ListTasks orders tasks by their latest status change (A2A sorts by status
// timestamp, newest first): an artifact committed to the older task leaves
// it where it was, and a status update moves it first. The commit of the
// artifact writes nothing to the task index.
func TestACommitThatChangesNoStatusKeepsItsTasksPlaceInListings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Start(t).Client() // (a Redis of its own: the test counts its commands)
	keys := layout.New("t", 1)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := NewHub()
	var ms atomic.Int64
	ms.Store(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).UnixMilli())
	clock := func() time.Time { return time.UnixMilli(ms.Add(1000)) } // each commit a second later
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: hub, Now: clock},
		CommitterConfig{Retention: time.Hour})
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: idleAgent{}}, Config{})
	var ids []string
	for i := range 2 {
		m := a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "hi"}}}
		res, err := svc.Send(ctx, a2a.SendParams{Dialect: a2a.V10, Message: m})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Task.ID)
	}
	older, newer := ids[0], ids[1]
	order := func() []string {
		t.Helper()
		res, err := svc.ListTasks(ctx, a2a.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, task := range res.Tasks {
			got = append(got, task.ID)
		}
		return got
	}
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]string{newer, older}) {
		t.Fatalf("listing %v, want the newer task first %v", got, []string{newer, older})
	}

	index := keys.Index(0, "")
	before := redistest.CommandCalls(t, rdb)["zadd"]
	art := a2a.Event{Kind: a2a.EventArtifact, TaskID: older,
		Artifact: &a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{{Kind: a2a.PartText, Text: "chunk"}}}}
	if _, err := commit.Append(ctx, older, art); err != nil {
		t.Fatal(err)
	}
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]string{newer, older}) {
		t.Errorf("after an artifact on the older task, listing %v, want it where it was %v", got, []string{newer, older})
	}
	if zadds := redistest.CommandCalls(t, rdb)["zadd"] - before; zadds != 0 {
		t.Errorf("the artifact's commit sent %d ZADD, want none (index %s)", zadds, index)
	}

	st := a2a.Event{Kind: a2a.EventStatus, TaskID: older, Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := commit.Append(ctx, older, st); err != nil {
		t.Fatal(err)
	}
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]string{older, newer}) {
		t.Errorf("after a status update on the older task, listing %v, want it first %v", got, []string{older, newer})
	}
}
