package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// A lanes relay looks again at a partition whose outbox another relay
// held when it started (one that crashed a moment ago, or, in a rolling
// switch back to lanes, one still running that stops later): the
// notifications left there are delivered once the lease is free.
func TestLanesRelayDrainsAnOutboxOwnedAtItsStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &idRecorder{}
	fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: true}, a2a.V10, "left", hook) // one notification in the outbox
	// The outbox relay crashed: its lease runs out 1.5 s from now.
	if _, ok, err := fx.store.Own(ctx, 0, "crashed-outbox-relay", 1500*time.Millisecond); err != nil || !ok {
		t.Fatal("cannot take the lease", err)
	}
	stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{}))
	defer stop()
	deadline := time.Now().Add(12 * time.Second)
	for len(hook.got()) == 0 {
		if time.Now().After(deadline) {
			o, _ := fx.store.OutboxOwner(ctx, 0)
			t.Fatalf("12 s after start (the lease expired 10 s ago; owner now %q) the notification left in the outbox was never delivered", o)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
