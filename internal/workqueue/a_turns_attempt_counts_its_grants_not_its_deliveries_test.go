package workqueue

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// A turn's attempt number counts its grants, though it is read from the
// entry's delivery count: a later turn of a task, read and taken over
// several times while an earlier turn holds the task's lease, is granted
// as its first attempt once that turn ends; and so is a turn read by a
// claim that was given up (abandon), and a turn taken over from an
// expired lease counts that lease's grant.
func TestATurnsAttemptCountsItsGrantsNotItsDeliveries(t *testing.T) {
	t.Parallel()
	c, ctx := newClaims(t)
	// Time passes for the pending list: an entry's idle time is set past
	// the lease, as if its lease had run out, and the next claim searches.
	expire := func(w *Work) {
		t.Helper()
		if w != nil {
			c.rdb.Del(ctx, c.lease("q", w.TaskID))
		}
		for id := range pendingDeliveries(t, c, "q") {
			if w == nil || id == w.entry {
				idle(t, c, id)
			}
		}
		c.quiet.Delete("q")
	}
	claim := func(consumer string) *Work {
		t.Helper()
		w, err := c.Claim(ctx, "q", consumer, time.Hour, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if err := c.Offer(ctx, "q", "task-a", "m1", 1); err != nil {
		t.Fatal(err)
	}
	first := claim("w1")
	if first == nil || first.Attempt != 1 {
		t.Fatalf("claim = %+v", first)
	}
	if err := c.Offer(ctx, "q", "task-a", "m2", 2); err != nil {
		t.Fatal(err)
	}
	// The later turn is read, waits, and is taken over again and again
	// while the first turn holds the task.
	if w := claim("w2"); w != nil {
		t.Fatalf("claim while the first turn holds the task = %+v; want none", w)
	}
	for range 3 {
		later := pendingDeliveries(t, c, "q")
		delete(later, first.entry)
		for id := range later {
			idle(t, c, id)
		}
		c.quiet.Delete("q")
		if w := claim("w2"); w != nil {
			t.Fatalf("claim while the first turn holds the task = %+v; want none", w)
		}
	}
	if err := c.Renew(ctx, first.LeaseID, "task-a", LeaseDone, 0); err != nil {
		t.Fatal(err)
	}
	expire(nil)
	later := claim("w2")
	if later == nil || later.MessageID != "m2" || later.Attempt != 1 {
		t.Fatalf("the later turn once the first ended = %+v; want m2 granted as attempt 1", later)
	}
	// Its lease expires: the next claim takes it over as attempt 2.
	expire(later)
	again := claim("w3")
	if again == nil || again.MessageID != "m2" || again.Attempt != 2 {
		t.Fatalf("the later turn after its lease expired = %+v; want m2 as attempt 2", again)
	}
	if err := c.Final(ctx, again); err != nil {
		t.Fatal(err)
	}

	// A claim given up while Redis handed it a turn leaves it to the next
	// claim, which grants its first attempt.
	if err := c.Offer(ctx, "q", "task-b", "m1", 1); err != nil {
		t.Fatal(err)
	}
	res, err := c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: layout.Group, Consumer: "gone", Streams: []string{c.stream("q"), ">"}, Count: 1, Block: -1}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 1 {
		t.Fatalf("read = %v, %v", res, err)
	}
	c.abandon(ctx, "q", "gone", time.Hour, res[0].Messages)
	c.quiet.Delete("q")
	w, err := c.Claim(ctx, "q", "w4", time.Hour, time.Second)
	if err != nil || w == nil || w.TaskID != "task-b" || w.Attempt != 1 {
		t.Fatalf("claim after an abandoned read = %+v, %v; want task-b as attempt 1", w, err)
	}
}

// pendingDeliveries is the delivery count of each pending entry of queue.
func pendingDeliveries(t *testing.T, c *Claims, queue string) map[string]int64 {
	t.Helper()
	p, err := c.rdb.XPendingExt(t.Context(), &redis.XPendingExtArgs{Stream: c.stream(queue), Group: layout.Group, Start: "-", End: "+", Count: 100}).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range p {
		out[e.ID] = e.RetryCount
	}
	return out
}

// idle sets the idle time of the pending entry id of queue "q" past an
// hour's lease, as if that much time had passed (its delivery count kept).
func idle(t *testing.T, c *Claims, id string) {
	t.Helper()
	if err := c.rdb.Do(t.Context(), "XCLAIM", c.stream("q"), layout.Group, "w1", 0, id, "IDLE", (2 * time.Hour).Milliseconds(), "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}
}
