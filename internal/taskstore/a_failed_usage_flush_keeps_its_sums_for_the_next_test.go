package taskstore

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A flush that fails (Redis is down) keeps its sums: the next flush, once
// Redis is back, sends them.
func TestAFailedUsageFlushKeepsItsSumsForTheNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s := must(New(Deps{RDB: rdb, Keys: layout.New("p", 2), Batch: groupcommit.New(rdb)}, Config{}))
	now := time.Now()
	c := Commit{TaskID: "t1", Snapshot: []byte(`{"s":1}`), Events: [][]byte{[]byte(`{"e":1}`)}, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := s.FlushUsage(ctx); err == nil {
		t.Fatal("a flush to a Redis that is down succeeded")
	}
	srv.Restart() // (empty: without AOF, the task is gone, but not the tally)
	if err := s.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := usageCounter(t, rdb, s, "alice", "t1", now); n != commitUsage(c) {
		t.Fatalf("the counter holds %d after Redis came back, want the commit's %d", n, commitUsage(c))
	}
}
