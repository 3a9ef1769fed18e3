package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A worker whose heartbeat answer "canceled" was lost sends the heartbeat
// again, after its lease ended: it is told canceled again, with the
// deadline's reason, not that its lease is lost. So is a worker whose task
// the client canceled.
func TestHeartbeatSentAgainAfterADeadlineStillSaysCanceled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{Turn: taskstore.TurnLimits{Run: time.Minute}})
	s.submit(t, "t", "")
	c := s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	s.clock.add(2 * time.Minute)
	if n := s.sweeper.RunOnce(ctx); n != 1 {
		t.Fatalf("swept %d", n)
	}
	first, err := s.pull.Heartbeat(ctx, "t", c.Work.LeaseID)
	if err != nil || !first.Canceled || first.Reason == "" {
		t.Fatalf("first heartbeat: %+v %v", first, err)
	}
	for range 2 { // its answer was lost; the worker sends it again
		if b, err := s.pull.Heartbeat(ctx, "t", c.Work.LeaseID); err != nil || b != first {
			t.Fatalf("heartbeat sent again: %+v, %v; want %+v", b, err, first)
		}
	}
}

func TestHeartbeatSentAgainAfterACancelStillSaysCanceled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{})
	s.submit(t, "t", "")
	c := s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	if _, err := s.commit.Append(ctx, "t", a2a.Event{Kind: a2a.EventStatus, TaskID: "t", Status: &a2a.TaskStatus{State: a2a.StateCanceled}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if b, err := s.pull.Heartbeat(ctx, "t", c.Work.LeaseID); err != nil || !b.Canceled || b.State != a2a.StateCanceled {
			t.Fatalf("heartbeat %d: %+v, %v; want canceled", i+1, b, err)
		}
	}
}
