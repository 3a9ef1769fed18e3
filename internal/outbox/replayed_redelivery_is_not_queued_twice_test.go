package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// A redelivery a previous owner appended behind a parked lane is caught up
// by the next owner (its status read at load is "pending"). If the lanes'
// workers deliver it before the new owner's replayed append, the append
// finds it reported and does nothing: it is not queued again behind the
// lane's later notification.
func TestReplayedRedeliveryIsNotQueuedTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 3) // N1, N2, N3 of lane run/c1
	lane := es[0].Lane
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("own")
	}
	now := time.Now()
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{}`)})
	s.finishOp(t, "a", OutboxOp{Kind: OpPark, Entry: es[1], Outcome: Retry, Attempt: []byte(`{}`), Now: now, First: now, Due: now.Add(time.Second)})
	s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[2]})
	// The operator redelivers N1 (R), then a later notification N4 of the lane is committed.
	if err := s.Redeliver(ctx, es[0].NotificationID, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := taskstore.Commit{TaskID: "run", Version: 2, Snapshot: []byte(`{}`), UpdatedAt: time.Now(), Events: [][]byte{[]byte(`{"n":4}`)}, Deliver: []bool{true}}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	all, _ := s.ReadOutbox(ctx, 0, "0-0", 10, 0)
	if len(all) != 5 || !all[3].Redelivery {
		t.Fatalf("outbox %+v", all)
	}
	r, n4 := all[3], all[4]
	// a appends R and N4 behind the parked lane, then dies before storing its offset.
	s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: r, Replay: true})
	s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: n4})
	s.rdb.Del(ctx, s.k.OutboxOwner(0))

	o, ok, _ := s.Own(ctx, 0, "b", time.Minute)
	if !ok || !o.Parked[lane] {
		t.Fatal("b cannot own, or the lane is not parked")
	}
	again, _ := s.ReadOutbox(ctx, 0, o.Offset, 10, 0)
	loaded, _, err := s.LoadOutbox(ctx, 0, again, LoadOptions{Status: true})
	if err != nil {
		t.Fatal(err)
	}
	var todo []OutboxEntry // dispatch's rule
	for i, e := range again {
		if loaded[i].Status != "" && !(e.Redelivery && loaded[i].Status == "pending") {
			continue
		}
		todo = append(todo, e)
	}
	if len(todo) != 1 || todo[0].ID != r.ID {
		t.Fatalf("b works on %+v, want R only", todo)
	}
	// Meanwhile the lanes' workers retry N2 and deliver N2, N3 and R; N4 is left (its POST next).
	if n, _, err := s.MoveDue(ctx, 0, now.Add(2*time.Second), 10); err != nil || n != 1 {
		t.Fatalf("MoveDue %d %v", n, err)
	}
	for range 3 {
		tok := readOne(t, s, "w")
		h := begun(t, s, tok, "w")
		if _, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, false)); err != nil {
			t.Fatal(err)
		}
	}
	// b's lane goroutine gets its slot: R's lane is parked, so it appends (a replay).
	if res := s.finishOp(t, "b", OutboxOp{Kind: OpAppend, Entry: r, Replay: true}); res != Applied {
		t.Fatalf("append %d", res)
	}
	l := s.rdb.LRange(ctx, lane, 0, -1).Val()
	if len(l) != 1 {
		rec, _ := s.Delivery(ctx, r.NotificationID)
		t.Fatalf("lane %v: R (%s, already delivered by the lanes: record %s, %d attempts) is queued again behind N4 (%s)",
			l, r.NotificationID, rec.Status, rec.Attempts, strings.Fields(l[0])[1])
	}
}
