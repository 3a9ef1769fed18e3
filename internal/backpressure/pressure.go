// Package backpressure holds the creation of new tasks while webhook
// delivery lags: the delivery workers report how long each token waited
// before a worker started it, and the A2A side asks Admit before it commits
// a new task. It never talks to Redis and never decides task state.
package backpressure

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pressure is relay's backpressure: it tracks how long delivery tokens wait
// in the delivery streams before a worker starts them (measured on Redis's
// clock, so clock skew between hosts does not matter), and holds the
// creation of new tasks while that wait is above a target. Without it an
// agent that commits faster than webhooks can be delivered builds a backlog
// whose latency grows without bound; with it the producers slow down to the
// rate relay delivers at, and commit-to-receipt stays near the target.
//
// A task is held at most MaxHold; then it is admitted anyway, so overload
// never turns into refused work. Updates to existing tasks are never held:
// they finish the work already admitted. After a hold, admissions are also
// paced for a while (see pace.go), so that the tasks a hold kept back do
// not all go at once.
type Pressure struct {
	target, maxHold, stale time.Duration
	now                    func() time.Time
	sleep                  func(context.Context, time.Duration)

	mu     sync.Mutex
	lag    float64 // exponentially weighted queue wait, in nanoseconds
	last   time.Time
	probed time.Time // when hold last let a task go as a probe
	// queued tells whether a token is read and waits for a worker; nil
	// when no workers report (see probe).
	queued func() bool
	pacer
}

// Deps are what a Pressure works with.
type Deps struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Config sets a Pressure's target (RELAY_BACKPRESSURE_LAG) and hold
// (RELAY_BACKPRESSURE_MAX_HOLD).
type Config struct {
	// Target is the delivery queue wait above which new tasks are held (0:
	// never held; the Pressure is off).
	Target time.Duration
	// MaxHold is the longest one new task is held.
	MaxHold time.Duration
}

// New returns a Pressure that holds new tasks while the delivery queue
// wait is above cfg.Target, for at most cfg.MaxHold each, or an error when
// either is negative.
func New(d Deps, cfg Config) (*Pressure, error) {
	if cfg.Target < 0 || cfg.MaxHold < 0 {
		return nil, fmt.Errorf("backpressure: Target (%s) and MaxHold (%s) must not be negative", cfg.Target, cfg.MaxHold)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Pressure{target: cfg.Target, maxHold: cfg.MaxHold, stale: time.Second, now: d.Now, sleep: sleep}, nil
}

// weight is the weight of a new observation in the moving average: about
// the last ten tokens count, so that the average follows a burst within a
// few milliseconds at load (a slower one overshoots: it holds too long
// after the burst and lets too much in after the hold).
const weight = 0.2

// quiet is how long no token may start before the lag estimate is taken
// for out of date: a new observation then replaces the average instead of
// moving it, and a holding gate sends a probe (see hold).
func (p *Pressure) quiet() time.Duration { return max(2*p.target, 2*time.Millisecond) }

// Observe records the queue wait of one token a worker is starting.
func (p *Pressure) Observe(wait time.Duration) {
	if p == nil || p.target <= 0 {
		return
	}
	wait = max(wait, 0)
	p.mu.Lock()
	if p.last.IsZero() || p.now().Sub(p.last) > p.quiet() {
		p.lag = float64(wait)
	} else {
		p.lag += weight * (float64(wait) - p.lag)
	}
	p.last = p.now()
	p.mu.Unlock()
}

// Lag is the current queue wait estimate; zero when no worker has started a
// token for a while (the queue is empty, or nothing is read from it).
func (p *Pressure) Lag() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last.IsZero() || p.now().Sub(p.last) > p.stale {
		return 0
	}
	return time.Duration(p.lag)
}

// Watch makes probe ask queued whether a token read waits for a worker
// (the delivery workers call it once, before they run).
func (p *Pressure) Watch(queued func() bool) {
	if p != nil {
		p.mu.Lock()
		p.queued = queued
		p.mu.Unlock()
	}
}

// Admit returns when a new task may be created: while the lag is above the
// target, once it falls below it; then, while paced, at its turn. It holds
// at most MaxHold in all, and returns how long it held, or ctx's error when
// the caller gave up.
func (p *Pressure) Admit(ctx context.Context) (time.Duration, error) {
	if p == nil || p.target <= 0 {
		return 0, nil
	}
	held, err := p.hold(ctx)
	if err != nil {
		return held, err
	}
	return p.pace(ctx, held)
}

// hold waits while the lag is above the target, at most MaxHold.
func (p *Pressure) hold(ctx context.Context) (time.Duration, error) {
	if p.maxHold <= 0 || p.Lag() <= p.target {
		return 0, nil
	}
	p.pressed()
	defer p.pressed() // pacing runs from the end of the hold
	start := p.now()
	step := max(p.target/4, time.Millisecond)
	for held := time.Duration(0); ; {
		p.sleep(ctx, min(step, p.maxHold-held))
		held = p.now().Sub(start)
		if err := ctx.Err(); err != nil {
			return held, err
		}
		if p.Lag() <= p.target || held >= p.maxHold || p.probe() {
			return held, nil
		}
	}
}

// probe tells whether a held task should go now to measure the queue.
// Holding can let the queue run dry; then no worker starts a token, and the
// estimate stays where the last ones left it, above the target, holding
// every new task until MaxHold (a second by default: deliveries stopped
// for most of it). So once no token started for the quiet time while none
// waits for a worker (one that waits means the workers are all busy: the
// queue has not drained), one held task per quiet time goes: its token
// is started soon if the queue is short, and its wait, the first after the
// quiet time, replaces the estimate.
func (p *Pressure) probe() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, quiet := p.now(), p.quiet()
	if now.Sub(p.last) <= quiet || now.Sub(p.probed) <= quiet || p.queued != nil && p.queued() {
		return false
	}
	p.probed = now
	return true
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
