// Package ratelimit is the request rate limit shared by every relay
// instance: a counter per client and second in Redis (a fixed window). It
// decides nothing about who a client is (auth does) or what a refusal looks
// like on the wire (the HTTP edge does).
package ratelimit

import (
	"context"
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

// New allows limit requests per second per key.
func New(rdb redis.UniversalClient, k layout.Keys, limit int) *Limiter {
	return &Limiter{rdb: rdb, window: k.RateWindow, limit: int64(limit)}
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
