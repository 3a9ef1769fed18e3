package outbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A redelivery's outbox entry refers to an old event, older than the
// outbox's first entry: compaction keeps it while the redelivery waits.
func TestCompactionSparesTheOldEventOfAWaitingRedelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10, Outbox: true})
	commitN(t, s, "busy", 1, 40, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	es, _ := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("own")
	}
	for _, e := range es {
		s.finishOp(t, "a", OutboxOp{Kind: OpDone, Entry: e, Outcome: Dead, Reason: "x"})
	}
	s.KeepOwning(ctx, 0, "a", time.Minute, es[len(es)-1].ID, false)
	time.Sleep(5 * time.Millisecond)
	// The operator redrives the first notification; the owner has not read it yet.
	if err := s.Redeliver(ctx, es[0].NotificationID, time.Now()); err != nil {
		t.Fatal(err)
	}
	compact(t, s, "busy")
	red, _ := s.ReadOutbox(ctx, 0, es[len(es)-1].ID, 10, 0)
	if len(red) != 1 || !red[0].Redelivery {
		t.Fatalf("outbox %+v", red)
	}
	loaded, _, err := s.LoadOutbox(ctx, 0, red, LoadOptions{Status: true})
	if err != nil {
		t.Fatal(err)
	}
	if loaded[0].Head.Event == nil {
		t.Fatalf("compaction cut event %s the redelivery waiting in the outbox refers to: the owner will drop it as expired", red[0].EventID)
	}
}

// With Redis's clock stepped back (NTP, a failover to a replica whose clock
// is behind), XADD * keeps the outbox's ids at its last ms while a task's
// new event stream gets ids at the lower clock: compaction goes by the
// events the entries name, not by the entries' times.
func TestCompactionSparesWaitingEventsWhenTheClockStepsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10, Outbox: true})
	// The outbox's last entry was written when the clock read a minute later.
	ahead := time.Now().Add(time.Minute).UnixMilli()
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.k.Outbox(0), ID: fmt.Sprintf("%d-0", ahead), Values: []string{"t", "old", "c", "c1", "e", "1-1", "n", "0.x"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("own")
	}
	// The owner is done with it: offset stored, outbox trimmed to it.
	s.KeepOwning(ctx, 0, "a", time.Minute, fmt.Sprintf("%d-0", ahead), false)
	commitN(t, s, "busy", 1, 40, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	es, _ := s.ReadOutbox(ctx, 0, fmt.Sprintf("%d-0", ahead), 100, 0)
	if len(es) != 40 {
		t.Fatalf("%d entries", len(es))
	}
	compact(t, s, "busy")
	loaded, _, _ := s.LoadOutbox(ctx, 0, es, LoadOptions{})
	for i, l := range loaded {
		if l.Head.Event == nil {
			t.Fatalf("notification %d (event %s, outbox entry %s) waiting in the outbox lost its event to compaction", i, es[i].EventID, es[i].ID)
		}
	}
}
