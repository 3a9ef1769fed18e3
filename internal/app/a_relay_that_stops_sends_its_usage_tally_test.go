package app

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A relay that stops sends what its usage tally holds before it closes
// Redis: bytes counted after its flusher stopped (here, a push config
// stored once the background loops were stopped, as a shutdown does
// first) are in Redis once the relay is gone (read by a store of its own,
// which holds no tally), and Redis counts what the relay counted.
func TestARelayThatStopsSendsItsUsageTally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := startRelay(t, nil)
	a := r.app
	opt, err := redis.ParseURL(a.cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt) // (the relay closes its own)
	defer rdb.Close()
	reader := must(taskstore.New(taskstore.Deps{RDB: rdb, Keys: a.layout, Batch: groupcommit.New(rdb)}, taskstore.Config{UsageWindow: max(a.cfg.TaskRetention, a.cfg.DeliveryRetention)}))
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("counted", nil), "configuration": map[string]any{"blocking": true}}, &task)
	a.stopBackgroundLoops() // the flusher among them
	if err := a.store.SetPushConfig(ctx, "", task.ID, "late", []byte(`{"url":"https://hooks.example.test/"}`), "", 16); err != nil {
		t.Fatal(err)
	}
	own, err := a.store.Usage(ctx, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := reader.Usage(ctx, "", time.Now()); err != nil || sent.Bytes >= own.Bytes {
		t.Fatalf("Redis counts %+v, %v before the relay stopped; want less than the relay's %d bytes", sent, err, own.Bytes)
	}
	r.stop()
	got, err := reader.Usage(ctx, "", time.Now())
	if err != nil || got.Bytes != own.Bytes {
		t.Fatalf("Redis counts %+v, %v once the relay stopped; want the relay's %d bytes", got, err, own.Bytes)
	}
}
