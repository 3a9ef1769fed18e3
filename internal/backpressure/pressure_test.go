package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeClock is a clock that only moves when the Pressure sleeps.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestPressure(target, maxHold time.Duration) (*Pressure, *fakeClock) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p, err := New(Deps{Now: c.now}, Config{Target: target, MaxHold: maxHold})
	if err != nil {
		panic(err)
	}
	p.sleep = func(_ context.Context, d time.Duration) { c.t = c.t.Add(d) }
	return p, c
}

func TestPressureAdmitsAtOnceWithoutLag(t *testing.T) {
	p, _ := newTestPressure(20*time.Millisecond, time.Second)
	p.Observe(5 * time.Millisecond)
	if held, err := p.Admit(context.Background()); held != 0 || err != nil {
		t.Fatalf("Admit under the target = %v, %v; want 0, nil", held, err)
	}
}

func TestPressureHoldsUntilLagFalls(t *testing.T) {
	p, c := newTestPressure(20*time.Millisecond, time.Second)
	p.Observe(200 * time.Millisecond)
	sleeps := 0
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		if sleeps++; sleeps == 3 { // the workers catch up
			for range 100 {
				p.Observe(time.Millisecond)
			}
		}
	}
	held, err := p.Admit(context.Background())
	if err != nil || held != 15*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want held 15ms (3 steps of target/4)", held, err)
	}
}

func TestPressureHoldsAtMostMaxHold(t *testing.T) {
	p, c := newTestPressure(20*time.Millisecond, 100*time.Millisecond)
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		p.Observe(time.Second) // the backlog stays
	}
	p.Observe(time.Second)
	held, err := p.Admit(context.Background())
	if err != nil || held != 100*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want held exactly MaxHold", held, err)
	}
}

func TestPressureStaleLagIsZero(t *testing.T) {
	p, c := newTestPressure(20*time.Millisecond, time.Second)
	p.Observe(time.Second)
	if p.Lag() != time.Second {
		t.Fatalf("Lag = %v, want 1s", p.Lag())
	}
	c.t = c.t.Add(2 * time.Second) // no token started since: the queue is empty
	if p.Lag() != 0 {
		t.Fatalf("stale Lag = %v, want 0", p.Lag())
	}
	if held, _ := p.Admit(context.Background()); held != 0 {
		t.Fatalf("Admit held %v on a stale lag", held)
	}
}

func TestPressureAverages(t *testing.T) {
	p, _ := newTestPressure(20*time.Millisecond, time.Second)
	p.Observe(0)
	p.Observe(100 * time.Millisecond) // one slow token moves the average by weight only
	if got, want := p.Lag(), 20*time.Millisecond; got != want {
		t.Fatalf("Lag = %v, want %v", got, want)
	}
}

func TestPressureOffAndNil(t *testing.T) {
	p, _ := newTestPressure(0, time.Second)
	p.Observe(time.Hour)
	if held, err := p.Admit(context.Background()); held != 0 || err != nil {
		t.Fatalf("disabled Admit = %v, %v", held, err)
	}
	var none *Pressure
	none.Observe(time.Hour)
	if held, err := none.Admit(context.Background()); held != 0 || err != nil || none.Lag() != 0 {
		t.Fatalf("nil Pressure must admit")
	}
}

func TestPressureAdmitGivesUpWithContext(t *testing.T) {
	p, c := newTestPressure(20*time.Millisecond, time.Minute)
	p.Observe(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		p.Observe(time.Second)
		cancel()
	}
	if _, err := p.Admit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Admit err = %v, want context.Canceled", err)
	}
}

// Holding new tasks can let the queue run dry: no worker starts a token
// then, and the estimate stays above the target. Once no token started for
// the quiet time (twice the target) while none waits for a worker, one held
// task per quiet time goes as a probe, and the first wait observed after
// the quiet time replaces the estimate.
func TestPressureProbesAQuietQueue(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	queued := false
	p.Watch(func() bool { return queued })
	p.Observe(50 * time.Millisecond)
	held, err := p.Admit(context.Background())
	if err != nil || held <= 10*time.Millisecond || held > 15*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want a probe just after the quiet time (10ms)", held, err)
	}
	// Another task waits: no second probe within the quiet time; the
	// probe's token starts at once, which ends the hold.
	steps := 0
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		if steps++; steps == 6 {
			p.Observe(time.Millisecond)
		}
	}
	held, err = p.Admit(context.Background())
	if err != nil || held != 6*(5*time.Millisecond/4) {
		t.Fatalf("Admit = %v, %v; want held until the probe's token started (6 steps)", held, err)
	}
	if p.Lag() != time.Millisecond {
		t.Fatalf("Lag after a quiet time = %v, want the new observation, 1ms", p.Lag())
	}
}

// While a token waits for a worker the workers are all busy: the queue has
// not drained, so no probe goes and the hold lasts.
func TestPressureDoesNotProbeBusyWorkers(t *testing.T) {
	p, _ := newTestPressure(5*time.Millisecond, 200*time.Millisecond)
	p.Watch(func() bool { return true })
	p.Observe(50 * time.Millisecond)
	if held, err := p.Admit(context.Background()); err != nil || held != 200*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want held MaxHold", held, err)
	}
}

// MaxHold bounds the hold to the step: with MaxHold 0 nothing is held, and
// a step longer than MaxHold is cut to it.
func TestPressureHoldEndsAtMaxHold(t *testing.T) {
	for _, tc := range []struct{ target, maxHold time.Duration }{{5 * time.Millisecond, 0}, {8 * time.Second, time.Second}} {
		p, _ := newTestPressure(tc.target, tc.maxHold)
		p.Observe(time.Hour)
		if held, err := p.Admit(context.Background()); err != nil || held != tc.maxHold {
			t.Errorf("target %v MaxHold %v: Admit = %v, %v; want held MaxHold", tc.target, tc.maxHold, held, err)
		}
	}
}
