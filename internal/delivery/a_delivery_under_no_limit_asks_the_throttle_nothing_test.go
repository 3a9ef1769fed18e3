package delivery

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/throttle"
)

// countingThrottle lets every delivery go, and counts the asks (each of
// which would be a Redis command).
type countingThrottle struct{ asked, released atomic.Int64 }

func (c *countingThrottle) Acquire(context.Context, string, throttle.Limits) (throttle.Slot, *throttle.Wait, error) {
	c.asked.Add(1)
	return throttle.HeldSlot("lease"), nil, nil
}

func (c *countingThrottle) Release(context.Context, throttle.Slot) error {
	c.released.Add(1)
	return nil
}

// A delivery that neither its config nor the operator limits asks the
// throttle nothing (no Redis command more than before limits existed); one
// the operator limits per host asks once per attempt, and frees its slot.
func TestADeliveryUnderNoLimitAsksTheThrottleNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &stateRecorder{}
	fx := newFixture(t, 1, "free", hook)
	working := a2a.Event{Kind: a2a.EventStatus, TaskID: "free", ContextID: "c", Status: &a2a.TaskStatus{State: a2a.StateWorking}}
	if _, err := fx.commit.Append(ctx, "free", working, working); err != nil {
		t.Fatal(err)
	}
	th := &countingThrottle{}
	w := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Throttle = th }), Config{})
	fx.drain(t, w)
	if got := len(hook.got()); got != 3 {
		t.Fatalf("delivered %d, want 3", got)
	}
	if n := th.asked.Load() + th.released.Load(); n != 0 {
		t.Fatalf("unlimited deliveries asked the throttle %d times", n)
	}
	if _, err := fx.commit.Append(ctx, "free", working); err != nil {
		t.Fatal(err)
	}
	limited := mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), func(d *Deps) { d.Throttle = th }), Config{HostMaxConcurrent: 4})
	fx.drain(t, limited)
	if a, r := th.asked.Load(), th.released.Load(); a != 1 || r != 1 {
		t.Fatalf("a delivery under the host's cap asked %d times and released %d, want 1 and 1", a, r)
	}
}

// BenchmarkAdmitWithoutLimits is what an unlimited delivery pays for the
// limits: a look at its (cached) config.
func BenchmarkAdmitWithoutLimits(b *testing.B) {
	w := &Workers{throttle: &countingThrottle{}}
	h := outbox.Head{Config: []byte(`{"id":"c","taskId":"t","url":"https://hooks.example.test/x","dialect":"1.0"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, wait := w.admit(ctx, h); wait != nil {
			b.Fatal("waited")
		}
	}
}
