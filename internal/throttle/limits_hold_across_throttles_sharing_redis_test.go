package throttle

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Two throttles (two relays) over one Redis keep one URL's limits
// together: starts spaced 1/rate apart, at most MaxConcurrent in flight, a
// slot freed by its release or, when its relay died, by its lease's end;
// waiters told starts one after another; the host's limit holds for every
// URL of the host, beside each URL's own; other hosts are not held.
func TestLimitsHoldAcrossThrottlesSharingRedis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 4)
	clock := &fakeClock{t: time.UnixMilli(1_700_000_000_000)}
	cfg := Config{Lease: 5 * time.Second, Poll: 200 * time.Millisecond, Clock: clock.now}
	a, err := New(rdb, k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(rdb, k, cfg)
	const u = "https://hooks.example.test/a"
	acquire := func(th *Throttle, url string, l Limits) (Slot, *Wait) {
		t.Helper()
		s, w, err := th.Acquire(ctx, url, l)
		if err != nil {
			t.Fatal(err)
		}
		return s, w
	}
	wantWait := func(w *Wait, limit string, d time.Duration) {
		t.Helper()
		if w == nil || w.Limit != limit || w.For != d {
			t.Fatalf("wait %+v, want %s for %s", w, limit, d)
		}
	}

	// Rate 4/s: one start each 250 ms, whichever relay asks.
	rate := Limits{Rate: 4}
	if _, w := acquire(a, u, rate); w != nil {
		t.Fatalf("first start waits %+v", w)
	}
	_, w := acquire(b, u, rate)
	wantWait(w, "rate", 250*time.Millisecond)
	_, w = acquire(a, u, rate) // a second waiter is told the start after the first's
	wantWait(w, "rate", 500*time.Millisecond)
	clock.add(250 * time.Millisecond)
	if _, w := acquire(b, u, rate); w != nil {
		t.Fatalf("start after 250 ms waits %+v", w)
	}
	clock.add(250 * time.Millisecond)
	if _, w := acquire(a, u, rate); w != nil {
		t.Fatalf("start after 500 ms waits %+v", w)
	}
	if _, w := acquire(a, "https://hooks.example.test/other", rate); w != nil {
		t.Fatalf("another URL waits for this one's rate: %+v", w)
	}

	// At most 2 in flight: a third waits until a release, or a lease's end.
	const c = "https://cap.example.test/hook"
	capped := Limits{MaxConcurrent: 2}
	s1, _ := acquire(a, c, capped)
	_, _ = acquire(b, c, capped) // its relay dies: never released
	_, w = acquire(a, c, capped)
	wantWait(w, "concurrency", 200*time.Millisecond)
	if err := a.Release(ctx, s1); err != nil {
		t.Fatal(err)
	}
	s3, w := acquire(b, c, capped)
	if w != nil {
		t.Fatalf("a released slot is not free: %+v", w)
	}
	_, w = acquire(a, c, capped)
	wantWait(w, "concurrency", 200*time.Millisecond)
	clock.add(5 * time.Second) // the dead relay's lease, and s3's, end
	if _, w := acquire(a, c, capped); w != nil {
		t.Fatalf("an expired lease still holds its slot: %+v", w)
	}
	_ = s3

	// The host's cap holds across its URLs, each URL's own beside it.
	host := Limits{HostMaxConcurrent: 1, MaxConcurrent: 5}
	if _, w := acquire(a, "https://busy.example.test/x", host); w != nil {
		t.Fatal(w)
	}
	_, w = acquire(b, "https://busy.example.test/y", host)
	wantWait(w, "concurrency", 200*time.Millisecond)
	if _, w := acquire(b, "https://quiet.example.test/y", host); w != nil {
		t.Fatalf("another host is held: %+v", w)
	}
	// Both rates hold: the host's slower one decides.
	both := Limits{Rate: 100, HostRate: 2}
	if _, w := acquire(a, "https://slow.example.test/1", both); w != nil {
		t.Fatal(w)
	}
	_, w = acquire(b, "https://slow.example.test/2", both)
	wantWait(w, "rate", 500*time.Millisecond)
}
