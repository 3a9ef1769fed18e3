package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// During a rolling change of the turn limits (one instance configured,
// another not yet), a task created through the configured instance and
// claimed through the other has its turn record moved by that claim: the
// running task is not failed as unclaimed, and its run limit applies.
func TestTurnClaimedThroughAnInstanceWithoutLimitsKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	limited := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Wait: time.Minute, Run: time.Hour}})
	plain := newDeadlineStack(limited.rdb, limited.k, limited.clock, TaskLimits{})
	limited.submit(t, "t", "")
	claimedAt := limited.clock.now()
	c := plain.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	if _, err := plain.pull.Post(context.Background(), "t", c.Work.LeaseID, []a2a.Event{status(a2a.StateWorking)}); err != nil {
		t.Fatal(err)
	}
	if due, ok := limited.due(t, "t"); !ok || !due.Equal(claimedAt.Add(time.Hour)) {
		t.Fatalf("listed at %v (%v), want the claim + the 1h run limit", due, ok)
	}
	limited.clock.add(2 * time.Minute) // past the wait limit
	if n := limited.sweeper.RunOnce(context.Background()); n != 0 {
		task := limited.task(t, "t")
		t.Fatalf("a claimed, running task was failed: %q", task.Status.Message.Parts[0].Text)
	}
	limited.clock.add(time.Hour) // past the run limit
	if n := limited.sweeper.RunOnce(context.Background()); n != 1 {
		t.Fatalf("swept %d, want the task past its run limit", n)
	}
	limited.failedWith(t, "t", "relay: the task ran 1h2m; the limit is 1h (max run)")
}
