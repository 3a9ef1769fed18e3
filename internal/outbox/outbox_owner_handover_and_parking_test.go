package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// outboxFixture commits one task with n events delivered to config c1
// through the outbox, and returns the store and the outbox entries.
func outboxFixture(t *testing.T, n int) (*fixture, []OutboxEntry) {
	t.Helper()
	s, _ := laneFixtureWith(t, 0, storeConfig{Outbox: true}) // the task, at version 1
	c := taskstore.Commit{TaskID: "run", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)}}
	for i := range n {
		c.Events = append(c.Events, []byte(`{"n":`+string(rune('1'+i))+`}`))
		c.Deliver = append(c.Deliver, true)
	}
	if _, err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	es, err := s.ReadOutbox(context.Background(), 0, "0-0", 100, 0)
	if err != nil || len(es) != n {
		t.Fatalf("outbox holds %d entries (%v), want %d", len(es), err, n)
	}
	return s, es
}

func (s *fixture) finishOp(t *testing.T, holder string, op OutboxOp) int {
	t.Helper()
	if op.Now.IsZero() {
		op.Now = time.Now()
	}
	res, err := s.FinishOutbox(context.Background(), 0, holder, op)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A commit on the outbox path writes no lane, no token and no record: one
// outbox entry per notification, which loads with its event and config.
// The record is made when the owner reports the attempt; until then the
// delivery API shows the notification pending, from the outbox.
func TestOutboxEntryLoadsItsEventAndGetsARecordWhenReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 2)
	if n := s.rdb.XLen(ctx, s.k.Deliveries(0)).Val(); n != 0 {
		t.Fatalf("the delivery stream holds %d tokens, want none", n)
	}
	if n := s.rdb.Exists(ctx, s.k.Record(0, es[0].NotificationID)).Val(); n != 0 {
		t.Fatal("a notification not yet attempted has a record")
	}
	// It is shown pending all the same, from the outbox.
	if r, err := s.Delivery(ctx, es[0].NotificationID); err != nil || r.Status != "pending" || r.Attempts != 0 || r.EventID != es[0].EventID {
		t.Fatalf("waiting notification %+v (%v), want it pending", r, err)
	}
	loaded, now, err := s.LoadOutbox(ctx, 0, es, LoadOptions{Status: true, Clock: true})
	if err != nil || now.IsZero() {
		t.Fatal(err, now)
	}
	if h := loaded[1].Head; string(h.Event) != `{"n":2}` || h.Version != 2 || string(h.Config) == "" || loaded[1].Status != "" {
		t.Fatalf("loaded %+v", loaded[1])
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
		t.Fatalf("done: %d", res)
	}
	r, err := s.Delivery(ctx, es[0].NotificationID)
	if err != nil || r.Status != "delivered" || r.Attempts != 1 || r.EventID != es[0].EventID {
		t.Fatalf("record %+v, %v", r, err)
	}
	// The task's event stream names both: it has no delivery index.
	if n := s.rdb.Exists(ctx, s.k.TaskDeliveries("run")).Val(); n != 0 {
		t.Fatal("the task has a delivery index")
	}
	list, _, err := s.ListDeliveries(ctx, DeliveryFilter{TaskID: "run", Limit: 10})
	statuses := map[string]string{}
	for _, r := range list {
		statuses[r.ID] = r.Status
	}
	if err != nil || len(list) != 2 || statuses[es[0].NotificationID] != "delivered" || statuses[es[1].NotificationID] != "pending" {
		t.Fatalf("the task lists %+v (%v), want the delivered one and the waiting one", list, err)
	}
	// One per page: the cursor goes through both, once each.
	page, cur, err := s.ListDeliveries(ctx, DeliveryFilter{TaskID: "run", Limit: 1})
	if err != nil || len(page) != 1 || cur == nil {
		t.Fatalf("first page %+v, cursor %v (%v)", page, cur, err)
	}
	next, _, err := s.ListDeliveries(ctx, DeliveryFilter{TaskID: "run", Limit: 1, Cursor: cur})
	if err != nil || len(next) != 1 || next[0].ID == page[0].ID {
		t.Fatalf("second page %+v after %+v (%v)", next, page, err)
	}
	pending, _, err := s.ListDeliveries(ctx, DeliveryFilter{Status: "pending", Limit: 10})
	if err != nil || len(pending) != 1 || pending[0].ID != es[1].NotificationID {
		t.Fatalf("pending across tasks: %+v (%v), want the waiting one", pending, err)
	}
}

// A new owner reads again from the stored offset; the entries that were in
// the outbox when it took the partition may be the previous owner's work,
// and those with a record are not delivered again.
func TestNewOwnerSkipsWhatThePreviousOwnerReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 3)
	if _, ok, err := s.Own(ctx, 0, "a", time.Minute); err != nil || !ok {
		t.Fatal("a cannot own the partition", err)
	}
	if _, ok, _ := s.Own(ctx, 0, "b", time.Minute); ok {
		t.Fatal("b owns a partition a holds")
	}
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered})
	if ok, err := s.KeepOwning(ctx, 0, "a", time.Minute, es[0].ID, false); err != nil || !ok {
		t.Fatal("a cannot store its offset", err)
	}
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[1], Outcome: Delivered}) // and a dies before storing the offset
	s.rdb.Del(ctx, s.k.OutboxOwner(0))

	o, ok, err := s.Own(ctx, 0, "b", time.Minute)
	if err != nil || !ok {
		t.Fatal("b cannot take the partition", err)
	}
	if o.Offset != es[0].ID || o.Last != es[2].ID {
		t.Fatalf("b starts from offset %s, last %s; want %s, %s", o.Offset, o.Last, es[0].ID, es[2].ID)
	}
	again, err := s.ReadOutbox(ctx, 0, o.Offset, 100, 0)
	if err != nil || len(again) != 2 || !o.MayBeDone(again[0].ID) || !o.MayBeDone(again[1].ID) {
		t.Fatalf("b reads %v (%v)", again, err)
	}
	loaded, _, err := s.LoadOutbox(ctx, 0, again, LoadOptions{Status: true})
	if err != nil {
		t.Fatal(err)
	}
	if loaded[0].Status != "delivered" || loaded[1].Status != "" {
		t.Fatalf("statuses %q, %q; want delivered (skip it) and none (deliver it)", loaded[0].Status, loaded[1].Status)
	}
	// Entries before the offset are trimmed when it is stored.
	if ok, _ := s.KeepOwning(ctx, 0, "b", time.Minute, es[2].ID, false); !ok {
		t.Fatal("b cannot store its offset")
	}
	if n := s.rdb.XLen(ctx, s.k.Outbox(0)).Val(); n != 1 {
		t.Fatalf("the outbox holds %d entries after the offset moved to its last, want 1", n)
	}
}

// A failed first attempt parks the notification in its lane with a retry
// token due later; later notifications of the lane queue behind it; once
// the lanes' workers have emptied the lane, it is no longer parked and the
// owner delivers again. Only the owner may park or append.
func TestParkedLaneQueuesLaterNotificationsUntilItEmpties(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 3)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("a cannot own the partition")
	}
	now := time.Now()
	park := OutboxOp{Kind: OpPark, Entry: es[0], Outcome: Retry, Attempt: []byte(`{"attempt":1}`), Now: now, First: now, Due: now.Add(time.Second)}
	if res := s.finishOp(t, "b", park); res != NotOwner {
		t.Fatalf("a park by another relay: %d, want refused", res)
	}
	if res := s.finishOp(t, "a", park); res != Applied {
		t.Fatalf("park: %d", res)
	}
	if r, _ := s.Delivery(ctx, es[0].NotificationID); r.Status != "failed" || r.Next.UnixMilli() != park.Due.UnixMilli() {
		t.Fatalf("parked record %+v", r)
	}
	o, _, _ := s.Own(ctx, 0, "a", time.Minute)
	if !o.Parked[es[0].Lane] {
		t.Fatalf("parked lanes %v, want %s", o.Parked, es[0].Lane)
	}
	if res := s.finishOp(t, "b", OutboxOp{Kind: OpAppend, Entry: es[1]}); res != NotOwner {
		t.Fatalf("an append by another relay: %d, want refused", res)
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[1]}); res != Applied {
		t.Fatalf("append: %d", res)
	}
	// Appended again by a new owner replaying it: the lane keeps one copy.
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[1], Replay: true}); res != Applied {
		t.Fatalf("replayed append: %d", res)
	}
	if l := s.rdb.LRange(ctx, es[0].Lane, 0, -1).Val(); len(l) != 2 {
		t.Fatalf("lane %v, want the parked notification and the one behind it", l)
	}
	if r, _ := s.Delivery(ctx, es[1].NotificationID); r.Status != "pending" {
		t.Fatalf("queued record %+v, want pending", r)
	}
	// The retry comes due; the lanes' workers deliver both.
	if n, _, err := s.MoveDue(ctx, 0, now.Add(2*time.Second), 10); err != nil || n != 1 {
		t.Fatalf("moved %d retries (%v), want 1", n, err)
	}
	for range 2 {
		tok := readOne(t, s, "w")
		h := begun(t, s, tok, "w")
		if _, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, false)); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.rdb.Exists(ctx, es[0].Lane).Val(); n != 0 {
		t.Fatal("the lane is not empty")
	}
	if n := s.rdb.SCard(ctx, s.k.Parked(0)).Val(); n != 0 {
		t.Fatal("the emptied lane is still listed as parked")
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[2]}); res != LaneEmpty {
		t.Fatalf("append to the emptied lane: %d, want LaneEmpty (deliver it)", res)
	}
}

// Lanes that hold notifications from before the outbox (the previous
// version's, or RELAY_DELIVERY_PATH=lanes) are adopted as parked once per
// partition, so that the outbox's notifications of the same (task, config)
// queue behind them; after the lanes path was taken again they are adopted
// again.
func TestOutboxAdoptsTheLanesItFinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lanes, _ := laneFixture(t, 2) // two notifications queued on the lanes path
	s := newFixture(lanes.rdb, storeConfig{Prefix: lanes.k.Prefix(), Partitions: 1, Outbox: true})
	c := taskstore.Commit{TaskID: "run", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now(), Events: [][]byte{[]byte(`{"n":3}`)}, Deliver: []bool{true}}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	es, err := s.ReadOutbox(ctx, 0, "0-0", 10, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("outbox %v (%v)", es, err)
	}
	adopted, err := s.AdoptLanes(ctx, 0)
	if err != nil || len(adopted) != 1 || adopted[0] != es[0].Lane {
		t.Fatalf("adopted %v (%v), want the lane %s", adopted, err, es[0].Lane)
	}
	if again, _ := s.AdoptLanes(ctx, 0); len(again) != 0 {
		t.Fatalf("adopted %v a second time", again)
	}
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpAppend, Entry: es[0]}); res != Applied {
		t.Fatalf("append behind the adopted lane: %d", res)
	}
	if l := s.rdb.LRange(ctx, es[0].Lane, 0, -1).Val(); len(l) != 3 || !strings.HasPrefix(l[2], es[0].EventID+" ") {
		t.Fatalf("lane %v, want the outbox's notification behind the two before it", l)
	}
	if err := s.ForgetAdoptions(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.AdoptLanes(ctx, 0); len(again) != 1 {
		t.Fatalf("after the lanes path, adopted %v, want the lane again", again)
	}
}

// On the outbox path a redelivery goes to the end of the outbox (marked),
// not straight into the lane, so that the owner queues it in order with
// the lane's later notifications; its record keeps its attempts.
func TestRedeliveryGoesThroughTheOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 2)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Dead, Attempt: []byte(`{"attempt":1}`), Reason: "x"})
	if err := s.Redeliver(ctx, es[0].NotificationID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := s.rdb.LLen(ctx, es[0].Lane).Val(); n != 0 {
		t.Fatalf("the lane holds %d entries, want none (the redelivery waits in the outbox)", n)
	}
	again, err := s.ReadOutbox(ctx, 0, es[1].ID, 10, 0)
	if err != nil || len(again) != 1 || !again[0].Redelivery || again[0].NotificationID != es[0].NotificationID {
		t.Fatalf("outbox after the last entry: %+v (%v), want the redelivery", again, err)
	}
	if r, _ := s.Delivery(ctx, es[0].NotificationID); r.Status != "pending" || r.Attempts != 1 {
		t.Fatalf("redelivered record %+v", r)
	}
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: again[0], Outcome: Delivered, Attempt: []byte(`{"attempt":2}`), Replay: true})
	if r, _ := s.Delivery(ctx, es[0].NotificationID); r.Status != "delivered" || r.Attempts != 2 || len(r.AttemptLog) != 2 {
		t.Fatalf("record after the redelivery %+v, want delivered with both attempts", r)
	}
}

// A former owner's late report (its lease ran out, another relay took
// the partition and reported the notification first) adds its attempt to
// the record; it does not replace the record.
func TestFormerOwnersReportAddsToTheRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 1)
	if _, ok, _ := s.Own(ctx, 0, "b", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	s.finishOp(t, "b", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"by":"b"}`)})
	s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"by":"a"}`)})
	if r, _ := s.Delivery(ctx, es[0].NotificationID); r.Attempts != 2 || len(r.AttemptLog) != 2 {
		t.Fatalf("record %+v, want both owners' attempts", r)
	}
}

// The queue depth counts the notifications waiting in an outbox, and their
// age; those before the owner's stored offset are done.
func TestDepthCountsTheOutboxBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 3)
	d, err := s.Depths(ctx)
	if err != nil || d[0].Waiting != 3 || d[0].OldestPending <= 0 {
		t.Fatalf("depth %+v (%v), want 3 waiting", d, err)
	}
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	if ok, _ := s.KeepOwning(ctx, 0, "a", time.Minute, es[1].ID, false); !ok {
		t.Fatal("cannot store the offset")
	}
	if d, err = s.Depths(ctx); err != nil || d[0].Waiting != 1 {
		t.Fatalf("depth %+v (%v), want 1 waiting after the offset", d, err)
	}
	if ok, _ := s.KeepOwning(ctx, 0, "a", time.Minute, es[2].ID, false); !ok {
		t.Fatal("cannot store the offset")
	}
	if d, err = s.Depths(ctx); err != nil || d[0].Waiting != 0 || d[0].OldestPending != 0 {
		t.Fatalf("depth %+v (%v), want nothing waiting", d, err)
	}
}

// A script call sent twice (go-redis sends a pipeline again after a lost
// reply) parks and appends once.
func TestParkAndAppendSentTwiceApplyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 2)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	now := time.Now()
	park := OutboxOp{Kind: OpPark, Entry: es[0], Outcome: Retry, Attempt: []byte(`{}`), Now: now, First: now, Due: now.Add(time.Minute)}
	appendOp := OutboxOp{Kind: OpAppend, Entry: es[1], Now: now}
	for range 2 {
		s.finishOp(t, "a", park)
		s.finishOp(t, "a", appendOp)
	}
	if l := s.rdb.LRange(ctx, es[0].Lane, 0, -1).Val(); len(l) != 2 {
		t.Fatalf("lane %v, want each notification once", l)
	}
	if n := s.rdb.ZCard(ctx, s.k.Retries(0)).Val(); n != 1 {
		t.Fatalf("%d retry tokens, want 1", n)
	}
}
