package throttle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// Configs with the same URL share its rate state, but each is held to its
// own numbers (docs/webhook-extension.md): a config that asks for a slow
// rate spaces its own starts, and does not hold a faster config of the same
// URL (another client's, maybe) to its spacing. Nor can a tiny rate leave
// the URL's state stuck in Redis: its keys keep a finite expiry, and asking
// never fails.
func TestASlowerConfigDoesNotHoldAFasterOneToItsRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 4)
	clock := &fakeClock{t: time.UnixMilli(1_700_000_000_000)}
	th, err := New(rdb, k, Config{Lease: 5 * time.Second, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://shared.example.test/hook"
	for _, slow := range []float64{0.001, 1e-16, 5e-324} {
		clock.add(48 * time.Hour) // past every earlier start's spacing
		if _, w, err := th.Acquire(ctx, u, Limits{Rate: slow}); err != nil || w != nil {
			t.Fatalf("rate %g: first start: wait %+v, err %v", slow, w, err)
		}
		clock.add(20 * time.Millisecond)
		if _, w, err := th.Acquire(ctx, u, Limits{Rate: 100}); err != nil || w != nil {
			t.Fatalf("rate %g: a config at 100/s, 20 ms after the slow one's start: wait %+v, err %v", slow, w, err)
		}
		// The fast config is held to its own 10 ms.
		if _, w, err := th.Acquire(ctx, u, Limits{Rate: 100}); err != nil || w == nil || w.For != 10*time.Millisecond {
			t.Fatalf("rate %g: a second start at 100/s at once: wait %+v, err %v; want 10ms", slow, w, err)
		}
		// The slow config is still held to its own spacing.
		if _, w, err := th.Acquire(ctx, u, Limits{Rate: slow}); err != nil || w == nil {
			t.Fatalf("rate %g: the slow config starts again at once: wait %+v, err %v", slow, w, err)
		}
		// Waiters of one rate are still told starts one after another
		// (6/s: a step that is no whole number of ms).
		const v = "https://six.example.test/hook"
		if _, w, err := th.Acquire(ctx, v, Limits{Rate: 6}); err != nil || w != nil {
			t.Fatalf("6/s: first start: wait %+v, err %v", w, err)
		}
		_, w1, _ := th.Acquire(ctx, v, Limits{Rate: 6})
		_, w2, _ := th.Acquire(ctx, v, Limits{Rate: 6})
		if w1 == nil || w2 == nil || w2.For <= w1.For {
			t.Fatalf("6/s: two waiters told %+v and %+v, want the second later", w1, w2)
		}
		keys := k.Endpoint(HostOf(u), u)
		if ttl := rdb.PTTL(ctx, keys.URLRateAt(slow)).Val(); ttl <= 0 {
			t.Fatalf("rate %g: the URL's rate state has no expiry (PTTL %s)", slow, ttl)
		}
	}
}
