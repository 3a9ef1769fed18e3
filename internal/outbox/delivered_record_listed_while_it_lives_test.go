package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// storeKeeping is a one-partition store with retention keep on the outbox
// path or the lanes, and one commit of task "run" (one event, config c1):
// on the outbox path, its outbox entries. Its task retention is shorter,
// so its commits list their notifications in the task's delivery index.
func storeKeeping(t *testing.T, keep time.Duration, outbox bool) (*fixture, []OutboxEntry) {
	t.Helper()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, DeliveryRetention: keep, TaskRetention: keep / 2,
		Outbox: outbox})
	if err := s.EnsureGroups(ctx); err != nil {
		t.Fatal(err)
	}
	c := taskstore.Commit{TaskID: "run", Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)},
		Events:      [][]byte{[]byte(`{"n":1}`)}, Deliver: []bool{true}}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if !outbox {
		return s, nil
	}
	es, err := s.ReadOutbox(ctx, 0, "0-0", 10, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("outbox %+v (%v)", es, err)
	}
	return s, es
}

func listedForTask(t *testing.T, s *fixture, id string) bool {
	t.Helper()
	list, _, err := s.ListDeliveries(context.Background(), DeliveryFilter{TaskID: "run", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.ID == id {
			return true
		}
	}
	return false
}

// A delivered record is listed for its task (GET /v1/deliveries?task=)
// for as long as it can be read by id, however late the owner reports it
// (a backlog, a relay outage): on the outbox path the commit keeps the
// task's delivery index at least a retention, and the record made at the
// report expires a retention after the commit too (as one the lanes path
// makes at the commit; reported after that, it is expired at once).
func TestDeliveredRecordIsListedForItsTaskWhileItLives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keep := 4 * time.Second
	s, es := storeKeeping(t, keep, true)
	id := es[0].NotificationID
	time.Sleep(2400 * time.Millisecond) // reported 2.4s after the commit
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1}`), Now: time.Now()}); res != Applied {
		t.Fatalf("done: %d", res)
	}
	// The record dies no later than the index that lists it: a retention
	// after the commit (not after the report), the index 1.5 retentions.
	record, index := s.rdb.PTTL(ctx, s.k.Record(0, id)).Val(), s.rdb.PTTL(ctx, s.k.TaskDeliveries("run")).Val()
	if record <= 0 || record > index {
		t.Fatalf("the record expires in %v, its task's delivery index in %v: it would outlive its listing", record, index)
	}
	list, _, err := s.ListDeliveries(ctx, DeliveryFilter{TaskID: "run", Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Status != "delivered" {
		t.Fatalf("the task lists %+v (%v), want its delivered record", list, err)
	}
}
