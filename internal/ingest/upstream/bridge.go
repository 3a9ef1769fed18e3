// Package upstream is the upstream bridge: relay in front of an existing
// A2A agent. The bridge is an in-process worker of a pull queue (see
// ingest.Pull): it claims each task turn routed to its queue, sends the
// client's message to the agent over JSON-RPC in the dialect the agent's
// card offers (v1.0 or v0.3), follows the agent's task by streaming (SSE)
// or polling, and posts what the agent reports on the relay task through
// the one commit path. Because turns live in the queue under leases, a task
// survives a relay restart and moves to another relay instance, which
// re-attaches to the agent's task (resubscribe or poll) by the link kept
// in Redis (Links).
package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
)

// Pull is the worker side of a pull queue (ingest.Pull implements it).
type Pull interface {
	Lease() time.Duration
	Claim(ctx context.Context, queue, worker string, wait time.Duration) (*ingest.Claimed, error)
	Heartbeat(ctx context.Context, taskID, leaseID string) (ingest.Beat, error)
	PostOnce(ctx context.Context, taskID, leaseID, key string, events []a2a.Event) (ingest.Posted, error)
	Release(ctx context.Context, taskID, leaseID string) error
}

// Config configures a Bridge. Zero values take the documented defaults.
type Config struct {
	// URL is the agent's base URL: its card is at
	// URL/.well-known/agent-card.json, falling back to
	// URL/.well-known/agent.json. Required.
	URL string
	// Queue is the pull queue the bridge works (default "upstream").
	Queue string
	// Worker names this bridge in the queue and in logs (default
	// "upstream-<hostname>-<random>").
	Worker string
	// Concurrency is how many task turns run at once (default 64).
	Concurrency int
	// HTTP is the client that calls the agent (default: a client without
	// an overall timeout, since streams are long; calls are bounded by
	// RequestTimeout).
	HTTP *http.Client
	// Header is added to every request to the agent (e.g. Authorization).
	Header http.Header
	// PollInterval is the pause between two GetTask polls (default 1s).
	PollInterval time.Duration
	// ClaimWait is how long one claim waits for a task (default 1s).
	ClaimWait time.Duration
	// RequestTimeout bounds each call to the agent that is not a stream,
	// the card fetch, and the wait for a stream's response headers
	// (default 30s).
	RequestTimeout time.Duration
	// RetryFor is how long failing calls to the agent are retried before
	// the task fails (default 2m).
	RetryFor time.Duration
	// RetryInitial is the first pause between retries; pauses grow
	// exponentially with jitter up to 10s (default 250ms).
	RetryInitial time.Duration
	// Resubscribes is how many times in a row a dropped stream is
	// re-attached before the bridge polls instead (default 3).
	Resubscribes int
	// StreamIdle ends a stream on which nothing (not even a keep-alive)
	// arrived for this long, and re-attaches (default 2m).
	StreamIdle time.Duration
	// MaxEventSize bounds one SSE event, one response body and the card
	// (default 10 MiB), so that a hostile agent cannot exhaust memory.
	MaxEventSize int
	// CardTTL is how long a fetched card is used before it is fetched
	// again (default 5m).
	CardTTL time.Duration
	// Now is the clock of retry deadlines, backoff and the card cache
	// (default time.Now).
	Now func() time.Time
	// Outage is how posts on our tasks ride out Redis outages: retried
	// (under one idempotency key each, so a post whose answer was lost
	// lands once) up to its bound, past which the task fails.
	Outage ingest.Outage
}

// Validate checks the fields that have no default.
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("upstream: url: %q is not an absolute http(s) URL", c.URL)
	}
	if c.Concurrency < 0 {
		return fmt.Errorf("upstream: concurrency: %d is negative", c.Concurrency)
	}
	return nil
}

func (c Config) withDefaults() Config {
	c.URL = strings.TrimRight(c.URL, "/")
	c.Queue = cmp.Or(c.Queue, "upstream")
	if c.Worker == "" {
		host, _ := os.Hostname()
		c.Worker = "upstream-" + cmp.Or(host, "relay") + "-" + uuid.NewString()[:8]
	}
	c.Concurrency = max(c.Concurrency, 0)
	c.Concurrency = cmp.Or(c.Concurrency, 64)
	if c.HTTP == nil {
		c.HTTP = &http.Client{}
	}
	c.PollInterval = cmp.Or(c.PollInterval, time.Second)
	c.ClaimWait = cmp.Or(c.ClaimWait, time.Second)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, 30*time.Second)
	c.RetryFor = cmp.Or(c.RetryFor, 2*time.Minute)
	c.RetryInitial = cmp.Or(c.RetryInitial, 250*time.Millisecond)
	c.Resubscribes = cmp.Or(c.Resubscribes, 3)
	c.StreamIdle = cmp.Or(c.StreamIdle, 2*time.Minute)
	c.MaxEventSize = cmp.Or(c.MaxEventSize, 10<<20)
	c.CardTTL = cmp.Or(c.CardTTL, 5*time.Minute)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Outage.Now == nil {
		c.Outage.Now = c.Now
	}
	return c
}

// Bridge relays the task turns of one pull queue to one upstream agent.
type Bridge struct {
	cfg    Config
	pull   Pull
	links  Links
	log    *slog.Logger
	client *client

	mu    sync.Mutex
	turns map[string]*turn // by relay task id: the turns this instance runs
}

// Deps are what a Bridge works with.
type Deps struct {
	// Pull is the pull backend whose queue (Config.Queue) the bridge
	// claims turns from, and through which it commits their events.
	Pull  Pull
	Links Links
	Log   *slog.Logger
}

// New returns a Bridge, or an error naming what is missing or invalid
// (Config.Validate); Run starts it.
func New(d Deps, cfg Config) (*Bridge, error) {
	if d.Pull == nil || d.Links == nil {
		return nil, errors.New("upstream: Pull and Links are required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	log := cmp.Or(d.Log, slog.Default()).With("upstream", cfg.URL, "queue", cfg.Queue)
	if cfg.Outage.Log == nil {
		cfg.Outage.Log = log
	}
	return &Bridge{cfg: cfg, pull: d.Pull, links: d.Links, log: log, client: newClient(cfg, log),
		turns: map[string]*turn{}}, nil
}

// Run claims task turns and works them, up to Concurrency at once, until
// ctx ends. Turns still running then are released, so that another relay
// instance takes them over at once; Run returns when all have ended.
//
// One claim waits at a time, and only while a slot is free: the queue sees
// Concurrency workers, but idle ones do not each hold a blocked Redis
// connection.
func (b *Bridge) Run(ctx context.Context) error {
	slots := make(chan struct{}, b.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	bo := b.newBackoff()
	var lastLog time.Time
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		c, err := b.pull.Claim(ctx, b.cfg.Queue, b.cfg.Worker, b.cfg.ClaimWait)
		if c == nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				if now := b.cfg.Now(); now.Sub(lastLog) >= 10*time.Second {
					lastLog = now
					b.log.WarnContext(ctx, "claiming upstream work failed", "err", err)
				}
				if !sleep(ctx, bo.NextBackOff()) {
					return nil
				}
			}
			continue
		}
		bo.Reset()
		wg.Go(func() {
			defer func() { <-slots }()
			b.handle(ctx, c)
		})
	}
}

// Cancel stops the turn of taskID when this instance runs it, and forwards
// the cancel to the agent at once (the app calls it when the client
// cancels; other instances learn of it by heartbeat). When no instance
// runs the task (it waits for the client's input), the agent's task is
// canceled through the stored link, so that it does not wait forever.
func (b *Bridge) Cancel(taskID string) {
	b.mu.Lock()
	t := b.turns[taskID]
	b.mu.Unlock()
	if t != nil {
		t.stop(errClientCanceled)
		if errors.Is(context.Cause(t.ctx), errClientCanceled) {
			return // the turn forwards it as it ends
		}
		// The turn was over already (it just stopped for the client).
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*b.cfg.RequestTimeout)
		defer cancel()
		l, ok, err := b.links.Get(ctx, taskID)
		if err != nil {
			b.log.WarnContext(ctx, "reading an upstream link to cancel", "task_id", taskID, "err", err)
		}
		if ok && l.Queue == b.cfg.Queue { // another upstream's task is not ours to cancel
			b.cancelUpstream(ctx, taskID, l.UpstreamTaskID)
		}
	}()
}

// cancelUpstream asks the agent to cancel its task upID (for our taskID).
func (b *Bridge) cancelUpstream(ctx context.Context, taskID, upID string) {
	if upID == "" {
		b.log.InfoContext(ctx, "canceled before the agent named its task: nothing to cancel upstream", "task_id", taskID)
		return
	}
	rc, err := b.client.card(ctx)
	if err == nil {
		m := a2a.ClientMethods(rc.Dialect)
		_, err = b.client.call(ctx, rc, m.Cancel, a2a.EncodeTaskIDParams(rc.Dialect, upID))
	}
	if err != nil {
		b.log.InfoContext(ctx, "canceling the upstream task", "task_id", taskID, "upstream_task_id", upID, "err", err)
		return
	}
	b.log.InfoContext(ctx, "canceled the upstream task", "task_id", taskID, "upstream_task_id", upID)
}

// handle runs one claimed turn to its end, keeps its lease alive meanwhile,
// and cleans up after it: forwards a client's cancel, releases the turn at
// shutdown.
func (b *Bridge) handle(runCtx context.Context, c *ingest.Claimed) {
	ctx, stop := context.WithCancelCause(runCtx)
	t := newTurn(b, ctx, stop, c)
	b.mu.Lock()
	b.turns[t.taskID] = t
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.turns[t.taskID] == t {
			delete(b.turns, t.taskID)
		}
		b.mu.Unlock()
	}()

	var beats sync.WaitGroup
	beats.Go(t.heartbeat)
	err := t.run()
	var ue *upstreamError
	var oe *ingest.OutageError
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &oe):
		t.fail("relay could not record the upstream agent's progress: "+oe.Error()+".", oe)
		err = nil
	case errors.As(err, &ue):
		t.fail(fmt.Sprintf("upstream agent at %s: %s", b.cfg.URL, ue.Error()), ue)
		err = nil
	}
	stop(errTurnOver)
	beats.Wait()

	bg, cancel := context.WithTimeout(context.WithoutCancel(runCtx), b.cfg.RequestTimeout)
	defer cancel()
	log := b.log.With("task_id", t.taskID)
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errClientCanceled):
		b.cancelUpstream(bg, t.taskID, t.upstreamID())
	case runCtx.Err() != nil && !t.done:
		if err := b.pull.Release(bg, t.taskID, t.leaseID); err != nil && !errors.Is(err, ingest.ErrLeaseLost) {
			log.WarnContext(bg, "releasing an upstream task at shutdown", "err", err)
		}
	case errors.Is(cause, errLeaseOver):
		log.InfoContext(bg, "upstream turn stopped: the lease is over")
	case err != nil:
		// The lease runs out and the turn is claimed again, which re-attaches.
		log.WarnContext(bg, "upstream turn ended early", "err", err)
	}
}

// newBackoff returns the retry pauses: exponential with jitter, from
// RetryInitial up to 10s, never giving up (callers bound the time).
func (b *Bridge) newBackoff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(backoff.WithInitialInterval(b.cfg.RetryInitial),
		backoff.WithMaxInterval(max(10*time.Second, b.cfg.RetryInitial)), backoff.WithMaxElapsedTime(0),
		backoff.WithClockProvider(clockFunc(b.cfg.Now)))
}

// clockFunc adapts a func to backoff.Clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// sleep waits d, or less when ctx ends first; it reports whether ctx is live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
