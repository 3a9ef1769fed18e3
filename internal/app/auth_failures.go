package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// limitAuthFailures wraps the routes of an API whose callers authenticate:
// a remote address that failed authentication more than
// RELAY_AUTH_FAILURE_LIMIT times in a second, on any instance, is refused
// with 429 (answered by refuse, in the API's own shape) for the rest of
// that second and the next, before its credentials are looked at. Every
// 401 the route answers counts as a failure.
func (a *App) limitAuthFailures(refuse func(c *fiber.Ctx) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if a.strikes == nil {
			return c.Next()
		}
		ip := c.IP()
		if a.strikes.Refused(ip, time.Now()) {
			c.Set(fiber.HeaderRetryAfter, "1")
			return refuse(c)
		}
		err := c.Next()
		if c.Response().StatusCode() == fiber.StatusUnauthorized {
			ctx := c.UserContext()
			over, serr := a.strikes.Strike(ctx, ip, time.Now())
			a.authLog.failed(ctx, a.log, ip, c.Path(), over, serr)
		}
		return err
	}
}

// authFailureLog writes at most one line a second about failed
// authentications, with the count of those it did not write: a flood of
// wrong keys must not become a flood of log.
type authFailureLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (l *authFailureLog) failed(ctx context.Context, log *slog.Logger, ip, path string, over bool, strikeErr error) {
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.last) < time.Second {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	args := []any{"remote", ip, "path", path, "over_limit", over, "not_logged_since_last_line", suppressed}
	if strikeErr != nil {
		args = append(args, "limit_err", strikeErr)
	}
	log.InfoContext(ctx, "authentication failed", args...)
}
