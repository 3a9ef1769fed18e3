package workqueue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A claim of several turns (ClaimN) takes every waiting turn it may, up to
// n, in one call, and grants each once: a duplicate offer of a turn it
// grants is dropped, a later turn of a task it grants waits for that
// turn's lease, and each lease ends on its own (LeaseDone), after which
// the later turn is claimed.
func TestTurnsClaimedTogetherAreEachGrantedOnce(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	offers := []struct {
		task, msg string
		turn      int64
	}{{"task-a", "m1", 1}, {"task-b", "m1", 1}, {"task-a", "m1", 1}, {"task-c", "m1", 2}, {"task-b", "m2", 4}}
	for _, o := range offers {
		if err := c.Offer(ctx, "q", o.task, o.msg, o.turn); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := c.ClaimN(ctx, "q", "w1", time.Minute, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.TaskID+"/"+w.MessageID)
		if w.Attempt != 1 {
			t.Errorf("%s granted with attempt %d, want 1", w.TaskID, w.Attempt)
		}
	}
	slices.Sort(got)
	if want := []string{"task-a/m1", "task-b/m1", "task-c/m1"}; !slices.Equal(got, want) {
		t.Fatalf("one claim of up to 10 granted %v, want %v (each task's first turn, once)", got, want)
	}
	if n := queued(t, c, ctx); n != 4 {
		t.Fatalf("%d entries in the queue, want 4 (three granted, task-b's later turn waiting, the duplicate dropped)", n)
	}
	for _, w := range ws {
		if err := c.Renew(ctx, w.LeaseID, w.TaskID, LeaseDone, 0); err != nil {
			t.Fatalf("ending %s's lease: %v", w.TaskID, err)
		}
		if err := c.Renew(ctx, w.LeaseID, w.TaskID, LeaseRenew, time.Minute); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("renewing %s's lease once it is done = %v, want ErrLeaseLost", w.TaskID, err)
		}
	}
	// The later turn was read with the others and left pending: a claim
	// takes it over once it is idle past the claim's lease time.
	later, err := c.ClaimN(ctx, "q", "w1", 20*time.Millisecond, 5*time.Second, 10)
	if err != nil || len(later) != 1 || later[0].TaskID != "task-b" || later[0].MessageID != "m2" || later[0].Turn != 4 {
		t.Fatalf("claim after the leases ended = %+v, %v, want task-b's turn 4 alone", later, err)
	}
}

// pipelined records the commands that reach Redis inside pipelines (the
// group-commit batcher's) and those sent alone.
type pipelined struct {
	mu           sync.Mutex
	piped, alone []string
}

func (h *pipelined) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pipelined) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.alone = append(h.alone, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *pipelined) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		for _, c := range cmds {
			h.piped = append(h.piped, c.Name())
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// A turn's offer, its grant and the end of its lease (done, or final)
// need no answer before their round trip ends, so they go through the
// shared group-commit batcher: under load they ride the pipelines of
// other callers' commands (the task store's commits) instead of taking
// round trips of their own.
func TestTurnOfferGrantAndLeaseEndRideTheSharedBatcher(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	c := New(rdb, rdb, groupcommit.New(rdb), layout.New(prefix+"c", 0))
	ctx := context.Background()
	if err := c.ensureGroup(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*redis.Script{grantScript.Script, renewScript.Script} { // (else the first run of each loads it, alone)
		if err := sc.Load(ctx, rdb).Err(); err != nil {
			t.Fatal(err)
		}
	}
	h := &pipelined{}
	rdb.AddHook(h)
	if err := c.Offer(ctx, "q", "task-a", "m1", 1); err != nil {
		t.Fatal(err)
	}
	w, err := c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if err := c.Renew(ctx, w.LeaseID, w.TaskID, LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Offer(ctx, "q", "task-b", "m1", 1); err != nil {
		t.Fatal(err)
	}
	w, err = c.Claim(ctx, "q", "w1", time.Minute, time.Second)
	if err != nil || w == nil {
		t.Fatalf("claim = %+v, %v", w, err)
	}
	if err := c.Final(ctx, w); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range []string{"xadd", "set", "evalsha", "del", "xack", "xdel"} {
		if slices.Contains(h.alone, name) {
			t.Errorf("%s sent alone, not through the batcher's pipelines (alone: %v, piped: %v)", name, h.alone, h.piped)
		}
	}
	want := []string{"xadd", "set", "evalsha", "xadd", "set", "del", "xack", "xdel"}
	if got := slices.DeleteFunc(slices.Clone(h.piped), func(s string) bool { return !slices.Contains(want, s) }); !slices.Equal(got, want) {
		t.Errorf("piped commands %v, want %v: each offer's xadd, each grant's set, a lease's end (done) by script, a final one in three commands", h.piped, want)
	}
}
