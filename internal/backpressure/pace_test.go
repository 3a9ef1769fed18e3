package backpressure

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

// After a hold, tasks are spaced at paceHeadroom times the recent
// admission rate instead of going at once (the clients here come one after
// another, each as soon as the one before went).
func TestPressurePacesAfterAHold(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond) // 1,000 tasks a second
	if p.rate < 900 || p.rate > 1100 {
		t.Fatalf("measured admission rate %.0f/s, want about 1000", p.rate)
	}
	holdOnce(t, p, c)
	for i := range 5 {
		// about 1/(1.5*1000/s), as the rate moves with the admissions
		held, err := p.Admit(context.Background())
		if err != nil || held < 600*time.Microsecond || held > 750*time.Microsecond {
			t.Fatalf("paced Admit %d = %v, %v; want its turn, about 0.67ms after the one before", i, held, err)
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

// A relay that admits few tasks is not paced after a hold: a gap between
// turns longer than the target would only delay its clients' bursts.
func TestPressureDoesNotPaceFewAdmissions(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	for range 50 { // three tasks at once every two seconds
		admitAtRate(t, p, c, 3, 0)
		c.t = c.t.Add(2 * time.Second)
	}
	holdOnce(t, p, c)
	admitAtRate(t, p, c, 3, 0)
}

// Pacing runs for the stale time from the end of a hold, however long the
// hold lasted.
func TestPressurePacesAfterALongHold(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, 3*time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond)
	p.Observe(time.Second)
	start := c.t
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		if c.t.Sub(start) < 1100*time.Millisecond {
			p.Observe(time.Second) // still behind
			return
		}
		for range 100 {
			p.Observe(0)
		}
	}
	if held, _ := p.Admit(context.Background()); held < 1100*time.Millisecond {
		t.Fatalf("held %v, want about 1.1s", held)
	}
	p.sleep = func(context.Context, time.Duration) {} // the others held with it go at once
	if _, err := p.Admit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !p.nextAdmits.After(c.t) {
		t.Fatalf("the admissions after a 1.1s hold are not paced: next turn %v, now %v", p.nextAdmits, c.t)
	}
}

// Pacing never makes a task wait past MaxHold in all, the gate's hold
// included.
func TestPressurePacingKeepsMaxHold(t *testing.T) {
	p, c := newTestPressure(20*time.Millisecond, 20*time.Millisecond)
	admitAtRate(t, p, c, 200, 10*time.Millisecond)    // 100 tasks a second: turns 6.7 ms apart
	holdOnce(t, p, c)                                 // held 5ms; its own turn is now
	p.sleep = func(context.Context, time.Duration) {} // many clients at the same instant
	var waits []time.Duration
	for range 6 {
		held, err := p.Admit(context.Background())
		if err != nil || held > 20*time.Millisecond {
			t.Fatalf("Admit = %v, %v; want at most MaxHold", held, err)
		}
		waits = append(waits, held)
	}
	if waits[0] == 0 || waits[len(waits)-1] != 0 {
		t.Fatalf("waits %v: want the first turns waited for and, past MaxHold, none", waits)
	}
	// A task the gate held 15 ms does not wait for a turn 6.7 ms away.
	p.Observe(time.Second)
	steps := 0
	p.sleep = func(_ context.Context, d time.Duration) {
		c.t = c.t.Add(d)
		if steps++; steps == 3 {
			for range 100 {
				p.Observe(0)
			}
			p.nextAdmits = c.t.Add(6700 * time.Microsecond)
		}
	}
	if held, err := p.Admit(context.Background()); err != nil || held != 15*time.Millisecond {
		t.Fatalf("Admit = %v, %v; want the 15ms hold and no turn after it", held, err)
	}
}

// An admission counts in the rate when it goes, not when it comes: a
// cohort of held tasks released together does not inflate it.
func TestPressureCountsAdmissionsWhenTheyGo(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond)
	holdOnce(t, p, c)
	count := p.count
	p.sleep = func(_ context.Context, d time.Duration) {
		if p.count != count {
			t.Fatalf("a paced admission was counted before its turn")
		}
		c.t = c.t.Add(d)
	}
	if held, _ := p.Admit(context.Background()); held == 0 || p.count != count+1 {
		t.Fatalf("held %v, count %d -> %d; want a paced wait, then one count", held, count, p.count)
	}
}

func TestPressurePacedAdmitGivesUpWithContext(t *testing.T) {
	p, c := newTestPressure(5*time.Millisecond, time.Second)
	admitAtRate(t, p, c, 1000, time.Millisecond)
	holdOnce(t, p, c)
	p.sleep = func(context.Context, time.Duration) {}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	turn := p.nextAdmits
	if _, err := p.Admit(ctx); err != context.Canceled {
		t.Fatalf("paced Admit with a cancelled context: err %v, want context.Canceled", err)
	}
	if !p.nextAdmits.Equal(turn) {
		t.Fatalf("the turn given up was kept: next turn %v, want %v", p.nextAdmits, turn)
	}
}
