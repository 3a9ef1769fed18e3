package delivery

import (
	"context"
	"testing"
	"time"
)

// admitAtRate admits n tasks, one every gap, none of them held.
func admitAtRate(t *testing.T, p *Pressure, c *fakeClock, n int, gap time.Duration) {
	t.Helper()
	for range n {
		if held, err := p.Admit(context.Background()); held != 0 || err != nil {
			t.Fatalf("unpressed Admit = %v, %v; want 0, nil", held, err)
		}
		c.t = c.t.Add(gap)
	}
}

// holdOnce makes the gate hold one task for one step: the lag is above the
// target, and the workers catch up while it waits.
func holdOnce(t *testing.T, p *Pressure, c *fakeClock) {
	t.Helper()
	p.Observe(time.Second)
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		for range 100 {
			p.Observe(0)
		}
	}
	if held, err := p.Admit(context.Background()); held <= 0 || err != nil {
		t.Fatalf("Admit over the target = %v, %v; want a hold", held, err)
	}
	p.sleep = func(_ context.Context, d time.Duration) { c.t = c.t.Add(d) }
}

// After a hold, tasks that come together are spaced at paceHeadroom times
// the recent admission rate instead of going at once.
func TestPressurePacesAfterAHold(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond) // 1,000 tasks a second
	if p.rate < 900 || p.rate > 1100 {
		t.Fatalf("measured admission rate %.0f/s, want about 1000", p.rate)
	}
	holdOnce(t, p, c)
	gap := time.Duration(float64(time.Second) / (paceHeadroom * p.rate))
	for i := range 5 { // five clients at the same instant
		held, err := p.Admit(context.Background())
		if err != nil || held != gap {
			t.Fatalf("paced Admit %d = %v, %v; want its turn, %v after the one before", i, held, err, gap)
		}
	}
}

// Without a hold within the stale time, nothing is paced: a quiet relay
// takes a burst at once, and pacing ends a while after the last hold.
func TestPressureDoesNotPaceWithoutARecentHold(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond)
	admitAtRate(t, p, c, 50, 0) // a burst, never held
	holdOnce(t, p, c)
	c.t = c.t.Add(p.stale + time.Millisecond)
	admitAtRate(t, p, c, 50, 0)
}

// Pacing never makes a task wait past MaxHold in all.
func TestPressurePacingKeepsMaxHold(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, 20*time.Millisecond)
	admitAtRate(t, p, c, 200, 10*time.Millisecond) // 100 tasks a second: turns 6.7 ms apart
	holdOnce(t, p, c)
	p.sleep = func(context.Context, time.Duration) {} // many clients at the same instant
	var waits []time.Duration
	for range 6 {
		held, err := p.Admit(context.Background())
		if err != nil || held > 20*time.Millisecond {
			t.Fatalf("Admit = %v, %v; want at most MaxHold", held, err)
		}
		waits = append(waits, held)
	}
	if waits[1] == 0 || waits[len(waits)-1] != 0 {
		t.Fatalf("waits %v: want the first turns waited for and, past MaxHold, none", waits)
	}
}

func TestPressurePacedAdmitGivesUpWithContext(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond)
	holdOnce(t, p, c)
	if _, err := p.Admit(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Admit(ctx); err != context.Canceled {
		t.Fatalf("paced Admit with a cancelled context: err %v, want context.Canceled", err)
	}
}
