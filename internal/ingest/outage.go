package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/redis/go-redis/v9"
)

// Outage is how the in-process agents (the demo agent, the upstream
// bridge) and the Service's hand-over of a task ride out Redis being
// unreachable or loading: a write that fails for that reason (Unavailable)
// is retried with backoff, for up to For. Past it the agent fails the
// task, and that final write (Persist) keeps trying for as long as the
// agent runs. The policy lives here alone, so that every in-process agent
// waits alike. An agent also checks its lease before writing after an
// outage (Redis expires leases meanwhile): a turn whose lease ran out
// stops without writing, and the task's next claim resumes it.
type Outage struct {
	// For bounds how long failing writes are retried before the task
	// fails (default 2m).
	For time.Duration
	// Initial is the first pause between tries; pauses grow exponentially
	// with jitter up to MaxInterval (defaults 100ms and 5s).
	Initial, MaxInterval time.Duration
	// Now is the clock of the bound and the backoff (default time.Now).
	Now func() time.Time
	// Log receives a warning when writes start failing and a note when
	// they succeed again (default: discarded).
	Log *slog.Logger
}

func (o Outage) withDefaults() Outage {
	o.For = cmp.Or(o.For, 2*time.Minute)
	o.Initial = cmp.Or(o.Initial, 100*time.Millisecond)
	o.MaxInterval = max(cmp.Or(o.MaxInterval, 5*time.Second), o.Initial)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// OutageError is a write that kept failing, Redis being unavailable, for
// longer than the Outage's bound.
type OutageError struct {
	For time.Duration
	Err error
}

func (e *OutageError) Error() string {
	return fmt.Sprintf("Redis was unreachable for more than %s (%v)", e.For, e.Err)
}

func (e *OutageError) Unwrap() error { return e.Err }

// Unavailable reports whether err means that Redis could not be reached or
// was not ready to serve: a refused, reset or timed-out connection, a pool
// with no free connection, a server loading its data, a cluster that is
// down or failing over. Such a write may succeed later. A refusal of the
// write itself (a version conflict, a forbidden transition, a script
// error), a closed client and a canceled context are not outages.
func Unavailable(err error) bool {
	switch {
	case err == nil, errors.Is(err, redis.ErrClosed), errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case redis.IsLoadingError(err), redis.IsClusterDownError(err), redis.IsTryAgainError(err),
		redis.IsMasterDownError(err), redis.IsReadOnlyError(err), redis.IsMaxClientsError(err):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) // dial, read and write failures, timeouts
}

// Retry calls fn until it succeeds or fails for another reason than
// Unavailable (that error is returned), ctx ends (ctx's error), or it has
// kept failing for longer than For (an *OutageError). what names the write
// in logs.
func (o Outage) Retry(ctx context.Context, what string, fn func(context.Context) error) error {
	return o.retry(ctx, what, true, fn)
}

// Persist is Retry without the bound: for the write that fails a task
// after an outage, which must land as soon as Redis answers.
func (o Outage) Persist(ctx context.Context, what string, fn func(context.Context) error) error {
	return o.retry(ctx, what, false, fn)
}

func (o Outage) retry(ctx context.Context, what string, bounded bool, fn func(context.Context) error) error {
	o = o.withDefaults()
	var bo *backoff.ExponentialBackOff
	var start time.Time
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil || !Unavailable(err) || ctx.Err() != nil {
			if err == nil && try > 1 {
				o.Log.InfoContext(ctx, "Redis answers again", "what", what, "tries", try)
			}
			if err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if bo == nil {
			start = o.Now()
			bo = o.Backoff()
			o.Log.WarnContext(ctx, "Redis unavailable; retrying", "what", what, "err", err)
		}
		if bounded && o.Now().Sub(start) >= o.For {
			return &OutageError{For: o.For, Err: err}
		}
		if !pause(ctx, bo.NextBackOff()) {
			return ctx.Err()
		}
	}
}

// Backoff returns the pauses of the policy: exponential with jitter from
// Initial up to MaxInterval, never giving up (callers bound the time).
func (o Outage) Backoff() *backoff.ExponentialBackOff {
	o = o.withDefaults()
	return backoff.NewExponentialBackOff(backoff.WithInitialInterval(o.Initial),
		backoff.WithMaxInterval(o.MaxInterval), backoff.WithMaxElapsedTime(0),
		backoff.WithClockProvider(outageClock(o.Now)))
}

type outageClock func() time.Time

func (f outageClock) Now() time.Time { return f() }

// pause waits d, or less when ctx ends first; it reports whether ctx is live.
func pause(ctx context.Context, d time.Duration) bool {
	return sleep(ctx, d) == nil
}
