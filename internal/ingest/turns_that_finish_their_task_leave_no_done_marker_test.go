package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A turn that finishes its task ends its lease with nothing kept (a later
// offer of the turn is dropped by the task's state at its claim); a turn
// that leaves the task waiting for its client keeps the done marker, by
// which a claim drops a later offer of that turn, for an hour.
func TestTurnsThatFinishTheirTaskLeaveNoDoneMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDeadlineTest(t, TaskLimits{})
	lease := func(id string) (string, time.Duration) {
		t.Helper()
		key := s.k.WorkQueue("q").Lease(id)
		v, err := s.rdb.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return "", 0
		}
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := s.rdb.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v, ttl
	}
	for _, end := range []a2a.TaskState{a2a.StateCompleted, a2a.StateInputRequired} {
		id := "t-" + string(end)
		msg := a2a.Message{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "go"}}}
		task := a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.StateSubmitted}, History: []a2a.Message{msg}}
		v, offer, err := s.commit.CreateOffered(ctx, task, a2a.V10, nil, taskstore.Offer{Queue: "q", MessageID: msg.MessageID})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.pull.Queue("q").Offer(ctx, v.Task, msg, offer); err != nil { // numbered, as the Service offers
			t.Fatal(err)
		}
		c := s.claim(t, time.Second)
		if c == nil || c.View.Task.ID != id {
			t.Fatalf("claim %+v", c)
		}
		if p, err := s.pull.Post(ctx, id, c.Work.LeaseID, []a2a.Event{status(a2a.StateWorking), status(end)}); err != nil || !p.Released {
			t.Fatalf("%s: %+v, %v", end, p, err)
		}
		marker, ttl := lease(id)
		switch {
		case end.Terminal() && marker != "":
			t.Errorf("a turn that completed its task left %q (for %v)", marker, ttl)
		case !end.Terminal() && (!strings.HasPrefix(marker, "done ") || ttl <= 59*time.Minute || ttl > time.Hour):
			t.Errorf("a turn that left its task %s left %q for %v; want a done marker for 1h", end, marker, ttl)
		}
	}
}
