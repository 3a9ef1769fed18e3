package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/tenant"
	"github.com/a2arelay/relay/internal/workqueue"
)

// alice and bob name the same contextId. Our contextId is the client's and
// means nothing to the agent: were it sent upstream, both would talk in
// one agent context. Each relay task gets an agent context of its own, and
// a follow-up goes to the agent task (and context) of its own relay task
// only, whoever else named the same contextId.
func TestUpstreamContextsStayPerOwner(t *testing.T) {
	t.Parallel()
	f := startAgent(t, agentOptions{})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, 3*time.Second)
	// Claims load tasks whoever owns them, as app/agents.go wires it.
	s.pull = mustPull(ingest.PullDeps{Queue: workqueue.New(rdb, rdb, nil, layout.New(strings.TrimSuffix(prefix, ":"), 0)), Commit: s.commit,
		Load: s.commit.Load, Log: testLog()}, ingest.PullConfig{Lease: 3 * time.Second})
	s.agent.q = s.pull.Queue("up")
	s.startBridge(t, Config{URL: f.url})
	alice := tenant.With(context.Background(), "key:alice")
	bob := tenant.With(context.Background(), "key:bob")
	const shared = "ctx-shared"

	send := func(who context.Context, taskID, text string) a2a.TaskView {
		t.Helper()
		v, err := s.svc.Send(who, a2a.SendParams{Dialect: a2a.V10, TaskID: taskID, ContextID: shared, Message: textMessage(text)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	waitState := func(who context.Context, id string, st a2a.TaskState) a2a.Task {
		t.Helper()
		var task a2a.Task
		waitFor(t, "task "+id+" to be "+string(st), func() bool {
			v, err := s.svc.GetTask(who, id)
			task = v.Task
			return err == nil && task.Status.State == st
		})
		return task
	}
	sends := func(n int) []a2a.SendParams {
		t.Helper()
		waitFor(t, "the agent to receive the sends", func() bool { _, got := f.lastSend(); return got >= n })
		f.mu.Lock()
		defer f.mu.Unlock()
		return append([]a2a.SendParams(nil), f.sends...)
	}

	a := send(alice, "", "alice asks")
	upA := waitUpstream(t, f)
	f.emit(upA, working(""), state(a2a.StateInputRequired, "alice, which one?"))
	waitState(alice, a.Task.ID, a2a.StateInputRequired)

	b := send(bob, "", "bob asks")
	sent := sends(2)
	var upB string
	waitFor(t, "the agent's task for bob", func() bool {
		for _, id := range f.taskIDs() {
			if id != upA {
				upB = id
				return true
			}
		}
		return false
	})
	for i, p := range sent {
		if p.TaskID != "" || p.ContextID != "" {
			t.Errorf("send %d started the agent's work in task %q, context %q; want a task and context of its own", i+1, p.TaskID, p.ContextID)
		}
	}
	f.emit(upB, working(""), state(a2a.StateInputRequired, "bob, which one?"))
	waitState(bob, b.Task.ID, a2a.StateInputRequired)

	// Each answers in the shared contextId: each answer reaches its own
	// agent task and context.
	send(bob, b.Task.ID, "bob answers")
	send(alice, a.Task.ID, "alice answers")
	sent = sends(4)
	want := map[string]string{"bob answers": upB, "alice answers": upA}
	for _, p := range sent[2:] {
		up := want[texts(p.Message.Parts)]
		if p.TaskID != up || p.ContextID != "upctx-"+up {
			t.Errorf("%q went upstream to task %q, context %q; want %q, %q", texts(p.Message.Parts), p.TaskID, p.ContextID, up, "upctx-"+up)
		}
	}
	f.emit(upA, chunk("out", "alice's private answer", false, true), state(a2a.StateCompleted, "done"))
	f.emit(upB, chunk("out", "bob's answer", false, true), state(a2a.StateCompleted, "done"))
	for _, c := range []struct {
		who  context.Context
		id   string
		want string
	}{{alice, a.Task.ID, "alice's private answer"}, {bob, b.Task.ID, "bob's answer"}} {
		task := waitState(c.who, c.id, a2a.StateCompleted)
		if task.ContextID != shared {
			t.Errorf("task %s: contextId %q, want %q", c.id, task.ContextID, shared)
		}
		if len(task.Artifacts) != 1 || texts(task.Artifacts[0].Parts) != c.want {
			t.Errorf("task %s: artifacts %+v, want only %q", c.id, task.Artifacts, c.want)
		}
	}
}
