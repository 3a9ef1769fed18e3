package taskstore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// flushAfterMGet is a hook that, once armed, lets the first pipeline
// holding an MGET (Usage's read of the counters) run, then runs flush
// before Usage sees the reply: a flush that lands between Usage's read of
// Redis and its read of the tally.
type flushAfterMGet struct {
	armed atomic.Bool
	flush func() error
	err   error
}

func (h *flushAfterMGet) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *flushAfterMGet) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *flushAfterMGet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) > 0 && cmds[0].Name() == "mget" && h.armed.CompareAndSwap(true, false) {
			h.err = h.flush()
		}
		return err
	}
}

// A flush that lands while Usage reads (after Redis answered, before the
// tally is read) loses nothing from the figure: the bytes this relay
// counted are seen once, in Redis or in the tally, never in neither.
func TestUsageReadWhileAFlushLandsMissesNoByte(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 2)
	now := time.Now()
	c := Commit{TaskID: "t1", Snapshot: []byte(strings.Repeat("s", 100)), Events: [][]byte{[]byte(`{"e":1}`)}, UpdatedAt: now, Owner: "alice"}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	h := &flushAfterMGet{flush: func() error { return s.FlushUsage(ctx) }}
	rdb.AddHook(h)
	h.armed.Store(true)
	u, err := s.Usage(ctx, "alice", now)
	if err != nil {
		t.Fatal(err)
	}
	if h.armed.Load() || h.err != nil {
		t.Fatalf("the flush did not run during the read (err %v)", h.err)
	}
	if u.Bytes < commitUsage(c) {
		t.Fatalf("usage read while a flush landed is %d bytes, want at least the commit's %d", u.Bytes, commitUsage(c))
	}
}
