package taskstore

import (
	"context"
	"testing"
	"time"
)

// A commit whose reply was lost is sent again (go-redis retries); its first
// run's add never reached the tally, so the replay's reply carries it (the
// task hash keeps the whole reply): the commit is counted once, not never
// and not twice.
func TestACommitSentTwiceIsCountedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	now := time.Now()
	c := Commit{TaskID: "t1", Snapshot: []byte(`{"s":1}`), Events: [][]byte{[]byte(`{"e":1}`)}, UpdatedAt: now, Owner: "alice"}
	args, err := s.commitArgs(c, "commit-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first run applies; its reply is lost (the tally never sees it).
	if err := commitScript.Run(ctx, rdb, s.commitKeys(c), commitScript.Args(&args)...).Err(); err != nil {
		t.Fatal(err)
	}
	ids, _, err := s.commitRun(ctx, c, &args)
	if err != nil || len(ids) != 1 {
		t.Fatalf("the replay returned %v, %v; want the first run's one id", ids, err)
	}
	if err := s.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := usageCounter(t, rdb, s, "alice", "t1", now); n != commitUsage(c) {
		t.Fatalf("the counter holds %d, want the commit's %d once", n, commitUsage(c))
	}
	// Its next commit counts what it adds, the replay notwithstanding.
	next := Commit{TaskID: "t1", Version: 1, Snapshot: []byte(`{"s":1}`), PrevSnapshotLen: 7, Events: [][]byte{[]byte(`{"e":2}`)},
		UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := usageCounter(t, rdb, s, "alice", "t1", now); n != commitUsage(c)+commitUsage(next) {
		t.Fatalf("the counter holds %d after the next commit, want %d", n, commitUsage(c)+commitUsage(next))
	}
}
