package ratelimit

import (
	"context"
	"sync"
	"time"
)

// maxRefused bounds the addresses an instance remembers as over the limit:
// a flood from more addresses than that is still refused, through Redis.
const maxRefused = 1 << 16

// Strikes limits failures per remote address (failed authentications)
// across instances: each failure is counted in Redis, in one-second
// windows. An address over the limit is remembered by the instance that saw
// it go over, which refuses it for the rest of that second and the next
// without asking Redis, so that a flood costs neither Redis nor the log
// once it is over. Requests that succeed are never counted.
type Strikes struct {
	l *Limiter

	mu    sync.RWMutex
	until map[string]time.Time // addresses over the limit, refused until then (expired ones swept by Strike)
}

// NewStrikes allows cfg.Limit failures per second per address, or returns
// an error naming what is missing or out of range.
func NewStrikes(d Deps, cfg Config) (*Strikes, error) {
	if err := cfg.check(d); err != nil {
		return nil, err
	}
	return &Strikes{l: &Limiter{rdb: d.RDB, window: d.Keys.AuthFailureWindow, limit: int64(cfg.Limit)}, until: map[string]time.Time{}}, nil
}

// Refused reports whether addr went over the limit and is still refused at
// now. It asks nothing of Redis and takes only a read lock: every request
// of a guarded API asks it.
func (s *Strikes) Refused(addr string, now time.Time) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	until, ok := s.until[addr]
	return ok && now.Before(until)
}

// Strike counts one failure of addr at now and reports whether addr is now
// over the limit; from then on Refused says so until the end of the next
// second. When Redis fails it counts nothing and says why.
func (s *Strikes) Strike(ctx context.Context, addr string, now time.Time) (bool, error) {
	ok, err := s.l.Allow(ctx, addr, now)
	if err != nil || ok {
		return false, err
	}
	until := now.Truncate(time.Second).Add(2 * time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.until) >= maxRefused/2 {
		for a, u := range s.until {
			if !now.Before(u) {
				delete(s.until, a)
			}
		}
	}
	if len(s.until) < maxRefused {
		s.until[addr] = until
	}
	return true, nil
}
