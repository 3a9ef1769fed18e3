package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// claimQueuedTurnOfInterruptedTask: task "t" is claimed (its first turn)
// and working; the client sends m2 while it works (a turn of its own,
// recorded and offered as the Service does, queued behind the first); the
// first turn ends in input-required, which ends its deadline record; a
// worker claims m2's turn while the task is interrupted, which times
// nothing yet. It returns that claim.
func claimQueuedTurnOfInterruptedTask(t *testing.T, s *deadlineStack) *Claimed {
	t.Helper()
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
	s.clock.add(time.Minute)
	if _, err := s.pull.Post(ctx, "t", c.Work.LeaseID, []a2a.Event{status(a2a.StateInputRequired)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.due(t, "t"); ok {
		t.Fatal("an interrupted task is still listed")
	}
	s.clock.add(time.Minute)
	c2 := s.claim(t, time.Second)
	if c2 == nil || c2.Message.MessageID != "m2" {
		t.Fatalf("second claim %+v", c2)
	}
	if _, ok := s.due(t, "t"); ok {
		t.Fatal("the claim of a turn of an interrupted task timed it: nothing runs until its agent takes the task up")
	}
	return c2
}

// queuedTurnClaimedWhileInterrupted is claimQueuedTurnOfInterruptedTask,
// whose worker then takes the task up again (posts working) a second
// later: it returns the claim and the time of that post, which starts the
// turn's run limit.
func queuedTurnClaimedWhileInterrupted(t *testing.T, s *deadlineStack) (*Claimed, time.Time) {
	t.Helper()
	c2 := claimQueuedTurnOfInterruptedTask(t, s)
	s.clock.add(time.Second)
	resumedAt := s.clock.now()
	if _, err := s.pull.Post(context.Background(), "t", c2.Work.LeaseID, []a2a.Event{status(a2a.StateWorking)}); err != nil {
		t.Fatal(err)
	}
	return c2, resumedAt
}

// A turn claimed while its task is interrupted (a message queued while the
// task worked) runs under its run limit from when its agent takes the task
// up again: that commit starts no wait for a claim that was made, so the
// running turn is not failed as unclaimed.
func TestTurnClaimedWhileInterruptedIsNotFailedAsUnclaimed(t *testing.T) {
	t.Parallel()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: time.Minute, Run: time.Hour}})
	_, resumedAt := queuedTurnClaimedWhileInterrupted(t, s)
	if due, ok := s.due(t, "t"); !ok || !due.Equal(resumedAt.Add(time.Hour)) {
		t.Fatalf("listed at %v (%v), want the agent's resumption + the 1h run limit (%v)", due, ok, resumedAt.Add(time.Hour))
	}
	s.clock.add(30 * time.Minute) // past the wait limit, within the run limit
	if n := s.sweeper.RunOnce(context.Background()); n != 0 {
		task := s.task(t, "t")
		t.Fatalf("a claimed turn 30m into its 1h run limit was failed: %s %q", task.Status.State, task.Status.Message.Parts[0].Text)
	}
	if st := s.task(t, "t").Status.State; st != a2a.StateWorking {
		t.Fatalf("the task is %s, want working", st)
	}
}

// The same turn under a run limit only is failed once it ran past it.
func TestTurnClaimedWhileInterruptedIsFailedPastItsRunLimit(t *testing.T) {
	t.Parallel()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Run: time.Minute}})
	_, resumedAt := queuedTurnClaimedWhileInterrupted(t, s)
	if due, ok := s.due(t, "t"); !ok || !due.Equal(resumedAt.Add(time.Minute)) {
		t.Fatalf("listed at %v (%v), want the agent's resumption + the 1m run limit (%v)", due, ok, resumedAt.Add(time.Minute))
	}
	s.clock.add(2 * time.Hour)
	if n := s.sweeper.RunOnce(context.Background()); n != 1 {
		t.Fatalf("swept %d, want the one turn past its run limit", n)
	}
	s.failedWith(t, "t", "relay: the task ran 2h; the limit is 1m (max run)")
}
