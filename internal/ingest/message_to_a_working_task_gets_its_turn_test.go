package ingest

import (
	"context"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// A client's message to a task that is working (the task stays working,
// the message is offered as a turn of its own) runs after the current
// turn, even when that turn leaves the task waiting for its client: the
// message is not lost as stale.
func TestMessageToAWorkingTaskRunsAfterTheCurrentTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, false)
	v := s.send(t, "", "m1")
	c := s.claim(t, "w1")
	if c == nil {
		t.Fatal("no claim")
	}
	if _, err := s.pull.Post(ctx, c.Work.TaskID, c.Work.LeaseID,
		[]a2a.Event{{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: a2a.StateWorking}}}); err != nil {
		t.Fatal(err)
	}
	// The client adds a message while the worker works on m1.
	if v := s.send(t, v.Task.ID, "m2"); v.Task.Status.State != a2a.StateWorking {
		t.Fatalf("state %s", v.Task.Status.State)
	}
	// The worker's turn ends asking for input.
	if _, err := s.pull.Post(ctx, c.Work.TaskID, c.Work.LeaseID,
		[]a2a.Event{{Kind: a2a.EventStatus, Status: &a2a.TaskStatus{State: a2a.StateInputRequired}}}); err != nil {
		t.Fatal(err)
	}
	c2 := s.claim(t, "w2")
	if c2 == nil || c2.Message.MessageID != "m2" {
		t.Fatalf("claim after the turn = %+v (queued %d); the client's message m2 was never handed to a worker", c2, s.queued(t))
	}
	if c2.View.Task.Status.State != a2a.StateInputRequired {
		t.Fatalf("the task is %s at the claim, want input-required (as the last turn left it)", c2.View.Task.Status.State)
	}
	// The worker of m2 takes the task up again.
	s.post(t, c2, a2a.StateCompleted)
}

// Two turns queued before anyone claims (the client sent m2 to the
// submitted task) run in order: m1 first, then m2.
func TestTurnsQueuedBeforeAClaimRunInOrder(t *testing.T) {
	t.Parallel()
	s := newOfferStack(t, false)
	v := s.send(t, "", "m1")
	s.send(t, v.Task.ID, "m2") // before anyone claims: the task is submitted
	c := s.claim(t, "w1")
	if c == nil || c.Message.MessageID != "m1" {
		t.Fatalf("first claim = %+v; want turn m1 (the client's first message)", c)
	}
	if c2 := s.claim(t, "w2"); c2 != nil {
		t.Fatalf("turn m2 granted beside m1: %+v", c2)
	}
	s.post(t, c, a2a.StateInputRequired)
	if n := s.queued(t); n != 1 {
		t.Fatalf("%d queued after turn m1, want 1 (turn m2's)", n)
	}
}
