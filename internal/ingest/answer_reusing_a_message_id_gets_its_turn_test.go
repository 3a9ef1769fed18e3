package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/workqueue"
	"github.com/redis/go-redis/v9"
)

// A client whose answer to input-required reuses the message id of its
// first message (message ids are the client's) while the worker's lease is
// still held (Pull.post commits input-required, then ends the lease in a
// second step) gets its turn: the work queue tells turns apart by number,
// not by message id, and the claim prompts the worker with the answer.
func TestAnswerReusingAMessageIDGetsItsTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newOfferStack(t, false)
	v := s.send(t, "", "m1")
	c := s.claim(t, "w1")
	if c == nil {
		t.Fatal("no claim")
	}
	// Pull.post's commit of input-required, before its LeaseDone.
	if _, err := s.commit.Append(ctx, v.Task.ID, a2a.Event{Kind: a2a.EventStatus, TaskID: v.Task.ID,
		Status: &a2a.TaskStatus{State: a2a.StateWorking}}, a2a.Event{Kind: a2a.EventStatus, TaskID: v.Task.ID,
		Status: &a2a.TaskStatus{State: a2a.StateInputRequired}}); err != nil {
		t.Fatal(err)
	}
	// The client's answer, same message id.
	if _, err := s.svc.Send(ctx, a2a.SendParams{Dialect: a2a.V10, TaskID: v.Task.ID,
		Message: a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "the answer"}}}}); err != nil {
		t.Fatal(err)
	}
	if c2 := s.claim(t, "w2"); c2 != nil {
		t.Fatalf("granted beside the lease: %+v", c2)
	}
	// Pull.post's LeaseDone.
	claims := workqueue.New(s.rdb, s.rdb, nil, s.k)
	if err := claims.Renew(ctx, c.Work.LeaseID, v.Task.ID, workqueue.LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	if s.queued(t) != 1 {
		got, _ := s.commit.Load(ctx, v.Task.ID)
		t.Fatalf("the answer's turn is gone: task %s, %d queued, %d offer records", got.Task.Status.State, s.queued(t), len(s.records(t, v.Task.ID)))
	}
	// The entry w2's claim read waits a lease; let that time pass.
	stream := s.k.WorkQueue("q").Stream
	pending, err := s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: layout.Group, Start: "-", End: "+", Count: 1}).Result()
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %v, %v", pending, err)
	}
	if err := s.rdb.Do(ctx, "XCLAIM", stream, layout.Group, "w2", 0, pending[0].ID,
		"IDLE", (s.pull.Lease() + time.Second).Milliseconds(), "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}
	// (A claim searches for expired leases again up to a second after a
	// search that found none: wait past that.)
	c3, err := s.pull.Claim(ctx, "q", "w3", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c3 == nil || c3.Work.Turn <= c.Work.Turn || len(c3.Message.Parts) != 1 || c3.Message.Parts[0].Text != "the answer" {
		t.Fatalf("claim of the answer's turn = %+v; want a later turn, prompted with the answer", c3)
	}
}
