// Package metrics is relay's Prometheus instrumentation: one registry per
// instance, every name prefixed relay_, served at /metrics. Components
// report through small methods here, so they need no Prometheus import.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/outbox"
)

// Metrics holds relay's collectors.
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	events        prometheus.Counter
	notifications *prometheus.CounterVec
	dead          *prometheus.CounterVec
	toSuccess     prometheus.Histogram
	attempt       *prometheus.HistogramVec
	redisErrors   *prometheus.CounterVec
	held          prometheus.Histogram
	limitWaits    *prometheus.CounterVec
	limitWait     *prometheus.HistogramVec
	endpoints     endpointMetrics
	replays       *prometheus.CounterVec
	replayed      *prometheus.CounterVec
}

// latencyBuckets cover a loopback POST to a retried-for-a-day delivery.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400}

// New returns relay's metrics on a registry of their own (with the Go and
// process collectors).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_a2a_requests_total",
		Help: "A2A JSON-RPC requests by method, dialect and outcome (ok, or the JSON-RPC error code)."}, []string{"method", "dialect", "outcome"})
	m.events = prometheus.NewCounter(prometheus.CounterOpts{Name: "relay_events_committed_total",
		Help: "Task events committed (each also fans out to the task's webhooks)."})
	m.notifications = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_notifications_total",
		Help: "Delivery attempts by outcome: delivered, retried (failed, a retry is scheduled), dead, gone (410: config disabled), dropped (config deleted or event expired), skipped_disabled (not sent: its endpoint is disabled)."}, []string{"outcome"})
	m.dead = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_notifications_dead_total",
		Help: "Notifications sent to dead letters, by reason: attempts (retry budget), elapsed (time budget), undeliverable (stored notification unusable)."}, []string{"reason"})
	m.toSuccess = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "relay_delivery_commit_to_success_seconds",
		Help: "Time from an event's commit to its notification's successful delivery, retries included.", Buckets: latencyBuckets})
	m.attempt = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "relay_delivery_attempt_seconds",
		Help: "Duration of one webhook POST, by error class (none for an answer).", Buckets: latencyBuckets[:14]}, []string{"class"})
	m.redisErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_redis_errors_total",
		Help: "Redis commands that failed (not counting nil replies), by command."}, []string{"command"})
	m.held = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "relay_backpressure_hold_seconds",
		Help: "How long new tasks were held by backpressure, paced waits included (held ones only).", Buckets: latencyBuckets[:10]})
	m.limitWaits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_webhook_limit_waits_total",
		Help: "Deliveries put off by a webhook's limits (not attempts, not failures), by the limit that held them: rate or concurrency."}, []string{"limit"})
	m.limitWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "relay_webhook_limit_wait_seconds",
		Help: "How long a delivery put off by a webhook's limits was told to wait, by limit.", Buckets: latencyBuckets[:12]}, []string{"limit"})
	m.replays = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_replays_total",
		Help: "Replays of notification windows (POST /v1/deliveries/replay), by whether the bound cut them (truncated: true or false)."}, []string{"truncated"})
	m.replayed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_replay_notifications_total",
		Help: "Notifications replays found, by result: queued (queued again), waiting (still queued, left as they were)."}, []string{"result"})
	m.reg.MustRegister(m.requests, m.events, m.notifications, m.dead, m.toSuccess, m.attempt, m.redisErrors, m.held, m.limitWaits, m.limitWait, m.replays, m.replayed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.endpoints = newEndpointMetrics(m.reg)
	return m
}

// Registry is where /metrics reads from.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request counts one A2A request; code is 0 for a result.
func (m *Metrics) Request(method, dialect string, code int) {
	if m == nil {
		return
	}
	outcome := "ok"
	if code != 0 {
		outcome = strconv.Itoa(code)
	}
	m.requests.WithLabelValues(method, dialect, outcome).Inc()
}

// Replayed counts one replay that queued queued notifications again and
// found waiting still queued.
func (m *Metrics) Replayed(queued, waiting int, truncated bool) {
	if m == nil {
		return
	}
	m.replays.WithLabelValues(strconv.FormatBool(truncated)).Inc()
	m.replayed.WithLabelValues("queued").Add(float64(queued))
	m.replayed.WithLabelValues("waiting").Add(float64(waiting))
}

// Committed counts n committed events.
func (m *Metrics) Committed(n int) {
	if m != nil {
		m.events.Add(float64(n))
	}
}

// Attempt records one finished delivery attempt: its outcome (delivered,
// retry, dead, gone, drop, skip), the POST's duration and error class, the
// dead-letter reason, and for a success the time since the event's commit.
func (m *Metrics) Attempt(outcome, class, reason string, took, sinceCommit time.Duration) {
	if m == nil {
		return
	}
	label := outcome
	switch outcome {
	case "retry":
		label = "retried"
	case "drop", "skip":
		label = "dropped"
		if class == endpointDisabled {
			label = "skipped_disabled"
		}
	}
	m.notifications.WithLabelValues(label).Inc()
	if took > 0 {
		m.attempt.WithLabelValues(cmpOr(class, "none")).Observe(took.Seconds())
	}
	switch outcome {
	case "delivered":
		if sinceCommit > 0 {
			m.toSuccess.Observe(sinceCommit.Seconds())
		}
	case "dead":
		m.dead.WithLabelValues(deadReason(reason)).Inc()
	}
}

// LimitWait records a delivery put off for d by a webhook's limit (rate
// or concurrency).
func (m *Metrics) LimitWait(limit string, d time.Duration) {
	if m != nil {
		m.limitWaits.WithLabelValues(limit).Inc()
		m.limitWait.WithLabelValues(limit).Observe(d.Seconds())
	}
}

// Held records a new task held by backpressure.
func (m *Metrics) Held(d time.Duration) {
	if m != nil && d > 0 {
		m.held.Observe(d.Seconds())
	}
}

func deadReason(r string) string {
	switch {
	case strings.HasPrefix(r, "retry budget") && strings.HasSuffix(r, " elapsed"):
		return "elapsed"
	case strings.HasPrefix(r, "retry budget"):
		return "attempts"
	}
	return "undeliverable"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Hook returns a go-redis hook counting failed commands.
func (m *Metrics) Hook() redis.Hook { return redisHook{m: m} }

type redisHook struct{ m *Metrics }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.m.redisErrors.WithLabelValues("dial").Inc()
		}
		return c, err
	}
}

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(err, cmd.Name())
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.count(c.Err(), c.Name())
		}
		return err
	}
}

func (h redisHook) count(err error, name string) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	h.m.redisErrors.WithLabelValues(name).Inc()
}

// Depther reads the delivery backlog per partition (outbox.Stats).
type Depther interface {
	Depths(ctx context.Context) ([]outbox.Depth, error)
}

// WatchQueue adds gauges of the delivery backlog per partition, read from
// Redis at scrape time, and of open streams.
func (m *Metrics) WatchQueue(d Depther, openStreams func() int, log *slog.Logger) {
	m.reg.MustRegister(&depthCollector{d: d, log: log})
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "relay_streams_open",
		Help: "SSE streams open on this instance."}, func() float64 { return float64(openStreams()) }))
}
