package delivery

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/internal/backpressure"
	"github.com/a2arelay/relay/internal/telemetry"
)

// Deps are what the workers work with. Queue, Signer and Dial are
// required; the others are optional.
type Deps struct {
	Queue  Queue
	Tasks  Tasks
	Leader Leader
	Signer Signer
	// Dial opens every connection the POSTs use: the SSRF guard's
	// DialContext. Redirects are never followed.
	Dial DialFunc
	// TLS configures HTTPS webhooks (default: the system roots, TLS 1.2
	// at least).
	TLS *tls.Config
	// Log defaults to slog.Default().
	Log *slog.Logger
	// Pressure, the backpressure that holds new tasks while the queue is
	// behind, is told how long each token waited for a worker.
	Pressure *backpressure.Pressure
	// Observer receives every finished attempt (metrics).
	Observer Observer
	// Operator is told of disabled configs and dead letters; Run runs it.
	Operator *Operator
	// Health is the endpoints' health: the workers count every attempt's
	// outcome to its endpoint, and skip the notifications of disabled
	// endpoints (endpoint_health.go). Nil: no health is kept.
	Health Health
	// Validator checks a webhook host's ownership before its first
	// notification.
	Validator *Validator
	// StandardKeys sign Standard Webhooks v1a signatures; required when
	// Config.StandardSignature is v1a. Without them a config that asks
	// for v1a fails its attempts (error class "sign").
	StandardKeys StandardKeys
	// Throttle keeps the webhooks' limits (limits.go); without it no
	// limit holds, and Config's host limits are refused.
	Throttle Throttle
	// Tracer traces every attempt, under the trace of the task turn that
	// made its event (nil: tracing is off).
	Tracer *telemetry.Tracer
}

// New returns a worker pool, or an error naming what is missing or out of
// range.
func New(d Deps, cfg Config) (*Workers, error) {
	switch {
	case d.Queue == nil:
		return nil, errors.New("delivery: Deps.Queue is required")
	case d.Tasks == nil:
		return nil, errors.New("delivery: Deps.Tasks is required")
	case d.Leader == nil:
		return nil, errors.New("delivery: Deps.Leader is required")
	case d.Signer == nil:
		return nil, errors.New("delivery: Deps.Signer is required")
	case d.Dial == nil:
		return nil, errors.New("delivery: Deps.Dial is required")
	case d.Throttle == nil && (cfg.HostRate != 0 || cfg.HostMaxConcurrent != 0):
		return nil, errors.New("delivery: Config.HostRate and HostMaxConcurrent need Deps.Throttle")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	switch cfg.StandardSignature {
	case "", StandardOff:
	case StandardV1a:
		if d.StandardKeys == nil {
			return nil, errors.New("delivery: Deps.StandardKeys is required with Config.StandardSignature v1a")
		}
	default:
		return nil, fmt.Errorf("delivery: Config.StandardSignature %q is not %q or %q", cfg.StandardSignature, StandardOff, StandardV1a)
	}
	if attempt := d.Queue.Timing().Attempt; cfg.Timeout > attempt {
		return nil, fmt.Errorf("delivery: Config.Timeout (%s) is longer than the attempt the outbox consumer's leases are sized for (%s)", cfg.Timeout, attempt)
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, d.Queue.Timing().Attempt)
	cfg = cfg.withDefaults()
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	w := &Workers{
		q: d.Queue, tasks: d.Tasks, leader: d.Leader, signer: d.Signer, cfg: cfg, log: log, now: time.Now, mover: newMover(d.Queue, 50*cfg.MoveEvery, log),
		consumer: d.Queue.Name(),
		client:   newClient(d.Dial, d.TLS, max(cfg.Workers, 64)),
		pressure: d.Pressure, observer: d.Observer, operator: d.Operator, validator: d.Validator, standard: d.StandardKeys, throttle: d.Throttle, tracer: d.Tracer,
		health: newHealthTally(d.Health),
		acked:  make([]atomic.Bool, d.Queue.Partitions()),
		slots:  make(chan struct{}, cfg.Workers),
	}
	if d.Pressure != nil {
		d.Pressure.Watch(func() bool { return w.waiting.Load() > 0 })
	}
	return w, nil
}

// validate refuses negative durations and counts (zero takes the default).
func (c Config) validate() error {
	for name, v := range map[string]time.Duration{"Timeout": c.Timeout, "TokenTTL": c.TokenTTL,
		"MoveEvery": c.MoveEvery, "Policy.Initial": c.Policy.Initial, "Policy.MaxInterval": c.Policy.MaxInterval,
		"Policy.MaxElapsed": c.Policy.MaxElapsed} {
		if v < 0 {
			return fmt.Errorf("delivery: Config.%s is negative (%s)", name, v)
		}
	}
	for name, v := range map[string]int{"Workers": c.Workers, "ExcerptBytes": c.ExcerptBytes, "LaneRun": c.LaneRun,
		"Policy.MaxAttempts": c.Policy.MaxAttempts, "HostMaxConcurrent": c.HostMaxConcurrent} {
		if v < 0 {
			return fmt.Errorf("delivery: Config.%s is negative (%d)", name, v)
		}
	}
	if c.HostRate < 0 || math.IsNaN(c.HostRate) || math.IsInf(c.HostRate, 0) {
		return fmt.Errorf("delivery: Config.HostRate %v is not a rate (0 or more per second)", c.HostRate)
	}
	if c.Policy.Jitter < 0 || c.Policy.Jitter > 1 {
		return fmt.Errorf("delivery: Config.Policy.Jitter %v is outside [0, 1]", c.Policy.Jitter)
	}
	return nil
}
