package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/worker"
)

// WorkSkill is the skill whose backend is the worker queue WorkQueue (the
// relays' YAML config says so); a message picks it with metadata
// {"skill": WorkSkill}.
const WorkSkill, WorkQueue = "work", "chaos"

// markPrefix starts the status message of every event a chaos worker
// posts: "chaos-mark <task>/<attempt>/<step>", one marker per logical post,
// so that an event committed twice shows in the truth.
const markPrefix = "chaos-mark "

// FleetConfig is a fleet of Go workers (package worker) on WorkQueue.
type FleetConfig struct {
	// Addrs are the relays' host:port; a worker connects to any that
	// answers, so it survives a relay's death.
	Addrs []string
	// Token is a worker token of the relays.
	Token string
	// Workers run at once; the first Cut of them connect through
	// connections that cut the reply of a share CutRate of their event
	// posts after relay received the post (the worker then sends it again).
	Workers, Cut int
	CutRate      float64
	// Steps working updates, Delay apart, then completed: each task's events.
	Steps int
	Delay time.Duration
	// FreshKeys is a self-test of the suite: each try of a post goes out
	// under a new Idempotency-Key, as a worker without the package's
	// retry discipline would send it. The duplicate check must then fail.
	FreshKeys bool
	Seed      uint64
	// Log receives the workers' logs.
	Log *slog.Logger
}

// Claim is one task a worker claimed, as the claim told it.
type Claim struct {
	TaskID, Owner, ContextID string
	Attempt, Worker          int
}

// Fleet runs the workers and records what they saw: their claims, the
// posts relay acknowledged, the replies cut.
type Fleet struct {
	cfg FleetConfig

	mu     sync.Mutex
	claims []Claim
	acked  map[string]string // marker → task of every post relay acknowledged
	cuts   atomic.Int64
	posts  atomic.Int64 // logical posts begun
	tries  atomic.Int64 // posts the workers sent again themselves
	roll   func() bool

	transports []*http.Transport
	wg         sync.WaitGroup
}

// NewFleet returns a fleet; Start runs it.
func NewFleet(cfg FleetConfig) *Fleet {
	rnd := rand.New(rand.NewPCG(cfg.Seed, 17))
	var rmu sync.Mutex
	f := &Fleet{cfg: cfg, acked: map[string]string{}}
	f.roll = func() bool {
		rmu.Lock()
		defer rmu.Unlock()
		return rnd.Float64() < cfg.CutRate
	}
	return f
}

// Start starts the workers; they run until ctx ends (Wait waits for them).
func (f *Fleet) Start(ctx context.Context) {
	for w := range f.cfg.Workers {
		d := &relayDialer{addrs: f.cfg.Addrs}
		if w < f.cfg.Cut {
			d.cut, d.roll, d.cuts = true, f.roll, &f.cuts
		}
		tr := &http.Transport{DialContext: d.dial, MaxIdleConnsPerHost: 2, IdleConnTimeout: 10 * time.Second}
		f.transports = append(f.transports, tr)
		var rt http.RoundTripper = tr
		if f.cfg.FreshKeys {
			rt = freshKeys{tr}
		}
		c := &worker.Client{BaseURL: "http://" + f.cfg.Addrs[0], Token: f.cfg.Token, Queue: WorkQueue,
			WorkerID: fmt.Sprintf("chaos-worker-%d", w), HTTP: &http.Client{Transport: rt}, Logger: f.cfg.Log.With("worker", w)}
		f.wg.Go(func() {
			if err := c.Run(ctx, f.handle(w)); err != nil {
				f.cfg.Log.Error("worker stopped", "worker", w, "err", err)
			}
		})
	}
}

// Wait waits for the workers to stop, then closes their connections.
func (f *Fleet) Wait() {
	f.wg.Wait()
	for _, tr := range f.transports {
		tr.CloseIdleConnections()
	}
}

// Claims returns the claims so far.
func (f *Fleet) Claims() []Claim {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Claim(nil), f.claims...)
}

// Acked returns the marker (and task) of every post relay acknowledged.
func (f *Fleet) Acked() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.acked))
	for m, t := range f.acked {
		out[m] = t
	}
	return out
}

// handle works on one task: Steps working updates, then completed, each
// a post of its own with its marker. After a takeover (Attempt > 1) it
// starts again; the markers carry the attempt, so that is no duplicate.
func (f *Fleet) handle(w int) func(context.Context, *worker.Job) error {
	return func(ctx context.Context, j *worker.Job) error {
		f.mu.Lock()
		f.claims = append(f.claims, Claim{TaskID: j.TaskID, Owner: j.Owner, ContextID: j.ContextID, Attempt: j.Attempt, Worker: w})
		f.mu.Unlock()
		for step := 1; step <= f.cfg.Steps+1; step++ {
			state := worker.StateWorking
			if step > f.cfg.Steps {
				state = worker.StateCompleted
			}
			if err := f.post(ctx, j, state, fmt.Sprintf("%s%s/%d/%d", markPrefix, j.TaskID, j.Attempt, step)); err != nil {
				return err
			}
			if step <= f.cfg.Steps && !sleepCtx(ctx, f.cfg.Delay) {
				return ctx.Err()
			}
		}
		return nil
	}
}

// post posts one event under one idempotency key until relay acknowledges
// it or the job ends: the package sends it again after a lost reply, and
// so does this loop when the package gives up (relays or Redis down).
func (f *Fleet) post(ctx context.Context, j *worker.Job, state, mark string) error {
	f.posts.Add(1)
	key, ev := worker.NewIdempotencyKey(), j.StatusEvent(state, mark)
	for {
		err := j.PostWithKey(ctx, key, ev)
		if err == nil {
			f.mu.Lock()
			f.acked[mark] = j.TaskID
			f.mu.Unlock()
			return nil
		}
		var ae *worker.APIError
		if j.Err() != nil || ctx.Err() != nil || errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusTooManyRequests {
			return err
		}
		f.tries.Add(1)
		if !sleepCtx(ctx, 300*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// relayDialer connects to the first relay of addrs (starting at the next
// one in turn) that accepts the connection, whatever address the request
// named; with cut, its connections cut the replies of some event posts.
type relayDialer struct {
	addrs []string
	next  atomic.Uint64
	cut   bool
	roll  func() bool
	cuts  *atomic.Int64
}

func (d *relayDialer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	start := int(d.next.Add(1))
	var last error
	for i := range d.addrs {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", d.addrs[(start+i)%len(d.addrs)])
		if err != nil {
			last = err
			continue
		}
		if d.cut {
			return &cutConn{Conn: c, d: d}, nil
		}
		return c, nil
	}
	return nil, last
}

// errReplyCut is what a worker reads from a connection whose reply was cut.
var errReplyCut = errors.New("chaos: connection cut before the reply")

// cutConn is a connection to a relay that, for a share of the event posts
// written to it, closes itself when the reply starts to arrive: relay
// received the post and answered, the worker never learns the answer.
type cutConn struct {
	net.Conn
	d     *relayDialer
	armed atomic.Bool
}

func (c *cutConn) Write(b []byte) (int, error) {
	line, _, _ := bytes.Cut(b, []byte("\r\n"))
	if s := string(line); strings.HasPrefix(s, "POST /v1/tasks/") && strings.Contains(s, "/events ") && c.d.roll() {
		c.armed.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *cutConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.armed.CompareAndSwap(true, false) {
		_ = c.Conn.Close()
		c.d.cuts.Add(1)
		return 0, errReplyCut
	}
	return n, err
}

// freshKeys sends each try of a post under a new Idempotency-Key (and
// keeps the transport from replaying it under the old one): the self-test
// of FleetConfig.FreshKeys.
type freshKeys struct{ next http.RoundTripper }

func (f freshKeys) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Idempotency-Key") == "" {
		return f.next.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Idempotency-Key", worker.NewIdempotencyKey())
	r2.GetBody = nil
	return f.next.RoundTrip(r2)
}
