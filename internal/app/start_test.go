package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// A Start that fails (here: its address is taken) undoes what it started:
// the background loops are stopped and Redis is closed.
func TestFailedStartUndoesItself(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	rdb, prefix := redistest.New(t)
	cfg := testConfig(t)
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	cfg.Addr = taken.Addr().String()
	a, err := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Start on a taken address = %v, want a listen error", err)
	}
	if a.rdb != nil || a.streamRDB != nil || a.stopBackground != nil {
		t.Fatal("a failed Start left Redis open or background loops running")
	}
}
