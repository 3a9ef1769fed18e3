package taskstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// The commit script writes no usage counter: ten commits of one owner's
// tasks in one partition and bucket send no INCRBY (INFO commandstats of a
// Redis of the test's own); the flush then sends one INCRBY and one
// PEXPIRE for the counter, which holds the ten commits' sum and expires.
func TestACommitLeavesUsageCountersToTheTally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s := must(New(Deps{RDB: rdb, Keys: layout.New("p", 1), Batch: groupcommit.New(rdb)}, Config{}))
	now := time.Now()
	var want int64
	for i := range 10 {
		c := Commit{TaskID: fmt.Sprintf("task-%d", i), Snapshot: []byte(`{"s":1}`), Events: [][]byte{[]byte(`{"e":1}`)},
			UpdatedAt: now, Owner: "alice", PushConfigs: map[string][]byte{"c": []byte(`{"url":"https://h.test/"}`)}, Deliver: []bool{true}}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		want += commitUsage(c) + NotificationBytes
	}
	calls := redistest.CommandCalls(t, rdb)
	if calls["incrby"] != 0 {
		t.Fatalf("ten commits sent %d INCRBYs, want none", calls["incrby"])
	}
	if n, ok := usageCounter(t, rdb, s, "alice", "task-0", now); ok {
		t.Fatalf("the counter holds %d before a flush, want none", n)
	}
	if err := s.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	after := redistest.CommandCalls(t, rdb)
	if after["incrby"] != 1 || after["pexpire"]-calls["pexpire"] != 1 {
		t.Fatalf("the flush sent %d INCRBYs and %d PEXPIREs, want one each", after["incrby"], after["pexpire"]-calls["pexpire"])
	}
	if n, _ := usageCounter(t, rdb, s, "alice", "task-0", now); n != want {
		t.Fatalf("the counter holds %d after the flush, want the commits' %d", n, want)
	}
	key := s.k.Usage(0, "alice", s.usage.bucket(now))
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > s.usage.ttl() {
		t.Fatalf("the counter expires in %v, want within %v", ttl, s.usage.ttl())
	}
}
