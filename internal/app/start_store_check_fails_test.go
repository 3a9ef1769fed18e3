package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// A Start that fails while opening the store (here: the Redis holds data
// written with another partition count) closes the Redis clients it
// opened, as any other failed Start does: callers such as bench's
// startInProcess never call closeStore themselves.
func TestStartFailingPartitionCheckClosesRedis(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	pfx := strings.TrimSuffix(prefix, ":")
	if err := rdb.HSet(context.Background(), pfx+":meta", "partitions", "3").Err(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), pfx
	cfg.Partitions = 4
	a, err := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "partitions") {
		t.Fatalf("Start on a Redis of 3 partitions with 4 configured = %v, want the partition error", err)
	}
	if a.rdb != nil || a.streamRDB != nil {
		t.Fatal("a Start that failed its partition check left its Redis clients open")
	}
}
