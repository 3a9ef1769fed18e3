package backpressure

import (
	"context"
	"time"
)

// Pacing. Holding new tasks alone makes the load swing: a task brings its
// events over its whole life, so when the lag falls below the target and
// every held task goes at once, their later events come back as a burst
// well after the gate saw the queue empty, the lag overshoots, the gate
// shuts again, and commit-to-receipt swings with it (measured: a period of
// about 300 ms, p50 between 20 and 45 ms at a 10 ms target, most of the
// p99). So for a while after a hold ends (the Pressure's stale time)
// admissions are spaced to at most paceHeadroom times the rate at which
// tasks were admitted of late: the long-run rate stays the gate's, the
// bursts go. Without a recent hold, or at a rate too low for bursts to
// matter, nothing is paced, so a quiet relay takes a burst at once.
const (
	// paceHeadroom is how far above the recent admission rate admissions
	// may go while paced: room for the rate to rise when delivery keeps
	// up. Lower smooths more and follows a faster machine more slowly
	// (1.25 measured about 10% less throughput than 1.5 when another
	// process took a share of the CPU; 1.5 kept p99 about as low).
	paceHeadroom = 1.5
	// paceWindow is the span over which admissions are counted; each
	// window moves the rate by paceWeight of the difference (about the
	// last 100 ms count).
	paceWindow = 10 * time.Millisecond
	paceWeight = 0.1
)

// pacer is the Pressure's admission pacing; its fields are under the
// Pressure's mutex.
type pacer struct {
	rate       float64   // admissions per second, a moving average over windows
	count      int       // admissions in the current window
	window     time.Time // when the current window began
	heldAt     time.Time // when the gate last held a task or stopped holding it
	nextAdmits time.Time // the earliest time of the next paced admission
}

// pressed records that the gate is holding a task, or has just stopped.
func (p *Pressure) pressed() {
	p.mu.Lock()
	p.heldAt = p.now()
	p.mu.Unlock()
}

// pace waits, while paced, for the admission's turn: admissions are spaced
// by 1/(paceHeadroom*rate). It is paced for the stale time after a hold,
// and only while that gap is under the target: below about one admission
// per target time, a burst of admissions cannot queue deliveries for long,
// and spacing them would only delay a quiet relay's clients. held is how
// long the gate already held it; a turn that would make the total exceed
// MaxHold is not waited for. An admission counts in the rate when it goes,
// and a turn given up (ctx ended) is given back when it is the last one.
func (p *Pressure) pace(ctx context.Context, held time.Duration) (time.Duration, error) {
	p.mu.Lock()
	now := p.now()
	turn, next, paced := p.book(now, held)
	if !paced || !turn.After(now) {
		p.count1(now)
		p.mu.Unlock()
		return held, nil
	}
	p.mu.Unlock()
	wait := turn.Sub(now)
	p.sleep(ctx, wait)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		if p.nextAdmits.Equal(next) {
			p.nextAdmits = turn
		}
		return held + wait, err
	}
	p.count1(p.now())
	return held + wait, nil
}

// book gives an admission at now its turn and books the next one, when it
// is paced; p.mu held.
func (p *Pressure) book(now time.Time, held time.Duration) (turn, next time.Time, paced bool) {
	if p.heldAt.IsZero() || now.Sub(p.heldAt) >= p.stale || p.rate <= 0 {
		return now, now, false
	}
	gap := time.Duration(float64(time.Second) / (paceHeadroom * p.rate))
	if gap >= p.target {
		return now, now, false
	}
	turn = p.nextAdmits
	if turn.Before(now) {
		turn = now
	}
	if held+turn.Sub(now) > p.maxHold {
		return now, now, false
	}
	p.nextAdmits = turn.Add(gap)
	return turn, p.nextAdmits, true
}

// count1 counts one admission going at now in the admission rate; p.mu
// held.
func (p *Pressure) count1(now time.Time) {
	if span := now.Sub(p.window); span >= paceWindow {
		if !p.window.IsZero() {
			p.rate += paceWeight * (float64(p.count)/span.Seconds() - p.rate)
		}
		p.window, p.count = now, 0
	}
	p.count++
}
