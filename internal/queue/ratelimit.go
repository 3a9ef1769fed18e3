package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// limitScript counts one request in a one-second window and returns the
// count; the window's key expires on its own.
var limitScript = redis.NewScript(`local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 2000) end
return n`)

// Limiter is a rate limit shared by every instance: a counter per client
// and second in Redis (a fixed window).
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
	limit  int64
}

// NewLimiter allows limit requests per second per key.
func NewLimiter(rdb redis.UniversalClient, prefix string, limit int) *Limiter {
	return &Limiter{rdb: rdb, prefix: prefix, limit: int64(limit)}
}

// Allow counts one request of key at now and reports whether it is within
// the limit.
func (l *Limiter) Allow(ctx context.Context, key string, now time.Time) (bool, error) {
	k := l.prefix + ":rl:{" + key + "}:" + strconv.FormatInt(now.Unix(), 10)
	n, err := limitScript.Run(ctx, l.rdb, []string{k}).Int64()
	if err != nil {
		return true, fmt.Errorf("queue: rate limit: %w", err)
	}
	return n <= l.limit, nil
}
