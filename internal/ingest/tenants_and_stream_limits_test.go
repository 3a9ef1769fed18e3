package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// an owner's index entry outlives the task it names (a finished
// task's keys expire; its index entry is only dropped when its owner lists
// and the task is gone). v0.1 lets a client choose the task id, so once the
// task expired another tenant can create a task with the same id, and
// LoadMany(owner, ids) loads it without checking its owner: the first
// tenant's ListTasks returns the second tenant's task, history included.
func TestListTasksShowsAnotherTenantsTaskReusingAnExpiredID(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: k, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := NewHub()
	commit := mustCommitter(CommitterDeps{Store: store, Turns: turnsOn(rdb, k), URLs: urlsOn(rdb, k), Hub: hub}, CommitterConfig{Retention: 100 * time.Millisecond}) // short retention
	svc := mustService(ServiceDeps{Store: store, Commit: commit, Hub: hub, Agent: idleAgent{}}, Config{})
	alice := tenant.With(context.Background(), "key:alice")
	bob := tenant.With(context.Background(), "key:bob")
	msg := func(id, text string) a2a.Message {
		return a2a.Message{MessageID: id, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
	}
	if _, err := svc.Send(alice, a2a.SendParams{Dialect: a2a.V01, TaskID: "job-1", ClientChosenID: true, Message: msg("a1", "alice's")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CancelTask(alice, "job-1"); err != nil { // finished: its keys expire after the retention
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := svc.Send(bob, a2a.SendParams{Dialect: a2a.V01, TaskID: "job-1", ClientChosenID: true, Message: msg("b1", "bob's secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetTask(alice, "job-1"); !a2a.IsKind(err, a2a.KindTaskNotFound) {
		t.Fatalf("alice GetTask(bob's job-1) = %v, want -32001", err)
	}
	res, err := svc.ListTasks(alice, a2a.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range res.Tasks {
		for _, m := range task.History {
			for _, p := range m.Parts {
				if p.Text == "bob's secret" {
					t.Fatalf("alice's ListTasks returned bob's task %s (history %q)", task.ID, p.Text)
				}
			}
		}
	}
}

// without client authentication (RELAY_AUTH=none, or the embedded
// quickstart) every request acts for the owner "", so the per-client
// stream limit (max_streams_per_client, default 32) becomes a limit on all
// clients of the instance together: the 33rd SSE stream is refused however
// large max_streams is, and one client can hold every stream.
func TestPerClientStreamLimitCapsEveryoneWithoutAuth(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: layout.New(strings.TrimSuffix(prefix, ":"), 2), Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	s, err := NewStreams(StreamsDeps{Store: store, RDB: rdb}, StreamsConfig{Max: 1000, PerOwner: 32}) // app defaults: max_streams large, 32 per client
	if err != nil {
		t.Fatal(err)
	}
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for i := range 33 {
		// Each acquire is a different remote client; without auth all are owner "".
		r, err := s.Acquire(context.Background())
		if err != nil {
			t.Fatalf("stream %d of distinct anonymous clients refused with max_streams 1000: %v", i+1, err)
		}
		releases = append(releases, r)
	}
}
