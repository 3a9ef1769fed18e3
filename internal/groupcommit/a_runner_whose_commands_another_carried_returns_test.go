package groupcommit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A caller that became a runner, but whose commands another runner took
// (it queued them, and that runner's next batch held them before this one
// looked at the queue), returns once they ran while another runner is
// left: it does not send other callers' batches for as long as the queue
// stays full.
func TestARunnerWhoseCommandsAnotherCarriedReturns(t *testing.T) {
	rdb, prefix := redistest.New(t)
	b := &Batcher{rdb: rdb, maxRunners: 2, maxBatch: 128}
	ctx := context.Background()

	// The state right after the race: own was queued by this caller and
	// already sent by the other runner, still in flight (running counts
	// both); another caller's command waits in the queue.
	own := &batchReq{done: make(chan struct{}, 1)}
	own.ran.Store(true)
	own.done <- struct{}{}
	sent := false
	other := &batchReq{add: func(p redis.Pipeliner) { sent = true; p.Set(ctx, prefix+"x", "x", 0) }, done: make(chan struct{}, 1)}
	b.pending = []*batchReq{other}
	b.running = 2

	b.run(own)
	if sent {
		t.Fatal("a runner whose own commands had run sent another caller's batch while another runner was in flight")
	}
	if b.running != 1 || len(b.pending) != 1 {
		t.Fatalf("running %d, pending %d; want the other runner left with the queue", b.running, len(b.pending))
	}
}
