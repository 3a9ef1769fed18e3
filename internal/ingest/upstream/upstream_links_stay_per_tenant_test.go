package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/ingest"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
	"github.com/a2arelay/relay/internal/workqueue"
)

// links are keyed by the relay task id alone and live
// TaskRetention+24h (the app's setting), longer than the task. A v0.1
// client chooses its task id; once a finished task has expired, another
// tenant (or the same client reusing its id) can create a task with that
// id, and the bridge finds the old link: it sends the new message as a
// follow-up into the first tenant's upstream task and context (and would
// forward that task's artifacts back if the agent accepted it; an agent
// that refuses messages to a finished task fails the new task instead).
func TestUpstreamLinkOutlivesTaskAcrossTenants(t *testing.T) {
	t.Parallel()
	for _, lenient := range []bool{false, true} {
		t.Run(map[bool]string{false: "agent refuses messages to finished tasks", true: "agent takes them"}[lenient], func(t *testing.T) {
			t.Parallel()
			linkReuse(t, lenient)
		})
	}
}

func linkReuse(t *testing.T, lenient bool) {
	f := startAgent(t, agentOptions{})
	f.mu.Lock()
	f.lazyFollowUp = lenient // answers a follow-up with the task as it stands
	f.mu.Unlock()
	rdb, prefix := redistest.New(t)
	p := strings.TrimSuffix(prefix, ":")
	log := testLog()
	keys := layout.New(p, 2)
	store := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: keys, Batch: groupcommit.New(rdb)}, taskstore.Config{}))
	hub := ingest.NewHub()
	committer := mustCommitter(ingest.CommitterDeps{Store: store, Turns: turnsOn(rdb, keys), URLs: urlsOn(rdb, keys), Hub: hub}, ingest.CommitterConfig{Retention: 100 * time.Millisecond}) // short retention
	ra := &routeAgent{}
	svc := mustService(ingest.ServiceDeps{Store: store, Commit: committer, Hub: hub, Agent: ra, Log: log}, ingest.Config{})
	pull := mustPull(ingest.PullDeps{Queue: workqueue.New(rdb, rdb, nil, layout.New(p, 0)), Commit: committer, Load: committer.Load, Log: log},
		ingest.PullConfig{Lease: 3 * time.Second}) // as app/agents.go wires it
	ra.q = pull.Queue("up")
	s := &stack{rdb: rdb, store: store, svc: svc, pull: pull, links: NewRedisLinks(rdb, layout.New(p, 2), time.Hour), agent: ra}
	s.startBridge(t, Config{URL: f.url})

	alice := tenant.With(context.Background(), "key:alice")
	bob := tenant.With(context.Background(), "key:bob")
	msg := a2a.Message{MessageID: "m-1", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "q"}}}
	if _, err := svc.Send(alice, a2a.SendParams{Dialect: a2a.V01, TaskID: "job-1", ClientChosenID: true, Message: msg}); err != nil {
		t.Fatal(err)
	}
	up := waitUpstream(t, f)
	f.emit(up, working(""), chunk("a1", "alice's private answer", false, true), state(a2a.StateCompleted, "done"))
	waitFor(t, "alice's task to complete", func() bool {
		v, err := svc.GetTask(alice, "job-1")
		return err == nil && v.Task.Status.State == a2a.StateCompleted
	})
	waitFor(t, "alice's task to expire", func() bool {
		_, err := svc.GetTask(alice, "job-1")
		return err != nil
	})

	// v0.1 gives every message a fresh id, so bob's turn is a "follow-up".
	bobMsg := msg
	bobMsg.MessageID = "m-2"
	if _, err := svc.Send(bob, a2a.SendParams{Dialect: a2a.V01, TaskID: "job-1", ClientChosenID: true, Message: bobMsg}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "bob's message to reach the agent", func() bool {
		_, n := f.lastSend()
		return n >= 2
	})
	sent, _ := f.lastSend()
	if sent.TaskID == up || sent.TaskID != "" {
		t.Errorf("bob's message was sent upstream as a follow-up into task %q (alice's is %s, contextId %q), not as a new task", sent.TaskID, up, sent.ContextID)
	}
	time.Sleep(200 * time.Millisecond)
	v, err := svc.GetTask(bob, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if v.Task.Status.State == a2a.StateFailed {
		t.Errorf("bob's fresh task failed: %s", texts(v.Task.Status.Message.Parts))
	}
	for _, a := range v.Task.Artifacts {
		if texts(a.Parts) == "alice's private answer" {
			t.Errorf("bob's task received alice's upstream artifact %q", texts(a.Parts))
		}
	}
}

// the app's Router.Cancel calls Cancel on every backend, so every
// bridge's Cancel runs for every canceled task. Links are keyed by relay
// task id alone, shared by all bridges (app/agents.go gives each the same
// prefix), so a bridge to agent B finds the link of a task that agent A
// works on and sends B a CancelTask for A's upstream task id.
func TestCancelOfOneUpstreamReachesAnother(t *testing.T) {
	t.Parallel()
	fa := startAgent(t, agentOptions{streaming: true})
	fb := startAgent(t, agentOptions{streaming: true})
	rdb, prefix := redistest.New(t)
	s := newStack(rdb, prefix, time.Minute)
	ba, _ := s.startBridge(t, Config{URL: fa.url})                                                            // queue "up": where the stack routes tasks
	bb := mustBridge(Deps{Pull: s.pull, Links: s.links, Log: testLog()}, Config{URL: fb.url, Queue: "other"}) // another upstream, same links
	s.agent.onCancel = func(id string) { ba.Cancel(id); bb.Cancel(id) }                                       // as Router.Cancel does

	v := s.send(t, "hello")
	up := waitUpstream(t, fa)
	fa.emit(up, working("step 1"), state(a2a.StateInputRequired, "which one?"))
	s.waitState(t, v.Task.ID, a2a.StateInputRequired)
	if _, err := s.svc.CancelTask(context.Background(), v.Task.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "agent A to get the cancel", func() bool { return len(fa.canceled()) > 0 })
	time.Sleep(300 * time.Millisecond)
	for _, c := range fb.callLog() {
		if c.Method == "CancelTask" {
			t.Fatalf("agent B, which never saw task %s, was sent CancelTask for agent A's task %s (calls %+v)", v.Task.ID, up, fb.callLog())
		}
	}
}
