package outbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// BenchmarkOutboxPath is the outbox's work for one notification of the
// default bench's kind, in bursts of 32: its share of a read of the
// outbox stream and of a load of events and configs, and its finish as
// delivered at the first attempt (the plain path: one SET). The commits
// that make the notifications are outside the timer.
func BenchmarkOutboxPath(b *testing.B) {
	ctx := context.Background()
	rdb, prefix := redistest.New(b)
	f := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, Outbox: true})
	cfg := map[string][]byte{"c1": []byte(`{"id":"c1","url":"http://127.0.0.1/hook","dialect":"1.0"}`)}
	attempt := []byte(`{"time":"2026-11-23T19:32:59.340411538Z","notificationId":"10.82c3394f12de11dea5d662f196e30107",` +
		`"taskId":"00dd7b97-a3eb-45df-9367-249195a088f2","configId":"c1","url":"http://127.0.0.1:38809/hook",` +
		`"attempt":1,"status":204,"latencyMs":1.351,"outcome":"delivered"}`)
	const burst = 32
	after := "0-0"
	b.ReportAllocs()
	b.StopTimer()
	for done := 0; done < b.N; {
		for i := range burst {
			c := taskstore.Commit{TaskID: "00dd7b97-a3eb-45df-9367-" + strconv.Itoa(100000000000+done+i), Snapshot: benchSnapshot,
				UpdatedAt: time.Now(), PushConfigs: cfg, Events: [][]byte{benchSnapshot}, Deliver: []bool{true}}
			if _, err := f.Commit(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		es, err := f.ReadOutbox(ctx, 0, after, burst, 0)
		if err != nil || len(es) != burst {
			b.Fatalf("read %d entries, %v", len(es), err)
		}
		after = es[len(es)-1].ID
		if _, _, err := f.LoadOutbox(ctx, 0, es, LoadOptions{Status: true}); err != nil {
			b.Fatal(err)
		}
		for _, e := range es {
			now := time.Now()
			op := OutboxOp{Kind: OpDone, Entry: e, Outcome: Delivered, Attempt: attempt, Now: now, First: now}
			if _, err := f.FinishOutboxOps(ctx, 0, "w1", []OutboxOp{op}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		done += burst
	}
}
