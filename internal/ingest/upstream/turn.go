package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/ingest"
)

// Why a turn stops, as the cause of its context.
var (
	errClientCanceled = errors.New("upstream: the client canceled the task")
	errLeaseOver      = errors.New("upstream: the lease on the task is over")
	errTurnOver       = errors.New("upstream: the turn is over")
)

// upstreamError is a failure of the agent that retries did not fix: the
// task fails with it.
type upstreamError struct {
	what string
	err  error
}

func (e *upstreamError) Error() string { return e.what + ": " + e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// turn is one claimed task turn. Its fields belong to the goroutine that
// runs it; other goroutines only call stop.
type turn struct {
	b       *Bridge
	ctx     context.Context
	stop    context.CancelCauseFunc
	log     *slog.Logger
	taskID  string
	ctxID   string // our task's context id
	leaseID string
	msg     a2a.Message // the message that prompted the turn
	rc      a2a.RemoteCard
	m       a2a.Methods

	life   string // our task's first message id (Link.Life)
	link   Link
	linked bool   // link is what Links holds
	up     string // the agent's task id, once the agent named it
	fwd    forwarded
	posts  int // successful posts, to tell a stream that brought news
	// done: our task reached a final or interrupted state; the turn is over.
	done bool
}

func newTurn(b *Bridge, ctx context.Context, stop context.CancelCauseFunc, c *ingest.Claimed) *turn {
	task := c.View.Task
	life := ""
	if len(task.History) > 0 {
		life = task.History[0].MessageID
	}
	return &turn{b: b, ctx: ctx, stop: stop, log: b.log.With("task_id", task.ID, "attempt", c.Work.Attempt),
		taskID: task.ID, ctxID: task.ContextID, leaseID: c.Work.LeaseID, msg: c.Message, fwd: newForwarded(task), life: life}
}

// upstreamID is the agent's task id as far as the turn knows it.
func (t *turn) upstreamID() string {
	if t.up != "" {
		return t.up
	}
	return t.link.UpstreamTaskID
}

// stopped returns why the turn stopped, or nil while it runs.
func (t *turn) stopped() error {
	if t.ctx.Err() == nil {
		return nil
	}
	return context.Cause(t.ctx)
}

// run decides what the turn is (a new task, a follow-up message, or a
// re-attach to the agent's task) and follows the agent until our task
// ends or waits for the client.
func (t *turn) run() error {
	err := t.retry("fetching its agent card", func() (err error) {
		t.rc, err = t.b.client.card(t.ctx)
		return err
	})
	if err != nil {
		return err
	}
	t.m = a2a.ClientMethods(t.rc.Dialect)
	// A Redis failure is not the agent's: the turn ends, and is claimed
	// again when its lease runs out.
	if t.link, t.linked, err = t.b.links.Get(t.ctx, t.taskID); err != nil {
		return err
	}
	if t.linked && (t.link.Queue != t.b.cfg.Queue || t.link.Life != t.life) {
		t.log.InfoContext(t.ctx, "ignoring the upstream link of an earlier task with this id, or of another upstream agent")
		t.link, t.linked = Link{}, false
	}
	switch {
	case !t.linked:
		return t.send(t.outgoing("", ""))
	case t.msg.MessageID != t.link.LastMessageID:
		t.log.InfoContext(t.ctx, "sending a follow-up message upstream", "upstream_task_id", t.link.UpstreamTaskID)
		return t.send(t.outgoing(t.link.UpstreamTaskID, t.link.ContextID))
	}
	t.up = t.link.UpstreamTaskID
	t.log.InfoContext(t.ctx, "re-attaching to the upstream task", "upstream_task_id", t.up)
	if t.rc.Streaming {
		return t.recover(errors.New("re-attaching"))
	}
	return t.poll()
}

// outgoing is the message to send upstream: ours without our ids (and our
// task references, which mean nothing there), in the agent's task. Our
// contextId is the client's, one of its owner's contexts: sent upstream,
// two clients naming the same id would share one agent context. A new
// task starts an agent context of its own; a follow-up goes to the agent
// context of its own task's link.
func (t *turn) outgoing(upTaskID, upContextID string) a2a.Message {
	m := t.msg
	m.TaskID, m.ContextID, m.ReferenceTaskIDs = upTaskID, upContextID, nil
	m.Role = a2a.RoleUser
	return m
}

// send sends msg and follows the task it starts or continues.
func (t *turn) send(msg a2a.Message) error {
	params, err := a2a.EncodeSendParams(t.rc.Dialect, msg, t.rc.Streaming)
	if err != nil {
		return &upstreamError{what: "encoding the message", err: err}
	}
	if t.rc.Streaming {
		return t.streamSend(params)
	}
	var res json.RawMessage
	err = t.retry("sending the message", func() (err error) {
		res, err = t.b.client.call(t.ctx, t.rc, t.m.Send, params)
		return err
	})
	if err != nil {
		return err
	}
	task, reply, err := a2a.DecodeSendResult(t.rc.Dialect, res)
	if err != nil {
		return &upstreamError{what: "sending the message", err: err}
	}
	if reply != nil {
		return t.onMessage(*reply)
	}
	if err := t.onTask(task); err != nil || t.done {
		return err
	}
	return t.poll()
}

// streamSend sends a message on a stream and follows the task it starts
// or continues. A JSON-RPC error before any event is retried like a
// failed call; once the agent named its task, a dropped stream re-attaches.
func (t *turn) streamSend(params json.RawMessage) error {
	var ended error
	err := t.retry("sending the message", func() error {
		s, err := t.b.client.open(t.ctx, t.rc, t.m.Stream, params)
		if err != nil {
			return err
		}
		n, err := t.consume(s)
		var re *rpcError
		if n == 0 && errors.As(err, &re) {
			return err
		}
		ended = err
		return nil
	})
	var pe *postError
	switch {
	case err != nil:
		return err
	case t.done || t.stopped() != nil:
		return t.stopped()
	case errors.As(ended, &pe):
		return ended
	case t.up == "":
		// Without the agent's task id there is nothing to re-attach to,
		// and sending again could start the work twice.
		if errors.Is(ended, io.ErrUnexpectedEOF) {
			ended = errors.New("the stream ended before the agent named its task")
		}
		return &upstreamError{what: "streaming the message", err: ended}
	}
	return t.recover(ended)
}

// consume forwards the events of s until our task ends or waits, the
// stream ends, or the turn stops. It returns how many events arrived and
// why the stream ended (nil when the task did).
func (t *turn) consume(s *stream) (int, error) {
	defer s.close()
	n := 0
	for {
		ev, err := s.next()
		if err != nil {
			if stop := t.stopped(); stop != nil {
				return n, stop
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		n++
		if err := t.onEvent(ev); err != nil || t.done {
			return n, err
		}
	}
}

// recover re-attaches to the agent's task after a stream ended early:
// resubscribe, a few times in a row (the count starts again whenever a
// stream changed our task), and failing that, poll.
func (t *turn) recover(cause error) error {
	bo := t.b.newBackoff()
	params := a2a.EncodeTaskIDParams(t.rc.Dialect, t.up)
	for tries := 0; tries < t.b.cfg.Resubscribes; tries++ {
		t.log.InfoContext(t.ctx, "resubscribing to the upstream task", "upstream_task_id", t.up, "why", cause.Error(), "try", tries+1)
		s, err := t.b.client.open(t.ctx, t.rc, t.m.Subscribe, params)
		if err == nil {
			before := t.posts
			_, err = t.consume(s)
			var pe *postError
			if t.done || t.stopped() != nil {
				return t.stopped()
			}
			if errors.As(err, &pe) {
				return err
			}
			if t.posts > before { // the stream brought news: not a failed try
				tries = -1
				bo.Reset()
			}
		}
		if stop := t.stopped(); stop != nil {
			return stop
		}
		cause = err
		var re *rpcError
		if errors.As(err, &re) && permanent(err) {
			break // resubscribe is not supported, or the task is over: poll
		}
		if !sleep(t.ctx, bo.NextBackOff()) {
			return t.stopped()
		}
	}
	t.log.InfoContext(t.ctx, "polling the upstream task", "upstream_task_id", t.up, "why", cause.Error())
	return t.poll()
}

// poll reads the agent's task every PollInterval until our task ends or
// waits for the client. Failing reads are retried for RetryFor.
func (t *turn) poll() error {
	params, _ := json.Marshal(struct {
		ID            string `json:"id"`
		HistoryLength int    `json:"historyLength"`
	}{t.up, 0}) // the history is not forwarded
	for {
		var task a2a.Task
		err := t.retry("polling its task", func() error {
			res, err := t.b.client.call(t.ctx, t.rc, t.m.Get, params)
			if err == nil {
				task, err = a2a.DecodeTask(t.rc.Dialect, res)
			}
			return err
		})
		if err != nil {
			return err
		}
		task.ID = t.up // we asked for it
		if err := t.onTask(task); err != nil || t.done {
			return err
		}
		if !sleep(t.ctx, t.b.cfg.PollInterval) {
			return t.stopped()
		}
	}
}

// retry calls fn until it succeeds, fails permanently, RetryFor passes or
// the turn stops. A failure is returned as an *upstreamError naming what.
func (t *turn) retry(what string, fn func() error) error {
	start := t.b.cfg.Now()
	bo := t.b.newBackoff()
	for try := 1; ; try++ {
		err := fn()
		if err == nil {
			return nil
		}
		if stop := t.stopped(); stop != nil {
			return stop
		}
		left := t.b.cfg.RetryFor - t.b.cfg.Now().Sub(start)
		if permanent(err) || left <= 0 {
			return &upstreamError{what: what, err: err}
		}
		level := slog.LevelDebug
		if try == 1 {
			level = slog.LevelWarn
		}
		t.log.Log(t.ctx, level, "upstream call failed; retrying", "what", what, "try", try, "err", err)
		if !sleep(t.ctx, min(bo.NextBackOff(), left)) {
			return t.stopped()
		}
	}
}

// heartbeat keeps the lease alive every third of it, and stops the turn
// when the client canceled the task or the lease is over.
func (t *turn) heartbeat() {
	tick := time.NewTicker(max(t.b.pull.Lease()/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		beat, err := t.b.pull.Heartbeat(t.ctx, t.taskID, t.leaseID)
		switch {
		case err == nil && beat.Canceled:
			t.stop(errClientCanceled)
			return
		case errors.Is(err, ingest.ErrLeaseLost), errors.Is(err, ingest.ErrTaskFinished):
			t.stop(errLeaseOver)
			return
		case err != nil && t.ctx.Err() == nil:
			t.log.WarnContext(t.ctx, "heartbeat of an upstream task failed", "err", err)
		}
	}
}

// fail ends our task as failed with text as its status message (cause
// is what went wrong), and asks the agent to stop its task, if any. The
// post keeps trying through a Redis outage for as long as the turn runs.
func (t *turn) fail(text string, cause error) {
	t.log.ErrorContext(t.ctx, "upstream task failed", "err", cause)
	err := t.postWith(t.b.cfg.Outage.Persist, t.statusEvents(a2a.TaskStatus{State: a2a.StateFailed, Message: t.agentMessage(text)}, nil))
	if err != nil {
		t.log.ErrorContext(t.ctx, "failing an upstream task", "err", err)
	}
	if id := t.upstreamID(); id != "" && t.stopped() == nil {
		ctx, cancel := context.WithTimeout(t.ctx, t.b.cfg.RequestTimeout)
		defer cancel()
		t.b.cancelUpstream(ctx, t.taskID, id)
	}
}
