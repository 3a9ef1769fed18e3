package delivery

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/cadence"
	"github.com/a2arelay/relay/internal/outbox"
)

// blockLog records the waits the workers ask of their blocking reads.
type blockLog struct {
	*outbox.Consumer
	mu             sync.Mutex
	outbox, tokens []time.Duration
}

func (b *blockLog) ReadOutbox(ctx context.Context, p int, after string, count int, block time.Duration) ([]outbox.OutboxEntry, error) {
	b.mu.Lock()
	b.outbox = append(b.outbox, block)
	b.mu.Unlock()
	return b.Consumer.ReadOutbox(ctx, p, after, count, block)
}

func (b *blockLog) ReadTokens(ctx context.Context, p, count int, block time.Duration) ([]outbox.Token, error) {
	b.mu.Lock()
	b.tokens = append(b.tokens, block)
	b.mu.Unlock()
	return b.Consumer.ReadTokens(ctx, p, count, block)
}

// The outbox owner's reads and the lanes' token reads wait, when nothing
// comes, until the next point of the process's one-second grid
// (internal/cadence), not a second from whenever they were sent: every
// partition's idle reads time out together, and an idle relay wakes once
// for all of them.
func TestIdleReadsEndOnTheProcessGrid(t *testing.T) {
	t.Parallel()
	hook := &countingHook{status: http.StatusOK}
	fx := newFixtureWith(t, storeConfig{Partitions: 2, Outbox: true}, a2a.V10, "grid", hook)
	q := &blockLog{Consumer: fx.store.consumer(t, outbox.ConsumerConfig{})}
	w := mustNew(t, fx.deps(q), Config{Outbox: true})
	at := cadence.Next(time.Now(), time.Second).Add(300 * time.Millisecond) // 300 ms past a point of the grid
	w.now = func() time.Time { return at }
	stop := runWorkers(w)
	for {
		q.mu.Lock()
		n, m := len(q.outbox), len(q.tokens)
		q.mu.Unlock()
		if n >= 2 && m >= 2 { // (every partition's first)
			break
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	want := 700 * time.Millisecond // to the next point
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, reads := range [][]time.Duration{q.outbox, q.tokens} {
		for _, d := range reads {
			if d != want {
				t.Fatalf("reads waited %v (outbox) and %v (tokens) at 300 ms past a point of the grid, want %v each", q.outbox, q.tokens, want)
			}
		}
	}
}
