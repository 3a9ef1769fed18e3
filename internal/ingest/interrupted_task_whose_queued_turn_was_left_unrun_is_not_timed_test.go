package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/workqueue"
)

// A turn claimed while its task is interrupted starts no run limit at its
// claim: an agent that has nothing to run for it (the demo, whose plan
// has no step for an interrupted task) ends the lease without a commit,
// and a task that waits for its client, with no turn running, is never
// failed at a run limit.
func TestTurnClaimedWhileInterruptedAndLeftUnrunDoesNotTimeTheClient(t *testing.T) {
	t.Parallel()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Run: time.Minute}})
	ctx := context.Background()
	s.submit(t, "t", "")
	c := s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	if _, err := s.pull.Post(ctx, "t", c.Work.LeaseID, []a2a.Event{status(a2a.StateWorking)}); err != nil {
		t.Fatal(err)
	}
	m2 := a2a.Message{MessageID: "m2", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "more"}}}
	v, offer, err := s.commit.AppendOffered(ctx, "t", taskstore.Offer{Queue: "q", MessageID: "m2"},
		a2a.Event{Kind: a2a.EventMessage, TaskID: "t", Message: &m2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.pull.Queue("q").Offer(ctx, v.Task, m2, offer); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pull.Post(ctx, "t", c.Work.LeaseID, []a2a.Event{status(a2a.StateInputRequired)}); err != nil {
		t.Fatal(err)
	}
	c2 := s.claim(t, time.Second)
	if c2 == nil {
		t.Fatal("no second claim")
	}
	// What Demo.handle does with a turn whose plan has nothing to run on
	// an interrupted task: end the lease, LeaseDone, no commit.
	if err := s.pull.q.Renew(ctx, c2.Work.LeaseID, "t", workqueue.LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	s.clock.add(2 * time.Hour)
	s.sweeper.RunOnce(ctx)
	if st := s.task(t, "t").Status.State; st != a2a.StateInputRequired {
		t.Fatalf("a task waiting for its client, with no turn running, is %s after the run limit; want input-required", st)
	}
}
