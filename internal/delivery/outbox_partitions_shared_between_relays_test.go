package delivery

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
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
	fx := newFixtureWith(t, storeConfig{Partitions: parts, Outbox: true}, a2a.V10, "shared", &idRecorder{})
	start := func() (*Workers, func()) {
		w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: true})
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

// A relay on the lanes path delivers what relays on the outbox path left in
// the outboxes (RELAY_DELIVERY_PATH switched back), and gives them up.
func TestLanesRelayDrainsWhatTheOutboxLeft(t *testing.T) {
	t.Parallel()
	hook := &idRecorder{}
	fx := newFixtureWith(t, storeConfig{Partitions: 2, Outbox: true}, a2a.V10, "left", hook) // the task's first notification, in an outbox
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for len(hook.got()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the notification left in the outbox was not delivered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if got := owners(t, fx, 2); len(got) == 0 {
			if n := len(hook.got()); n != 1 {
				t.Fatalf("delivered %d times, want once", n)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the outboxes are still owned: %v", owners(t, fx, 2))
}
