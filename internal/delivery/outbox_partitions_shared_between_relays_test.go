package delivery

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/queue"
)

// owners counts the outbox leases by holder.
func owners(t *testing.T, fx fixture, parts int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for p := range parts {
		h, err := fx.store.OutboxOwner(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if h != "" {
			got[h]++
		}
	}
	return got
}

// Relays on the outbox path share the partitions: each owns its share
// (the partitions over the relays alive), one that joins gets its share
// from the others, and the partitions of one that stops go to the rest.
func TestOutboxPartitionsAreSharedBetweenRelays(t *testing.T) {
	t.Parallel()
	const parts = 4
	fx := newFixtureWith(t, queue.Config{Partitions: parts, Outbox: true}, a2a.V10, "shared", &idRecorder{})
	start := func() (*Workers, func()) {
		w := mustNew(t, Deps{Queue: fx.store, Signer: fx.keys, Dial: fx.guard.DialContext, Log: fx.log}, Config{Outbox: true})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = w.Run(ctx) })
		return w, func() { cancel(); wg.Wait() }
	}
	waitFor := func(what string, ok func(map[string]int) bool) map[string]int {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got := owners(t, fx, parts)
			if ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: owners %v", what, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	w1, stop1 := start()
	waitFor("one relay owns every partition", func(m map[string]int) bool { return m[w1.consumer] == parts })
	w2, stop2 := start()
	defer stop2()
	waitFor("two relays own half each", func(m map[string]int) bool { return m[w1.consumer] == parts/2 && m[w2.consumer] == parts/2 })
	stop1()
	waitFor("the relay left owns every partition", func(m map[string]int) bool { return m[w2.consumer] == parts })
}
