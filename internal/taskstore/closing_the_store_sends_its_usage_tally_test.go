package taskstore

import (
	"context"
	"testing"
	"time"
)

// Close sends what the tally holds (the last write of a relay that stops),
// and a Store's flusher (RunUsage) ends with its context.
func TestClosingTheStoreSendsItsUsageTally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.RunUsage(run) }()
	now := time.Now()
	c := Commit{TaskID: "t1", Snapshot: []byte(`{"s":1}`), UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	stop()
	<-done
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := usageCounter(t, rdb, s, "alice", "t1", now); n != commitUsage(c) {
		t.Fatalf("the counter holds %d after Close, want the commit's %d", n, commitUsage(c))
	}
}
