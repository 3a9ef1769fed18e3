package workqueue

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A turn offered to a task whose lease key is free, claimed, and ended with
// its task final (Final) costs Redis six commands and no script: the
// offer's XADD, the claim's XREADGROUP, the grant's SET NX (no GET, and no
// count of grants to keep: the attempt is the entry's delivery count), and
// the end's DEL, XACK and XDEL (no read of the lease). INFO commandstats of
// a Redis of the test's own counts what scripts run.
func TestATurnThatEndsItsTaskCostsSixCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	c := New(rdb, rdb, nil, layout.New("p", 1))
	turn := func(task string) {
		t.Helper()
		if err := c.Offer(ctx, "q", task, "m1", 1); err != nil {
			t.Fatal(err)
		}
		ws, err := c.ClaimN(ctx, "q", "w1", time.Hour, time.Second, 4)
		if err != nil || len(ws) != 1 || ws[0].TaskID != task || ws[0].Attempt != 1 {
			t.Fatalf("claim = %+v, %v; want %s's turn, attempt 1", ws, err, task)
		}
		if err := c.Final(ctx, ws[0]); err != nil {
			t.Fatal(err)
		}
	}
	turn("task-0") // (creates the group, and searches the pending list once)
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	turn("task-1")
	got := redistest.CommandCalls(t, rdb)
	for name, n := range map[string]int{"xadd": 1, "xreadgroup": 1, "set": 1, "del": 1, "xack": 1, "xdel": 1} {
		if got[name] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", name, got[name], n, got)
		}
	}
	for _, name := range []string{"evalsha", "eval", "get", "hincrby", "hdel", "xclaim", "xpending"} {
		if got[name] != 0 {
			t.Errorf("%s ran %d times, want none (all: %v)", name, got[name], got)
		}
	}
	if n := rdb.XLen(ctx, c.stream("q")).Val(); n != 0 {
		t.Errorf("%d entries left in the queue, want none", n)
	}
	if n := rdb.Exists(ctx, c.lease("q", "task-1")).Val(); n != 0 {
		t.Error("the lease of a final turn is left")
	}
}
