package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/telemetry"
	"github.com/a2arelay/relay/internal/workqueue"
)

// WorkQueue is what the pull backend needs of Redis (workqueue.Claims).
type WorkQueue interface {
	Offer(ctx context.Context, queue, taskID, messageID string, turn int64) error
	Claim(ctx context.Context, queue, consumer string, ttl, wait time.Duration) (*workqueue.Work, error)
	ClaimN(ctx context.Context, queue, consumer string, ttl, wait time.Duration, n int) ([]*workqueue.Work, error)
	Renew(ctx context.Context, leaseID, taskID, action string, ttl time.Duration) error
	// Final ends a turn its claim returned whose task is final or gone,
	// whoever holds its lease now (workqueue.Claims.Final).
	Final(ctx context.Context, w *workqueue.Work) error
}

// Errors of the worker side of Pull.
var (
	// ErrLeaseLost: the worker's lease is over (expired and taken by another
	// worker, or finished); it must stop working on the task.
	ErrLeaseLost = workqueue.ErrLeaseLost
	// ErrTaskCanceled: the client canceled the task (or relay failed it at
	// a deadline: a *DeadlineError, which wraps it).
	ErrTaskCanceled = errors.New("task canceled by the client")
	// ErrTaskFinished: the task reached a final state already.
	ErrTaskFinished = errors.New("task already finished")
)

// BadEventError is an event a worker may not post; the message says why.
type BadEventError struct{ Msg string }

func (e *BadEventError) Error() string { return e.Msg }

// Pull is the worker-queue agent backend: tasks routed to a queue wait
// there until a worker claims them over the worker API; the worker's events
// go through the one commit path like any agent's.
type Pull struct {
	q      WorkQueue
	commit *Committer
	load   func(ctx context.Context, id string) (a2a.TaskView, error)
	lease  time.Duration
	log    *slog.Logger
	now    func() time.Time
}

// PullDeps are what the pull backend works with.
type PullDeps struct {
	Queue  WorkQueue
	Commit *Committer
	// Load reads a task (Service.GetTask, or Committer.Load to read it
	// whoever owns it) for heartbeats and posts; a claim reads it through
	// Commit.
	Load func(context.Context, string) (a2a.TaskView, error)
	Log  *slog.Logger
}

// PullConfig configures the pull backend.
type PullConfig struct {
	// Lease is how long a claim lasts without a heartbeat (default 30s).
	Lease time.Duration
}

// NewPull returns the pull backend, or an error naming what is missing or
// out of range.
func NewPull(d PullDeps, cfg PullConfig) (*Pull, error) {
	switch {
	case d.Queue == nil || d.Commit == nil || d.Load == nil:
		return nil, errors.New("ingest: pull: Queue, Commit and Load are required")
	case cfg.Lease < 0:
		return nil, fmt.Errorf("ingest: pull: Lease (%s) must not be negative", cfg.Lease)
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Pull{q: d.Queue, commit: d.Commit, load: d.Load, lease: cmp.Or(cfg.Lease, 30*time.Second), log: d.Log, now: time.Now}, nil
}

// Lease is how long a claim lasts without a heartbeat.
func (p *Pull) Lease() time.Duration { return p.lease }

// Queue returns the Agent that sends tasks to the named queue. It is
// Queued: a backend that wraps it (to override Cancel, say) embeds
// PullQueue, not Agent, so that the Service still records its offers.
func (p *Pull) Queue(name string) PullQueue { return PullQueue{p: p, name: name} }

// PullQueue is the Agent of one work queue (Pull.Queue).
type PullQueue struct {
	p    *Pull
	name string
}

// Validate accepts every message: the worker is the judge.
func (q PullQueue) Validate(a2a.Message) error { return nil }

// QueueOf names the queue: every turn of every task goes there.
func (q PullQueue) QueueOf(a2a.Task, a2a.Message) string { return q.name }

// Offer puts the turn o, as its commit recorded it, in the queue, with its
// number: the queue then tells its duplicates from later turns.
func (q PullQueue) Offer(ctx context.Context, _ a2a.Task, _ a2a.Message, o taskstore.Offer) error {
	return q.p.q.Offer(ctx, cmp.Or(o.Queue, q.name), o.TaskID, o.MessageID, o.Turn)
}

// Start offers the task's turn to the queue without a number (a caller
// that did not record the offer): such an offer is never dropped as a
// duplicate; a claim drops it only once the task is finished.
func (q PullQueue) Start(task a2a.Task, msg a2a.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return q.p.q.Offer(ctx, q.name, task.ID, msg.MessageID, 0)
}

// Cancel does nothing: the worker learns of the cancel on its next
// heartbeat or post, and a task canceled before anyone claimed it is
// skipped by the claim.
func (q PullQueue) Cancel(string) {}

// Claimed is a task turn handed to a worker.
type Claimed struct {
	Work      workqueue.Work
	View      a2a.TaskView
	Message   a2a.Message
	ExpiresAt time.Time
	// TraceParent is the W3C traceparent of the claim's span, in the
	// trace of the task's turn ("": tracing is off): the worker's spans
	// join the turn's trace under it.
	TraceParent string
}

// Owner is the principal the claimed task belongs to (tenant.Owner: "" is
// the one anonymous principal of relay without client authentication).
// Contexts are the owner's: two clients naming the same contextId have a
// context each, so a worker that keeps memory per context keys it by
// (Owner, contextId).
func (c *Claimed) Owner() string { return c.View.Owner }

// Claim waits up to wait for the next turn of queue for worker. It returns
// nil when none came.
func (p *Pull) Claim(ctx context.Context, queueName, worker string, wait time.Duration) (*Claimed, error) {
	cs, err := p.ClaimN(ctx, queueName, worker, wait, 1)
	if len(cs) == 0 {
		return nil, err
	}
	return cs[0], err
}

// ClaimN is Claim for up to n turns: when several are waiting it takes up
// to n at once (read and granted in a round trip each, and loaded
// concurrently), each under a lease of its own. It returns the turns
// claimed (none when none came) and the first error met; the turns it
// returns are the caller's to run even when err is not nil.
func (p *Pull) ClaimN(ctx context.Context, queueName, worker string, wait time.Duration, n int) ([]*Claimed, error) {
	deadline := p.now().Add(wait)
	for {
		ws, err := p.q.ClaimN(ctx, queueName, worker, p.lease, max(deadline.Sub(p.now()), 0), n)
		if err != nil || len(ws) == 0 {
			return nil, err
		}
		cs := make([]*Claimed, len(ws))
		errs := make([]error, len(ws))
		if len(ws) == 1 {
			cs[0], errs[0] = p.take(ctx, ws[0])
		} else {
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Go(func() { cs[i], errs[i] = p.take(ctx, w) })
			}
			wg.Wait()
		}
		claimed := slices.DeleteFunc(cs, func(c *Claimed) bool { return c == nil })
		if err := errors.Join(errs...); len(claimed) > 0 || err != nil {
			return claimed, err
		}
		if !p.now().Before(deadline) {
			return nil, nil
		}
	}
}

// take loads a granted turn and starts its run time: it returns the turn,
// or nil when it was dropped (the task is gone, finished, or past its wait
// limit). A turn it cannot take for another reason is handed back.
func (p *Pull) take(ctx context.Context, w *workqueue.Work) (*Claimed, error) {
	// Read through the Committer, not load: the claim needs to know
	// whether the task has a turn record to move (ClaimTurn).
	view, recorded, tp, err := p.commit.loadTurn(ctx, w.TaskID)
	sctx, span := startTurn(p.commit.tracer, ctx, tp, "agent claim", w.TaskID)
	defer span.End()
	switch {
	case a2a.IsKind(err, a2a.KindTaskNotFound):
	case err != nil:
		_ = p.q.Renew(context.WithoutCancel(ctx), w.LeaseID, w.TaskID, workqueue.LeaseRelease, p.lease)
		return nil, err
	case !stale(view.Task):
		var derr *DeadlineError
		err := p.commit.ClaimTurn(ctx, view.Task, recorded)
		if err == nil {
			return &Claimed{Work: *w, View: view, Message: prompt(view.Task, w.MessageID), ExpiresAt: p.now().Add(p.lease),
				TraceParent: telemetry.TraceParent(sctx)}, nil
		}
		if !errors.As(err, &derr) {
			_ = p.q.Renew(context.WithoutCancel(ctx), w.LeaseID, w.TaskID, workqueue.LeaseRelease, p.lease)
			return nil, err
		}
		// It waited past its limit, and failed: drop the turn.
	}
	// Gone, finished (canceled before anyone claimed it), or past its
	// wait limit (failed now): drop the turn, and with the task final,
	// leave no done marker (a later offer is dropped here again).
	if err := p.q.Final(ctx, w); err != nil && !errors.Is(err, ErrLeaseLost) {
		return nil, err
	}
	return nil, nil
}

// stale reports whether a turn is over already, so that a claim drops it
// rather than run it: the task is final. Duplicate offers of a turn (a
// re-offer, Reofferer) are the work queue's to drop, by the turn's number
// (workqueue.Claims.Offer), not the claimer's: a turn queued while another
// ran (a client's message to a working task) is a turn of its own, and it
// runs after the current one, even when that one left the task waiting for
// its client (interrupted): the client's message gets its turn.
func stale(t a2a.Task) bool { return t.Status.State.Terminal() }

// prompt finds the message a turn was offered for (the latest of that id:
// a client may reuse a message id, and a later turn supersedes an earlier
// one); failing that, the latest user message of the history.
func prompt(t a2a.Task, messageID string) a2a.Message {
	var latest a2a.Message
	found := false
	for i := len(t.History) - 1; i >= 0; i-- {
		m := t.History[i]
		if m.MessageID == messageID && messageID != "" {
			return m
		}
		if m.Role == a2a.RoleUser && !found {
			latest, found = m, true
		}
	}
	return latest
}

// Beat is what a heartbeat tells a worker.
type Beat struct {
	State a2a.TaskState
	// Canceled: stop working on the task, and the lease is over; the
	// client canceled it, or relay failed it at a deadline (Reason).
	Canceled  bool
	ExpiresAt time.Time
	// Reason, when relay failed the task at a deadline, says which.
	Reason string
}

// Heartbeat renews a worker's lease on taskID, or tells it the client
// canceled the task, or relay failed it at a deadline (and ends the
// lease).
func (p *Pull) Heartbeat(ctx context.Context, taskID, leaseID string) (Beat, error) {
	view, err := p.load(ctx, taskID)
	if err != nil {
		return Beat{}, err
	}
	st := view.Task.Status.State
	if st.Terminal() {
		// The same answer whether or not the lease is still there: a
		// heartbeat sent again after its answer was lost (this one ended
		// the lease) still learns why it must stop.
		var beat Beat
		if st == a2a.StateCanceled {
			beat = Beat{State: st, Canceled: true}
		} else if derr := failedAtDeadline(view.Task); derr != nil {
			beat = Beat{State: st, Canceled: true, Reason: derr.Reason}
		}
		err := p.q.Renew(ctx, leaseID, taskID, workqueue.LeaseFinal, 0)
		switch {
		case beat.Canceled && (err == nil || errors.Is(err, ErrLeaseLost)):
			return beat, nil
		case err != nil:
			return Beat{}, err
		}
		return Beat{State: st}, ErrTaskFinished
	}
	if err := p.q.Renew(ctx, leaseID, taskID, workqueue.LeaseRenew, p.lease); err != nil {
		return Beat{}, err
	}
	return Beat{State: st, ExpiresAt: p.now().Add(p.lease)}, nil
}

// Posted is what a worker's event post did.
type Posted struct {
	State a2a.TaskState
	// Released: the task reached a final or interrupted state and the
	// lease is over.
	Released  bool
	ExpiresAt time.Time
	// Replayed: the post came again under its idempotency key; this is the
	// first post's answer, and nothing was committed.
	Replayed bool
}

// Post commits a worker's events for taskID, atomically and in order,
// under its lease. Only status and artifact updates may be posted.
func (p *Pull) Post(ctx context.Context, taskID, leaseID string, events []a2a.Event) (Posted, error) {
	return p.PostOnce(ctx, taskID, leaseID, "", events)
}

// PostOnce is Post under an idempotency key. key, when not empty, is the
// post's idempotency key: a post sent again
// with the same key, lease and events (its answer was lost) commits
// nothing and gets the first answer back, even when the first ended the
// lease or the task; with other events or another lease it is refused with
// ErrKeyReused. The key is recorded with the commit, atomically
// (Committer.AppendOnce); a post that committed nothing records nothing.
func (p *Pull) PostOnce(ctx context.Context, taskID, leaseID, key string, events []a2a.Event) (Posted, error) {
	if len(events) == 0 {
		return Posted{}, &BadEventError{Msg: "events: at least one event is required"}
	}
	events = slices.Clone(events) // the task id is filled in below: the caller's slice stays as it was
	for i := range events {
		ev := &events[i]
		if ev.Kind != a2a.EventStatus && ev.Kind != a2a.EventArtifact {
			return Posted{}, &BadEventError{Msg: fmt.Sprintf("events[%d]: a worker posts status and artifact updates, not %s events", i, ev.Kind)}
		}
		if ev.TaskID != "" && ev.TaskID != taskID {
			return Posted{}, &BadEventError{Msg: fmt.Sprintf("events[%d]: taskId %q is not the claimed task %q", i, ev.TaskID, taskID)}
		}
		ev.TaskID = taskID
	}
	if key == "" {
		return p.post(ctx, taskID, leaseID, events, nil)
	}
	once, err := p.once(taskID, leaseID, key, events)
	if err != nil {
		return Posted{}, err
	}
	res, err := p.post(ctx, taskID, leaseID, events, &once)
	if err != nil && !errors.Is(err, ErrKeyReused) {
		// The refusal (lease over, task finished) may be the first post's
		// own doing: its retry gets the first answer.
		answer, ok, rerr := p.commit.Replay(ctx, taskID, once)
		switch {
		case errors.Is(rerr, ErrKeyReused):
			return Posted{}, rerr
		case ok:
			return postedOf(answer, true)
		}
	}
	return res, err
}

// post renews the lease and commits events, under once when not nil.
func (p *Pull) post(ctx context.Context, taskID, leaseID string, events []a2a.Event, once *Once) (Posted, error) {
	if err := p.q.Renew(ctx, leaseID, taskID, workqueue.LeaseRenew, p.lease); err != nil {
		return Posted{}, err
	}
	var a Appended
	var err error
	if once == nil {
		a.View, err = p.commit.Append(ctx, taskID, events...)
	} else if a, err = p.commit.AppendOnce(ctx, taskID, *once, events...); err == nil && a.Replayed {
		return postedOf(a.Answer, true)
	}
	view := a.View
	var te *a2a.TransitionError
	if errors.As(err, &te) && te.From.Terminal() {
		_ = p.q.Renew(ctx, leaseID, taskID, workqueue.LeaseFinal, 0)
		if te.From == a2a.StateCanceled {
			return Posted{State: te.From}, ErrTaskCanceled
		}
		if view, lerr := p.load(ctx, taskID); lerr == nil {
			if derr := failedAtDeadline(view.Task); derr != nil {
				return Posted{State: te.From}, derr
			}
		}
		return Posted{State: te.From}, ErrTaskFinished
	}
	if err != nil {
		return Posted{}, err
	}
	st := view.Task.Status.State
	if st.Terminal() || st.Interrupted() {
		end := workqueue.LeaseDone // the task waits for its client: later offers of the turn are duplicates
		if st.Terminal() {
			end = workqueue.LeaseFinal
		}
		if err := p.q.Renew(ctx, leaseID, taskID, end, 0); err != nil {
			p.log.WarnContext(ctx, "ending a worker lease", "task_id", taskID, "err", err)
		}
		if once != nil {
			return postedOf(a.Answer, false)
		}
		return Posted{State: st, Released: true}, nil
	}
	if once != nil {
		return postedOf(a.Answer, false) // the answer its replays get
	}
	return Posted{State: st, ExpiresAt: p.now().Add(p.lease)}, nil
}

// postAnswer is the answer of a post under an idempotency key, recorded
// with its commit for the post's replays (format version 1).
type postAnswer struct {
	V        int           `json:"v"`
	State    a2a.TaskState `json:"s"`
	Released bool          `json:"r,omitempty"`
	Expires  int64         `json:"x,omitempty"` // the lease's expiry, unix ms
}

// once is the idempotency of a post under key: the request is the task,
// the lease and the events as posted; the answer is the task's state after
// the commit and the lease's expiry (reckoned before the lease's renewal,
// so never later than the renewed lease's).
func (p *Pull) once(taskID, leaseID, key string, events []a2a.Event) (Once, error) {
	evb, err := json.Marshal(events)
	if err != nil {
		return Once{}, fmt.Errorf("ingest: encode posted events: %w", err)
	}
	expires := p.now().Add(p.lease)
	return Once{Key: key, Hash: RequestHash([]byte(taskID), []byte(leaseID), evb), Answer: func(v a2a.TaskView) ([]byte, error) {
		st := v.Task.Status.State
		ans := postAnswer{V: 1, State: st, Released: st.Terminal() || st.Interrupted()}
		if !ans.Released {
			ans.Expires = expires.UnixMilli()
		}
		return json.Marshal(ans)
	}}, nil
}

// postedOf decodes a recorded post answer.
func postedOf(answer []byte, replayed bool) (Posted, error) {
	var ans postAnswer
	if err := json.Unmarshal(answer, &ans); err != nil || ans.V != 1 {
		return Posted{}, fmt.Errorf("ingest: recorded post answer %q: not version 1 (%v)", answer, err)
	}
	res := Posted{State: ans.State, Released: ans.Released, Replayed: replayed}
	if !ans.Released {
		res.ExpiresAt = time.UnixMilli(ans.Expires)
	}
	return res, nil
}

// Release hands a task back unfinished: the next claim gets it.
func (p *Pull) Release(ctx context.Context, taskID, leaseID string) error {
	return p.q.Renew(ctx, leaseID, taskID, workqueue.LeaseRelease, p.lease)
}
