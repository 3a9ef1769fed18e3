package delivery

import (
	"net/http"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/a2arelay/relay/internal/outbox"
)

// Policy decides what follows an attempt: done, retry when, or give up.
type Policy struct {
	Initial, MaxInterval time.Duration
	MaxAttempts          int
	MaxElapsed           time.Duration
	// Jitter is the randomization factor of the backoff (default 0.2, so
	// each gap stays longer than the one before).
	Jitter float64
}

// result is what one attempt observed.
type result struct {
	status     int
	err        error
	retryAfter time.Duration // from a 429 or 503, when given
	// blocked: the webhook's host resolved to an address the SSRF guard
	// refuses. No retry can succeed until an operator changes the
	// allowlist or the webhook's DNS, so it is dead-lettered at once (and
	// can be redelivered from there).
	blocked bool
	// invalidConfig: the stored push config fails validation (stored by an
	// older relay). Nothing was sent, and no retry can change that until
	// the client sets the config again, so it is dead-lettered at once
	// (and can be redelivered once the config is fixed).
	invalidConfig bool
}

// decide returns the outcome of attempt number n (1-based) of a head first
// tried at first, and when to retry.
func (p Policy) decide(r result, n int, first, now time.Time) (outbox.Outcome, time.Time, string) {
	switch {
	case r.err == nil && r.status >= 200 && r.status < 300:
		return outbox.Delivered, time.Time{}, ""
	case r.err == nil && r.status == http.StatusGone:
		return outbox.Gone, time.Time{}, "410 Gone: config disabled"
	case r.blocked:
		return outbox.Dead, time.Time{}, "webhook address refused by the SSRF guard: dead-lettered without retries"
	case r.invalidConfig:
		return outbox.Dead, time.Time{}, "stored push config is invalid (" + r.err.Error() + "): dead-lettered without retries; set the config again, then redeliver"
	}
	if n >= p.MaxAttempts {
		return outbox.Dead, time.Time{}, "retry budget spent: " + strconv.Itoa(n) + " attempts"
	}
	delay := p.backoff(n)
	if r.retryAfter > 0 {
		delay = min(r.retryAfter, p.MaxInterval)
	}
	due := now.Add(delay)
	if p.MaxElapsed > 0 && due.Sub(first) > p.MaxElapsed {
		return outbox.Dead, time.Time{}, "retry budget spent: " + p.MaxElapsed.String() + " elapsed"
	}
	return outbox.Retry, due, ""
}

// backoff returns the delay after failed attempt n: exponential with jitter.
func (p Policy) backoff(n int) time.Duration {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     p.Initial,
		RandomizationFactor: p.Jitter,
		Multiplier:          2,
		MaxInterval:         p.MaxInterval,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	var d time.Duration
	for range n {
		d = b.NextBackOff()
	}
	return d
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
