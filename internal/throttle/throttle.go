// Package throttle keeps the delivery limits of webhook endpoints that all
// relay instances share: a rate (deliveries started per second) and a cap
// on deliveries in flight, per webhook URL (a push config's own, relay's
// webhook extension) and per host (the operator's default), both in Redis.
// It says whether one delivery may start now, or how long to wait; it
// never waits itself, and knows nothing of lanes or retries (delivery
// parks a lane for the wait it is told) nor of A2A (delivery reads the
// limits from the push config).
//
// Rates are spaced: a delivery starts at least 1/rate s after the previous
// one to the same URL at the same rate (or host), by Redis's clock, so no
// second holds more than rate starts (no burst). Configs of one URL that
// ask for different rates are each spaced by their own, apart: none holds
// another to its rate. A slot in flight is a lease that expires
// (Config.Lease) unless its delivery releases it first, so a relay that
// dies holds no slot for long. When both the URL and its host are limited,
// both limits hold.
package throttle

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/ssrf"
)

//go:embed lua/acquire.lua
var acquireLua string

var acquireScript = redis.NewScript(acquireLua)

// Limits are the limits one delivery is under. A zero field is no limit.
type Limits struct {
	// Rate and MaxConcurrent hold for the webhook URL as Owner's configs
	// send to it: another client's configs of the same URL have limits of
	// their own, so that no client's deliveries spend another's budget.
	Rate          float64
	MaxConcurrent int
	Owner         string
	// HostRate and HostMaxConcurrent hold for the URL's host.
	HostRate          float64
	HostMaxConcurrent int
}

// None reports whether l limits nothing: the delivery asks no one.
func (l Limits) None() bool {
	return l.Rate <= 0 && l.MaxConcurrent <= 0 && l.HostRate <= 0 && l.HostMaxConcurrent <= 0
}

// Config configures a Throttle. Zero values take the documented defaults.
type Config struct {
	// Lease is how long a delivery in flight holds its slot unless it
	// releases it (default 1m): longer than a delivery lasts.
	Lease time.Duration
	// Poll is the longest wait told while a cap is full (default 200ms): a
	// slot frees when a delivery ends, which is not announced.
	Poll time.Duration
	// Clock, when set, is the time the limits are kept by (tests); by
	// default, Redis's clock, which every relay shares.
	Clock func() time.Time
}

// Throttle decides when deliveries may start.
type Throttle struct {
	rdb redis.UniversalClient
	k   layout.Keys
	cfg Config
}

// New returns a Throttle over rdb, with its keys named by k.
func New(rdb redis.UniversalClient, k layout.Keys, cfg Config) (*Throttle, error) {
	switch {
	case rdb == nil:
		return nil, errors.New("throttle: rdb is required")
	case cfg.Lease < 0:
		return nil, fmt.Errorf("throttle: Config.Lease is negative (%s)", cfg.Lease)
	case cfg.Poll < 0:
		return nil, fmt.Errorf("throttle: Config.Poll is negative (%s)", cfg.Poll)
	}
	cfg.Lease = cmp.Or(cfg.Lease, time.Minute)
	cfg.Poll = cmp.Or(cfg.Poll, 200*time.Millisecond)
	return &Throttle{rdb: rdb, k: k, cfg: cfg}, nil
}

// Wait says why a delivery may not start yet.
type Wait struct {
	// For is how long to wait before asking again.
	For time.Duration
	// Limit is the limit that holds it: "rate" or "concurrency".
	Limit string
}

// Slot is a delivery's place in flight, released when it ends.
type Slot struct {
	keys  layout.EndpointKeys
	lease string
}

// Held reports whether s holds a place in flight (Release frees it).
func (s Slot) Held() bool { return s.lease != "" }

// HostOf is the host a webhook URL's host limits are kept under: its host
// and port, in one spelling for every way of writing them (ssrf's
// CanonicalHost; the scheme's default port when none is written).
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	port := u.Port()
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		port = strconv.FormatUint(n, 10)
	} else if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(ssrf.CanonicalHost(u.Hostname()), port)
}

// Acquire lets one delivery to webhookURL under l start now (a Slot,
// released with Release), or says how long to wait. l must limit
// something (Limits.None is false).
func (t *Throttle) Acquire(ctx context.Context, webhookURL string, l Limits) (Slot, *Wait, error) {
	scoped := webhookURL
	if l.Owner != "" {
		scoped = l.Owner + "\x00" + webhookURL
	}
	keys := t.k.Endpoint(HostOf(webhookURL), scoped)
	lease := ""
	if l.MaxConcurrent > 0 || l.HostMaxConcurrent > 0 {
		lease = uuid.NewString()
	}
	var now int64
	if t.cfg.Clock != nil {
		now = t.cfg.Clock().UnixMilli()
	}
	args, _ := json.Marshal(map[string]any{ // (numbers and strings: cannot fail)
		"urlRate": l.Rate, "hostRate": l.HostRate, "urlMax": l.MaxConcurrent, "hostMax": l.HostMaxConcurrent,
		"lease": lease, "leaseMs": t.cfg.Lease.Milliseconds(), "pollMs": t.cfg.Poll.Milliseconds(), "now": now,
	})
	res, err := acquireScript.Run(ctx, t.rdb, []string{keys.URLRateAt(l.Rate), keys.URLFlight, keys.HostRate, keys.HostFlight}, args).Slice()
	if err != nil {
		return Slot{}, nil, fmt.Errorf("throttle: acquire: %w", err)
	}
	if ok, _ := res[0].(int64); ok == 1 {
		return Slot{keys: keys, lease: lease}, nil, nil
	}
	ms, _ := res[1].(int64)
	limit, _ := res[2].(string)
	return Slot{}, &Wait{For: time.Duration(max(ms, 1)) * time.Millisecond, Limit: limit}, nil
}

// Release frees s's place in flight (a Slot under no cap frees nothing,
// and asks nothing of Redis).
func (t *Throttle) Release(ctx context.Context, s Slot) error {
	if s.lease == "" {
		return nil
	}
	_, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.keys.URLFlight, s.lease)
		p.ZRem(ctx, s.keys.HostFlight, s.lease)
		return nil
	})
	if err != nil {
		return fmt.Errorf("throttle: release: %w", err)
	}
	return nil
}

// HeldSlot is a Slot holding lease (for tests of the throttle's users).
func HeldSlot(lease string) Slot { return Slot{lease: lease} }
