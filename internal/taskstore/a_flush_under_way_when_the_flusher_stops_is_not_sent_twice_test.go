package taskstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// stopDuringFlush is a hook that, when the flusher's pipeline (INCRBY
// first) has run, stops the flusher (cancel) and answers with what the
// pipeline's own context says: a flush whose context is the flusher's
// sees the stop as its failure (its replies unread), after Redis added its
// sums.
type stopDuringFlush struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (h *stopDuringFlush) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *stopDuringFlush) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *stopDuringFlush) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) > 0 && cmds[0].Name() == "incrby" && h.cancel != nil {
			h.cancel()
			h.cancel = nil
			defer close(h.done)
			if err == nil && ctx.Err() != nil {
				err = ctx.Err() // as a read of the replies cut short: no reply read
				for _, c := range cmds {
					c.SetErr(err)
				}
			}
		}
		return err
	}
}

// A relay that stops while its flusher's flush is under way does not count
// that flush twice: the flush is not cut short by the stop, so it keeps no
// sums that Redis already added, and Close sends nothing again.
func TestAFlushUnderWayWhenTheFlusherStopsIsNotSentTwice(t *testing.T) {
	t.Parallel()
	s, rdb, prefix := newStore(t, 1)
	now := time.Now()
	c := Commit{TaskID: "t1", Snapshot: []byte(strings.Repeat("s", 100)), Events: [][]byte{[]byte(`{"e":1}`)}, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &stopDuringFlush{cancel: cancel, done: make(chan struct{})}
	rdb.AddHook(h)
	ran := make(chan struct{})
	go func() { defer close(ran); s.RunUsage(ctx) }()
	<-h.done
	<-ran
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	key := s.k.Usage(0, "alice", s.usage.bucket(now))
	if !strings.HasPrefix(key, prefix) {
		t.Fatalf("counter %q is not under the test's prefix %q", key, prefix)
	}
	got, err := rdb.Get(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(commitUsage(c), 10); got != want {
		t.Fatalf("Redis counts %s bytes once the flusher stopped mid-flush and the store closed, want the commit's %s", got, want)
	}
}
