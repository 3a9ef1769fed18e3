package taskstore

import (
	"context"
	"strings"
	"testing"
	"time"
)

// What a flush sends to each counter is what the commits counted, by the
// rule the commit script applied in Redis before the tally: a task's first
// commit counts its bytes, with its reserve; a commit that draws from the
// reserve counts nothing more; the turn's end gives back what is left (a
// negative add); a push config counts its bytes; the task's first commit
// in a new bucket counts its whole count again there. Nothing is in Redis
// before the flush, and the owner's usage reads the same before and after
// it (Usage adds what the relay holds).
func TestUsageAFlushSendsIsWhatTheCommitsCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	now := time.Now()
	next := now.Add(s.usage.length) // the next bucket
	commit := func(c Commit) {
		t.Helper()
		c.Owner = "alice"
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	snap := []byte(strings.Repeat("s", 100))
	commit(Commit{TaskID: "t1", Snapshot: snap, UpdatedAt: now, Reserve: 10_000})
	commit(Commit{TaskID: "t1", Version: 1, Snapshot: snap, PrevSnapshotLen: 100, UpdatedAt: now, PrevReserve: 10_000,
		Events: [][]byte{[]byte(strings.Repeat("e", 3000))}})
	commit(Commit{TaskID: "t1", Version: 2, Snapshot: snap, PrevSnapshotLen: 100, UpdatedAt: now, PrevReserve: 7_000,
		Release: true, Events: [][]byte{[]byte(strings.Repeat("e", 500))}})
	if err := s.SetPushConfig(ctx, "alice", "t1", "c1", []byte("config-1"), "", 16); err != nil {
		t.Fatal(err)
	}
	inNow := int64(100+10_000) - 6_500 + int64(len("c1")+len("config-1")) // 3,610: the task's count
	commit(Commit{TaskID: "t1", Version: 3, Snapshot: snap, PrevSnapshotLen: 100, UpdatedAt: next,
		Events: [][]byte{[]byte(strings.Repeat("m", 50))}})
	inNext := inNow + 50 // the whole count again
	// Another owner's task, in the same bucket: a counter of its own.
	if _, err := s.Commit(ctx, Commit{TaskID: "t2", Snapshot: snap, UpdatedAt: now, Owner: "bob"}); err != nil {
		t.Fatal(err)
	}

	for _, at := range []time.Time{now, next} {
		if n, ok := usageCounter(t, rdb, s, "alice", "t1", at); ok {
			t.Fatalf("a counter holds %d before the flush, want none", n)
		}
	}
	before, err := s.Usage(ctx, "alice", next)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		owner, task string
		at          time.Time
		want        int64
	}{{"alice", "t1", now, inNow}, {"alice", "t1", next, inNext}, {"bob", "t2", now, 100}} {
		if n, _ := usageCounter(t, rdb, s, c.owner, c.task, c.at); n != c.want {
			t.Errorf("%s's counter of bucket %d holds %d after the flush, want %d", c.owner, s.usage.bucket(c.at), n, c.want)
		}
	}
	if us, _ := rdb.HGet(ctx, s.k.Task("t1").Hash, "us").Int64(); us != inNext {
		t.Errorf("the task hash counts %d bytes for the task, want %d", us, inNext)
	}
	after, err := s.Usage(ctx, "alice", next)
	if err != nil {
		t.Fatal(err)
	}
	if before.Bytes != inNow+inNext || after != before {
		t.Fatalf("usage %+v before the flush and %+v after it, want %d bytes both times", before, after, inNow+inNext)
	}
}
