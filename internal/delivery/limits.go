package delivery

import (
	"context"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/throttle"
)

// Webhook limits (relay's webhook extension: a config's rateLimit and
// maxConcurrent, for its URL; Config.HostRate and HostMaxConcurrent, the
// operator's, for every URL of a host; both hold). Before an attempt under
// a limit, the Throttle says whether it may start; when it may not, the
// notification is not attempted: its lane waits the time the Throttle
// told, in Redis (the lanes path: outcome Wait, the outbox path: op Hold),
// as it would for a retry, but no attempt is logged or counted, the record
// keeps its status, and the next try is the same attempt. Notifications
// behind it in its lane wait behind it; other lanes go on. A delivery under
// no limit asks nothing (no Redis command).

// Throttle keeps the webhooks' limits across relays (throttle.Throttle
// implements it).
type Throttle interface {
	Acquire(ctx context.Context, webhookURL string, l throttle.Limits) (throttle.Slot, *throttle.Wait, error)
	Release(ctx context.Context, s throttle.Slot) error
}

// limitsOf is the limits a delivery to cfg is under.
func (w *Workers) limitsOf(cfg a2a.PushConfig) throttle.Limits {
	l := throttle.Limits{HostRate: w.cfg.HostRate, HostMaxConcurrent: w.cfg.HostMaxConcurrent, Owner: cfg.Owner}
	if o := cfg.Options; o != nil {
		l.Rate, l.MaxConcurrent = o.RateLimit, o.MaxConcurrent
	}
	return l
}

// admit asks the Throttle whether head h may be attempted now: a slot to
// release after the attempt, or how long its lane waits (nil: go). A
// Throttle that does not answer holds the delivery for a while: a limit is
// never passed because Redis failed.
func (w *Workers) admit(ctx context.Context, h outbox.Head) (throttle.Slot, *throttle.Wait) {
	if w.throttle == nil {
		return throttle.Slot{}, nil
	}
	cfg, err := w.configs.open(w.cfg.Secrets, h.Config)
	if err != nil || cfg.invalid != nil {
		return throttle.Slot{}, nil // the attempt says what is wrong with it
	}
	l := w.limitsOf(cfg.PushConfig)
	if l.None() {
		return throttle.Slot{}, nil
	}
	if w.health.isDisabled(cfg.endpoint) {
		// Skipped without a POST unless it was enabled meanwhile: no
		// slot of its URL's limits, which other clients' configs share.
		if still, err := w.health.stillDisabled(ctx, cfg.endpoint); err == nil && still {
			return throttle.Slot{}, nil
		}
	}
	slot, wait, err := w.throttle.Acquire(ctx, cfg.URL, l)
	if err != nil {
		w.log.WarnContext(ctx, "asking the webhook limits failed: the delivery waits", "notification_id", h.NotificationID, "err", err)
		wait = &throttle.Wait{For: time.Second, Limit: "unknown"}
	}
	if wait != nil && w.observer != nil {
		w.observer.LimitWait(wait.Limit, wait.For)
	}
	return slot, wait
}

// release frees a slot admit gave.
func (w *Workers) release(ctx context.Context, s throttle.Slot) {
	if w.throttle == nil || !s.Held() {
		return
	}
	if err := w.throttle.Release(ctx, s); err != nil {
		w.log.WarnContext(ctx, "releasing a webhook's slot failed: it frees when its lease ends", "err", err)
	}
}
