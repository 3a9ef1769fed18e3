package delivery

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
	p := NewPressure(target, maxHold, c.now)
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
// then, and the wait of the last ones started must not keep the gate shut.
// Once no token started for the target time and none waits for a worker,
// the lag is zero; while one waits (the workers are all busy), it stands.
func TestPressureLagEndsWhenTheQueueDrains(t *testing.T) {
	p, c := newTestPressure(10*time.Millisecond, time.Second)
	queued := true
	p.watch(func() bool { return queued })
	p.Observe(50 * time.Millisecond)
	c.t = c.t.Add(5 * time.Millisecond)
	queued = false
	if p.Lag() != 50*time.Millisecond {
		t.Fatalf("Lag within the target time = %v, want 50ms", p.Lag())
	}
	c.t = c.t.Add(10 * time.Millisecond)
	queued = true
	if p.Lag() != 50*time.Millisecond {
		t.Fatalf("Lag with a token waiting for a worker = %v, want 50ms", p.Lag())
	}
	queued = false
	if p.Lag() != 0 {
		t.Fatalf("Lag of a drained queue = %v, want 0", p.Lag())
	}
	// A held task goes as soon as the queue has drained, not after MaxHold.
	c.t = c.t.Add(-15 * time.Millisecond)
	p.Observe(50 * time.Millisecond)
	if held, err := p.Admit(context.Background()); err != nil || held > 15*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want it to go within the target time and a step", held, err)
	}
}
