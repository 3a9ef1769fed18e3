package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// Pull.Post fills in each event's task id on its own copy: a caller that
// posts one slice of events for several tasks (from several goroutines)
// finds it as it was, and no post races another's.
func TestWorkerPostsLeaveTheCallersEventsAsTheyWere(t *testing.T) {
	t.Parallel()
	s := newDeadlineTest(t, TaskLimits{})
	s.submit(t, "t", "")
	c := s.claim(t, time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	events := []a2a.Event{status(a2a.StateWorking)}
	events[0].TaskID = ""
	if _, err := s.pull.Post(context.Background(), "t", c.Work.LeaseID, events); err != nil {
		t.Fatal(err)
	}
	if id := events[0].TaskID; id != "" {
		t.Fatalf("the caller's event now names task %q; want it untouched", id)
	}
	if st := s.task(t, "t").Status.State; st != a2a.StateWorking {
		t.Fatalf("task is %s, want working", st)
	}
}
