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
	c2 := claimQueuedTurnOfInterruptedTask(t, s)
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
