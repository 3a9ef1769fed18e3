// Package delivery delivers committed task events to webhooks: the worker
// pool that reads lane tokens from the delivery streams, shapes each
// notification by the dialect of its push config, signs it, POSTs it through
// an SSRF-safe client, logs the attempt and retries with exponential backoff
// until it lands or goes to dead letters. It never decides task state, and
// never decides lease timing: it consumes the outbox through one consumer
// (Deps.Queue, an outbox.Consumer), which decides how long lane and outbox
// leases last and when they are renewed.
package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/backpressure"
	"github.com/a2arelay/relay/internal/cadence"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/secrets"
	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/telemetry"
)

// Queue is the outbox as the workers consume it (outbox.Consumer
// implements it). It decides every lease time: how long lane and outbox
// leases last, how often they are renewed (Timing), when a token is fresh
// and when a run step re-claims it (Begin, FinishToken), and whether an
// attempt still fits in its lane lease (CanAttempt); the workers only run
// the loops at the cadence it gives.
type Queue interface {
	Name() string
	Partitions() int
	Timing() outbox.Timing

	// Lanes: their tokens and leases.
	ReadTokens(ctx context.Context, p, count int, block time.Duration) ([]outbox.Token, error)
	Reclaim(ctx context.Context, p, count int) ([]outbox.Token, error)
	Begin(ctx context.Context, t outbox.Token) (outbox.Head, int, error)
	CanAttempt(h outbox.Head) bool
	FinishToken(ctx context.Context, t outbox.Token, h outbox.Head, f outbox.Finish) (outbox.Finished, error)

	// The outboxes (Config.Outbox; outbox.go).
	Relays(ctx context.Context) (int, error)
	Own(ctx context.Context, p int) (outbox.Ownership, bool, error)
	KeepOwning(ctx context.Context, p int, offset string, release bool) (bool, error)
	Leave(ctx context.Context)
	ReadOutbox(ctx context.Context, p int, after string, count int, block time.Duration) ([]outbox.OutboxEntry, error)
	LoadOutbox(ctx context.Context, p int, es []outbox.OutboxEntry, o outbox.LoadOptions) ([]outbox.Loaded, time.Time, error)
	FinishOutbox(ctx context.Context, p int, ops ...outbox.OutboxOp) ([]int, error)
	AdoptLanes(ctx context.Context, p int) ([]string, error)
	ParkedLanes(ctx context.Context, p int) ([]string, error)
	ForgetAdoptions(ctx context.Context) error

	// Housekeeping.
	EnsureGroups(ctx context.Context) error
	AddStats(ctx context.Context, stats []outbox.Stat) error
	MoveDue(ctx context.Context, p int, now time.Time, limit int) (int, time.Time, error)
	TrimAcked(ctx context.Context, p int) error
	PruneConsumers(ctx context.Context, p int) (int, error)
	ExpireRecords(ctx context.Context, p int, now time.Time) error
}

// Tasks is what workers need of the task store (taskstore.Store implements
// it): a task as it was at an event, for the dialects that carry the whole
// task, and the push config a notification is for.
type Tasks interface {
	TaskAt(ctx context.Context, taskID, eventID string, version int64) (taskstore.TaskAt, error)
	PushConfig(ctx context.Context, taskID, id string) ([]byte, error)
}

// Leader elects the one instance that does the housekeeping (leader.Leases
// implements it).
type Leader interface {
	Lead(ctx context.Context, role, holder string, ttl time.Duration) (bool, error)
}

// Signer signs notification JWTs (auth.Keys implements it): it appends
// the token to dst.
type Signer interface {
	AppendSign(dst []byte, claims jwt.Claims) ([]byte, error)
}

// Config configures the workers. Zero values take the documented defaults.
type Config struct {
	// Workers is the number of concurrent deliveries (default 256).
	Workers int
	// Timeout bounds one attempt (default: the Queue's Timing().Attempt,
	// which its leases are sized for; a longer one is refused).
	Timeout time.Duration
	// Policy is the retry policy.
	Policy Policy
	// Issuer is the JWT iss claim: relay's public URL.
	Issuer string
	// TokenTTL is the JWT lifetime (default 5m).
	TokenTTL time.Duration
	// UserAgent is sent with every POST (default "relay/dev").
	UserAgent string
	// MoveEvery is the grain at which due retries are moved back (default
	// 100ms): a retry goes back within MoveEvery of its due time. A
	// partition with no retry known to be due is looked at every 50
	// MoveEvery, for retries other instances scheduled; in between, the
	// mover sleeps.
	MoveEvery time.Duration
	// ExcerptBytes caps the response excerpt kept per attempt (default 1024).
	ExcerptBytes int
	// Secrets opens push config tokens and credentials sealed at rest.
	Secrets *secrets.Ring
	// Outbox has the first attempt of each notification delivered by the
	// owner of its partition's outbox (outbox.go), which must match the
	// store's outbox.Config.Outbox; lane tokens then carry retries only.
	Outbox bool
	// LaneRun caps how many heads of one lane a worker delivers in a row
	// before it hands the lane's token back to the stream (default 16): a
	// busy lane goes on without a trip through the stream per notification,
	// and still cannot keep a worker to itself.
	LaneRun int
	// StandardSignature is the Standard Webhooks signature added to
	// notifications whose push config asks for none: StandardOff (or "",
	// the default) or StandardV1a (needs Deps.StandardKeys). A config's own
	// choice (its webhook extension options) always wins.
	StandardSignature string
	// HostRate and HostMaxConcurrent are the operator's limits on the
	// deliveries to each webhook host: starts per second, and in flight,
	// across relays (0: none). A config's own limits (webhook extension)
	// hold for its URL beside them (limits.go). Any limit needs
	// Deps.Throttle.
	HostRate          float64
	HostMaxConcurrent int
}

func (c Config) withDefaults() Config {
	c.Workers = cmp.Or(c.Workers, 256)
	c.TokenTTL = cmp.Or(c.TokenTTL, 5*time.Minute)
	c.UserAgent = cmp.Or(c.UserAgent, "relay/dev")
	c.MoveEvery = cmp.Or(c.MoveEvery, 100*time.Millisecond)
	c.ExcerptBytes = cmp.Or(c.ExcerptBytes, 1024)
	c.LaneRun = cmp.Or(c.LaneRun, 16)
	c.Policy.Initial = cmp.Or(c.Policy.Initial, time.Second)
	c.Policy.MaxInterval = cmp.Or(c.Policy.MaxInterval, 5*time.Minute)
	c.Policy.MaxAttempts = cmp.Or(c.Policy.MaxAttempts, 12)
	c.Policy.Jitter = cmp.Or(c.Policy.Jitter, 0.2)
	return c
}

// Workers is the delivery worker pool of one relay instance.
type Workers struct {
	q         Queue
	tasks     Tasks
	leader    Leader
	signer    Signer
	client    *fasthttp.Client
	cfg       Config
	log       *slog.Logger
	now       func() time.Time
	consumer  string
	pressure  *backpressure.Pressure
	validator *Validator
	standard  StandardKeys // Standard Webhooks v1a signing (nil: none)
	throttle  Throttle
	observer  Observer
	mover     *mover
	tally     tally
	configs   configCache
	bodies    bodyCache
	targets   targetCache
	operator  *Operator
	health    *healthTally
	tracer    *telemetry.Tracer
	// stopping is closed when Run's context ends: lane runs end early then.
	stopping <-chan struct{}
	// waiting counts tokens read and not yet taken by a worker: while any
	// wait, workers do not go on with lane runs, so busy lanes cannot keep
	// newly active ones waiting.
	waiting atomic.Int64
	// acked marks, per partition, a token finished here since the last
	// trim; trims counts the housekeeping passes (see trim).
	acked []atomic.Bool
	trims int
	// slots bounds the outbox owners' concurrent attempts (Config.Workers).
	slots chan struct{}
	// redisClock is Redis's clock less the local one, in ns, as last read
	// (redisClockRead: when, on the monotonic clock, see monotonic): the
	// outbox owners read it with their loads at most once a second
	// (redisNow).
	redisClock, redisClockRead atomic.Int64
}

// processStart anchors monotonic.
var processStart = time.Now()

// monotonic is the time since the process started, by the monotonic clock:
// a wall clock stepped back (NTP, a restored VM) does not move it.
func monotonic() int64 { return int64(time.Since(processStart)) }

// validate checks the webhook's host when validation is on; a failure is
// the attempt's failure (error class "validation"), retried like any other.
func (w *Workers) validate(ctx context.Context, url string, a *Attempt) error {
	if w.validator == nil {
		return nil
	}
	err := w.validator.Check(ctx, url)
	var ve *ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ve):
		a.ErrorClass, a.Error = "validation", ve.Error()
		w.log.WarnContext(ctx, "webhook validation failed", "host", ve.Host, "reason", ve.Reason, "task_id", a.TaskID, "config_id", a.ConfigID)
	default:
		a.ErrorClass, a.Error = ssrf.Classify(err), errorText(err)
	}
	return err
}

// Run delivers until ctx is cancelled. On return no attempt is in flight;
// tokens read but not started stay pending in Redis and are reclaimed.
func (w *Workers) Run(ctx context.Context) error {
	if err := w.q.EnsureGroups(ctx); err != nil {
		return err
	}
	tokens := make(chan outbox.Token)
	w.stopping = ctx.Done()
	var readers, workers sync.WaitGroup
	for p := range w.q.Partitions() {
		readers.Go(func() { w.readLoop(ctx, p, tokens) })
	}
	readers.Go(func() { w.mover.run(ctx, w.now, w.cfg.MoveEvery) })
	if w.cfg.Outbox {
		readers.Go(func() { w.ownLoop(ctx) })
	} else {
		readers.Go(func() { w.drainOutboxes(ctx) })
	}

	readers.Go(func() { w.every(ctx, time.Second, w.trim) })
	readers.Go(func() { w.every(ctx, time.Second, w.flushStats) })
	if w.health != nil {
		readers.Go(func() { w.every(ctx, time.Second, w.flushHealth) })
	}
	readers.Go(func() { w.every(ctx, w.q.Timing().Reclaim, func(ctx context.Context) { w.reclaim(ctx, tokens) }) })
	for range w.cfg.Workers {
		workers.Go(func() {
			for t := range tokens {
				w.Process(context.WithoutCancel(ctx), t)
			}
		})
	}
	// The operator outlives the workers: alerts of their last attempts
	// are still sent.
	opCtx, stopOp := context.WithCancel(context.WithoutCancel(ctx))
	var op sync.WaitGroup
	if w.operator != nil {
		op.Go(func() { w.operator.Run(opCtx) })
	}
	readers.Wait()
	close(tokens)
	workers.Wait()
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	w.flushStats(flushCtx) // the counts of the last attempts
	if w.health != nil {
		w.flushHealth(flushCtx)
	}
	cancel()
	stopOp()
	op.Wait()
	w.client.CloseIdleConnections() // nothing is POSTed any more: let the webhooks' connections go
	return nil
}

// readLoop feeds the tokens of partition p to the workers.
func (w *Workers) readLoop(ctx context.Context, p int, out chan<- outbox.Token) {
	for ctx.Err() == nil {
		// Tokens read wait in memory until a worker is free; one that waits
		// longer than the lane lease may be handed out again, and Begin
		// makes sure only one of the copies delivers.
		ts, err := w.q.ReadTokens(ctx, p, 16, cadence.Until(w.now(), time.Second)) // (on the process's grid: internal/cadence)
		if err != nil {
			if ctx.Err() == nil {
				w.log.WarnContext(ctx, "reading delivery tokens", "partition", p, "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		for _, t := range ts {
			if !w.handOut(ctx, out, t) {
				return
			}
		}
	}
}

// handOut gives t to a worker; false when ctx ended first.
func (w *Workers) handOut(ctx context.Context, out chan<- outbox.Token, t outbox.Token) bool {
	w.waiting.Add(1)
	defer w.waiting.Add(-1)
	select {
	case out <- t:
		return true
	case <-ctx.Done():
		return false
	}
}

// every runs f about every d until ctx ends, at the points of the
// process's grid (internal/cadence): the loops of an idle relay wake
// together.
func (w *Workers) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTimer(cadence.Until(w.now(), d))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
			t.Reset(cadence.Until(w.now(), d))
		}
	}
}

// trim drops acknowledged tokens from the delivery streams and, about once
// a minute, the consumers departed processes left in their groups and the
// index entries and dead letters past the retention. A partition is trimmed
// at every pass (each second) after this instance finished a token there,
// and otherwise every 10th pass (for other instances' tokens): an idle
// relay asks Redis little.
func (w *Workers) trim(ctx context.Context) {
	// One instance is enough: the leader of "housekeeping" (a Redis lease
	// renewed every pass; another instance takes over when it lapses).
	if lead, err := w.leader.Lead(ctx, "housekeeping", w.consumer, 5*time.Second); err != nil || !lead {
		if err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "housekeeping lease", "err", err)
		}
		return
	}
	prune := w.now().Second() == 0 // about once a minute
	w.trims++
	for p := range w.q.Partitions() {
		if w.acked[p].Swap(false) || w.trims%10 == 1 {
			if err := w.q.TrimAcked(ctx, p); err != nil && ctx.Err() == nil {
				w.log.WarnContext(ctx, "trimming a delivery stream", "partition", p, "err", err)
			}
		}
		if !prune {
			continue
		}
		if _, err := w.q.PruneConsumers(ctx, p); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "pruning departed consumers", "partition", p, "err", err)
		}
		if err := w.q.ExpireRecords(ctx, p, w.now()); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "expiring delivery records", "partition", p, "err", err)
		}
	}
}

// reclaim takes over tokens left pending by a worker that died.
func (w *Workers) reclaim(ctx context.Context, out chan<- outbox.Token) {
	for p := range w.q.Partitions() {
		ts, err := w.q.Reclaim(ctx, p, 64)
		if err != nil {
			if ctx.Err() == nil {
				w.log.WarnContext(ctx, "reclaiming delivery tokens", "partition", p, "err", err)
			}
			continue
		}
		for _, t := range ts {
			if !w.handOut(ctx, out, t) {
				return
			}
		}
	}
}

// Process works on one token: deliver the head of its lane and finish it;
// while the lane has more, the run is under LaneRun and no token waits for
// a worker, go on with the next head under the same token and lease (the
// Queue keeps the lease's time: see Begin, CanAttempt and FinishToken).
func (w *Workers) Process(ctx context.Context, t outbox.Token) {
	h, status, err := w.q.Begin(ctx, t)
	if err != nil {
		w.log.WarnContext(ctx, "starting a delivery", "task_id", t.TaskID, "err", err)
		return // the token stays pending and is reclaimed
	}
	if status != outbox.Go {
		return // finished already, or another worker delivers this lane right now
	}
	if !t.Reclaimed {
		w.pressure.Observe(h.Waited)
	}
	if t.NotificationID != "" && t.NotificationID != h.NotificationID {
		// A retry token that went on with a lane run and was reclaimed: its
		// attempt count is another notification's.
		t.Attempt, t.First = 1, time.Time{}
	}
	for n := 1; ; n++ {
		run := n < w.cfg.LaneRun && w.waiting.Load() == 0 && !w.isStopping()
		done, ok := w.deliverHead(ctx, t, h, run)
		if !ok || !done.Run {
			return
		}
		// The next head is a new notification: its first attempt.
		t.Attempt, t.First, t.Reclaimed, t.NotificationID = 1, time.Time{}, false, ""
		h = done.Next
	}
}

// deliverHead makes one attempt at head h of t's lane and finishes it,
// asking to go on with the next head when run. It returns what FinishToken
// did, and false when the token was left pending (to be reclaimed) or was
// stale.
func (w *Workers) deliverHead(ctx context.Context, t outbox.Token, h outbox.Head, run bool) (outbox.Finished, bool) {
	now := w.now()
	f := outbox.Finish{Now: now, First: cmp.Or(t.First, now), Run: run}
	var rec Attempt
	switch {
	case h.Entry == "" || h.Event == nil:
		f.Outcome = outbox.Skip
		if h.Entry != "" {
			w.log.WarnContext(ctx, "notification dropped: its event is no longer stored (the task expired)",
				"notification_id", h.NotificationID, "task_id", t.TaskID, "event_id", h.EventID)
		}
	case h.Config == nil:
		f.Outcome = outbox.Drop
	default:
		slot, wait := w.admit(ctx, h)
		if wait != nil {
			f.Outcome, f.Due, f.First = outbox.Wait, now.Add(wait.For), t.First
			break
		}
		err := w.attempt(ctx, t, h, &f, &rec)
		w.release(ctx, slot)
		if errors.Is(err, errTransient) {
			// Redis did not answer (a timeout, a failover): not the
			// notification's fault. Leave the token pending; it is
			// reclaimed and tried again.
			w.log.WarnContext(ctx, "delivery put off: reading the notification failed", "notification_id", h.NotificationID, "err", err)
			return outbox.Finished{}, false
		}
		if errors.Is(err, errLeaseShort) {
			// Paused past the point where the attempt could end within the
			// lease (a frozen process): another worker may own the lane by
			// now. Leave the token pending; it is reclaimed.
			w.log.WarnContext(ctx, "delivery skipped: too little of its lease left", "notification_id", h.NotificationID)
			return outbox.Finished{}, false
		}
		if err != nil {
			w.log.ErrorContext(ctx, "cannot deliver stored notification", "notification_id", h.NotificationID, "err", err)
			f.Outcome, f.Reason = outbox.Dead, err.Error()
		}
	}
	done, err := w.q.FinishToken(ctx, t, h, f)
	if err != nil {
		w.log.WarnContext(ctx, "finishing a delivery", "notification_id", h.NotificationID, "err", err)
		return outbox.Finished{}, false
	}
	if done.Applied {
		w.acked[t.Partition].Store(true) // its stream is trimmed at the next pass
		w.report(ctx, t, h, f, rec, now)
	}
	return done, done.Applied || done.Run
}

// report counts an applied attempt made at now, schedules its retry, and
// tells the operator and the observer.
func (w *Workers) report(ctx context.Context, t outbox.Token, h outbox.Head, f outbox.Finish, rec Attempt, now time.Time) {
	if f.Outcome == outbox.Wait { // no attempt: only its lane's next try is scheduled
		w.mover.scheduled(t.Partition, f.Due)
		return
	}
	w.tally.add(t.Partition, now, f.Outcome)
	w.health.count(f.Outcome, rec)
	if f.Outcome == outbox.Retry {
		w.mover.scheduled(t.Partition, f.Due)
	}
	if w.operator != nil && (f.Outcome == outbox.Dead || f.Outcome == outbox.Gone) {
		ev := "delivery.dead"
		if f.Outcome == outbox.Gone {
			ev = "config.disabled"
		}
		w.operator.Notify(Alert{Event: ev, Time: w.now().UTC(), TaskID: t.TaskID, ConfigID: t.ConfigID,
			NotificationID: h.NotificationID, URL: rec.URL, EndpointID: rec.endpoint, Reason: f.Reason, Attempt: t.Attempt})
	}
	if w.observer != nil {
		took := time.Duration(rec.LatencyMs * float64(time.Millisecond))
		w.observer.Attempt(string(f.Outcome), rec.ErrorClass, f.Reason, took, w.now().Sub(streamTime(h.EventID)))
	}
}

// isStopping tells whether Run's context has ended.
func (w *Workers) isStopping() bool {
	select {
	case <-w.stopping:
		return true
	default:
		return false
	}
}

// errLeaseShort: the lane lease has less time left than an attempt takes.
var errLeaseShort = errors.New("too little of the lane lease left for an attempt")

// errTransient marks an attempt that could not start because Redis did not
// answer: it is tried again, not dead-lettered.
var errTransient = errors.New("redis did not answer")

// streamTime is the time in a Redis stream id ("ms-seq"); zero when it has none.
func streamTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// Observer receives every finished attempt (metrics.Metrics implements it):
// outcome, error class, dead-letter reason, the POST's duration, and the
// time since the event's commit.
type Observer interface {
	Attempt(outcome, class, reason string, took, sinceCommit time.Duration)
	// LimitWait: a delivery put off for d by a webhook's limit (rate,
	// concurrency).
	LimitWait(limit string, d time.Duration)
}

// attempt delivers the head once and fills f.
func (w *Workers) attempt(ctx context.Context, t outbox.Token, h outbox.Head, f *outbox.Finish, rec *Attempt) error {
	cfg, err := w.configs.open(w.cfg.Secrets, h.Config)
	if err != nil {
		return err
	}
	a := Attempt{Time: f.Now, NotificationID: h.NotificationID, TaskID: t.TaskID, ConfigID: t.ConfigID, URL: cfg.URL, Attempt: t.Attempt,
		endpoint: cfg.endpoint, owner: cfg.Owner}
	ctx, span := w.tracer.StartUnder(ctx, h.TraceParent, "webhook attempt", trace.SpanKindClient)
	defer func() { endAttempt(span, &a) }()
	if sc := span.SpanContext(); sc.IsValid() {
		a.TraceID = sc.TraceID().String()
	}
	if cfg.invalid == nil && w.health.isDisabled(cfg.endpoint) {
		still, err := w.health.stillDisabled(ctx, cfg.endpoint)
		if err != nil {
			return fmt.Errorf("%w: read whether the endpoint is disabled: %w", errTransient, err)
		}
		if still {
			return w.skipDisabled(f, rec, a)
		}
	}
	var r result
	if cfg.invalid != nil {
		// Not sent: the attempt says why, without the URL's password.
		a.URL, a.ErrorClass, a.Error = redactURL(cfg.URL), classConfig, "stored push config is invalid: "+cfg.invalid.Error()
		r = result{err: cfg.invalid, invalidConfig: true}
	} else if r, err = w.send(ctx, t, h, cfg.PushConfig, &a); err != nil {
		return err
	}
	f.Outcome, f.Due, f.Reason = w.cfg.Policy.decide(r, t.Attempt, f.First, w.now())
	a.Outcome = string(f.Outcome)
	if f.Outcome == outbox.Retry {
		a.NextAttempt = &f.Due
	}
	f.Attempt, err = a.appendJSON(make([]byte, 0, 512))
	*rec = a
	if f.Outcome != outbox.Delivered {
		w.log.InfoContext(ctx, "delivery attempt failed", "notification_id", h.NotificationID, "task_id", t.TaskID,
			"attempt", t.Attempt, "status", a.Status, "error_class", a.ErrorClass, "outcome", a.Outcome)
	}
	return err
}

// classConfig is the error class of an attempt not made because the stored
// push config is invalid.
const classConfig = "config"

// send renders the head for cfg, validates the webhook's host when asked,
// and POSTs, filling a.
func (w *Workers) send(ctx context.Context, t outbox.Token, h outbox.Head, cfg a2a.PushConfig, a *Attempt) (result, error) {
	n, err := w.render(ctx, t, h, cfg.Dialect)
	if err != nil {
		return result{}, err
	}
	// The validation GET and the POST share one timeout: an attempt never
	// outlasts the lane lease, which assumes one request's worth of time;
	// and an attempt that could no longer end within it is not started.
	if !w.q.CanAttempt(h) {
		return result{}, errLeaseShort
	}
	actx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	if verr := w.validate(actx, cfg.URL, a); verr != nil {
		return result{err: verr}, nil
	}
	return w.post(actx, cfg, n, h.NotificationID, a), nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
