// Package ratelimit is the request rate limit shared by every relay
// instance: a counter per client and second in Redis (a fixed window). It
// decides nothing about who a client is (auth does) or what a refusal looks
// like on the wire (the HTTP edge does).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// limitScript counts one request in a one-second window and returns the
// count; the window's key expires on its own.
var limitScript = redis.NewScript(`local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 2000) end
return n`)

// Limiter allows a number of requests per second per key.
type Limiter struct {
	rdb    redis.UniversalClient
	window func(key string, sec int64) string
	limit  int64
}

// Deps are what a Limiter or Strikes count with.
type Deps struct {
	RDB  redis.UniversalClient
	Keys layout.Keys
}

// Config sets a limit.
type Config struct {
	// Limit is how many a key (Limiter) or an address (Strikes) may count
	// per second; it must be positive.
	Limit int
}

func (c Config) check(d Deps) error {
	switch {
	case d.RDB == nil:
		return errors.New("ratelimit: RDB is required")
	case c.Limit < 1:
		return fmt.Errorf("ratelimit: Limit must be positive, not %d", c.Limit)
	}
	return nil
}

// New allows cfg.Limit requests per second per key, or returns an error
// naming what is missing or out of range.
func New(d Deps, cfg Config) (*Limiter, error) {
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	return &Limiter{rdb: d.RDB, window: d.Keys.RateWindow, limit: int64(cfg.Limit)}, nil
}

// Allow counts one request of key at now and reports whether it is within
// the limit. When Redis fails it allows the request and says why.
func (l *Limiter) Allow(ctx context.Context, key string, now time.Time) (bool, error) {
	n, err := limitScript.Run(ctx, l.rdb, []string{l.window(key, now.Unix())}).Int64()
	if err != nil {
		return true, fmt.Errorf("ratelimit: %w", err)
	}
	return n <= l.limit, nil
}
