package outbox

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// commandLog records the names of the commands a client sends.
type commandLog struct {
	mu    sync.Mutex
	names []string
}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			l.add(c)
		}
		return next(ctx, cmds)
	}
}

func (l *commandLog) add(c redis.Cmder) {
	l.mu.Lock()
	l.names = append(l.names, c.Name())
	l.mu.Unlock()
}

func (l *commandLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.names
	l.names = nil
	return n
}

// The usual report, a delivered first attempt, costs Redis one SET and no
// script: the commit named the notification's config in its event's
// stream entry already, whence its task's deliveries are listed (it wrote
// no delivery index), so the record is all that is left.
func TestDeliveredFirstAttemptIsReportedWithOneSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 1)
	e := es[0]
	if !e.Indexed || !e.Named {
		t.Fatal("the commit's outbox entry is not marked as named by its event's entry")
	}
	ms, _ := strconv.ParseInt(idMs(e.ID), 10, 64)
	if ev, err := s.rdb.XRange(ctx, s.EventsKey("run"), e.EventID, e.EventID).Result(); err != nil || len(ev) != 1 ||
		!slices.Contains(layout.DecodeEventEntry(ev[0].Values).Configs, "c1") {
		t.Fatalf("the event's entry %v (%v) does not name config c1", ev, err)
	}
	if n := s.rdb.Exists(ctx, s.k.TaskDeliveries("run")).Val(); n != 0 {
		t.Fatal("the commit wrote the task's delivery index")
	}
	log := &commandLog{}
	s.rdb.AddHook(log)
	attempt := []byte(`{"attempt":1,"status":204}`)
	now := time.Now()
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: attempt, Now: now}); res != Applied {
		t.Fatalf("done: %d", res)
	}
	if got := log.take(); !slices.Equal(got, []string{"set"}) {
		t.Fatalf("the report sent %q, want one set", got)
	}
	r, err := s.Delivery(ctx, e.NotificationID)
	if err != nil || r.Status != "delivered" || r.Attempts != 1 || len(r.AttemptLog) != 1 || string(r.AttemptLog[0]) != string(attempt) ||
		r.Created.UnixMilli() != ms || r.Updated.UnixMilli() != now.UnixMilli() || !r.Next.IsZero() || r.EventID != e.EventID ||
		r.TaskID != "run" || r.ConfigID != "c1" {
		t.Fatalf("record %+v (%v)", r, err)
	}
	if ttl := s.rdb.PTTL(ctx, s.k.Record(0, e.NotificationID)).Val(); ttl < s.keep-time.Minute || ttl > s.keep {
		t.Fatalf("the record expires in %v, want the retention %v", ttl, s.keep)
	}
	// The record Go wrote is the scripts' codec: a former owner's late
	// report of its own attempt is added to it.
	if res := s.finishOp(t, "b", OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: []byte(`{"attempt":"b"}`), Replay: true}); res != Applied {
		t.Fatalf("replayed done: %d", res)
	}
	r, err = s.Delivery(ctx, e.NotificationID)
	if err != nil || r.Attempts != 2 || len(r.AttemptLog) != 2 || string(r.AttemptLog[1]) != `{"attempt":"b"}` || r.Created.UnixMilli() != ms || r.EventID != e.EventID {
		t.Fatalf("record after a second report %+v (%v)", r, err)
	}
}

// A report sent twice (go-redis sends a pipeline again after a lost reply)
// finds its own record the second time; its attempt is logged once.
func TestDeliveredReportSentTwiceLogsItsAttemptOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 1)
	op := OutboxOp{Kind: OpDone, Entry: es[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1,"time":"2026-11-25T20:01:02.123456789Z"}`), Now: time.Now()}
	for range 2 {
		if res := s.finishOp(t, "a", op); res != Applied {
			t.Fatalf("done: %d", res)
		}
	}
	if r, err := s.Delivery(ctx, es[0].NotificationID); err != nil || r.Attempts != 1 || len(r.AttemptLog) != 1 {
		t.Fatalf("record %+v (%v), want the attempt logged once", r, err)
	}
}

// An outbox entry a previous relay wrote (its commit did not index it) is
// indexed when it is reported, and the index gets its expiry then.
func TestPreviousRelaysOutboxEntryIsIndexedWhenReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, es := outboxFixture(t, 1)
	e := es[0]
	// As the previous relay left it: no index, an entry without i.
	s.rdb.Del(ctx, s.k.TaskDeliveries("run"))
	s.rdb.XDel(ctx, s.k.Outbox(0), e.ID)
	id := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.k.Outbox(0), Values: []string{"t", e.TaskID, "c", e.ConfigID, "e", e.EventID, "n", e.NotificationID}}).Val()
	old, err := s.ReadOutbox(ctx, 0, e.ID, 10, 0)
	if err != nil || len(old) != 1 || old[0].ID != id || old[0].Indexed {
		t.Fatalf("read %+v (%v), want the previous relay's entry, not indexed", old, err)
	}
	if res := s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: old[0], Outcome: Delivered, Attempt: []byte(`{"attempt":1}`)}); res != Applied {
		t.Fatalf("done: %d", res)
	}
	ms, _ := strconv.ParseInt(idMs(id), 10, 64)
	if sc, err := s.rdb.ZScore(ctx, s.k.TaskDeliveries("run"), e.NotificationID).Result(); err != nil || int64(sc) != ms {
		t.Fatalf("index score %v (%v), want %d", sc, err, ms)
	}
	if ttl := s.rdb.PTTL(ctx, s.k.TaskDeliveries("run")).Val(); ttl < s.keep || ttl > s.keep*3/2 {
		t.Fatalf("the task's delivery index expires in %v, want between %v and 1.5 times that", ttl, s.keep)
	}
	if r, err := s.Delivery(ctx, e.NotificationID); err != nil || r.Status != "delivered" || r.Attempts != 1 {
		t.Fatalf("record %+v (%v)", r, err)
	}
}
