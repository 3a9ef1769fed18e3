package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/workqueue"
)

// Why a demo turn stops, as the cause of its context.
var (
	errDemoCanceled  = errors.New("demo: the client canceled the task")
	errDemoLeaseOver = errors.New("demo: the lease on the task is over")
	errDemoTurnOver  = errors.New("demo: the turn is over")
	// errDemoTaskOver: the task ended elsewhere (canceled) under a write.
	errDemoTaskOver = errors.New("demo: the task is over")
)

// demoTurn is one claimed task turn of the demo agent. Its fields belong
// to the goroutine that runs it; the heartbeat shares renewed under mu,
// and other goroutines only call stop.
type demoTurn struct {
	d       *Demo
	ctx     context.Context
	stop    context.CancelCauseFunc
	log     *slog.Logger
	taskID  string
	leaseID string
	work    *workqueue.Work // the claim's, to end the turn by (Final)
	plan    demoPlan
	last    time.Time // when the last event was emitted (pacing)

	mu sync.Mutex
	// renewed is when the last renewal that succeeded was sent: the lease
	// is surely ours until renewed + lease.
	renewed time.Time
	// final: the turn ended with the task final (its lease leaves no done
	// marker: LeaseFinal); else it may wait for its client.
	final bool
}

// handle runs one claimed turn to its end, keeps its lease alive
// meanwhile, and ends the lease as the turn went.
func (d *Demo) handle(runCtx context.Context, c *Claimed) {
	ctx, stop := context.WithCancelCause(runCtx)
	ctx, span := startTurn(d.pull.commit.tracer, ctx, c.TraceParent, "agent turn", c.View.Task.ID)
	defer span.End()
	t := &demoTurn{d: d, ctx: ctx, stop: stop, taskID: c.View.Task.ID, leaseID: c.Work.LeaseID, work: &c.Work,
		log:     d.log.With("task_id", c.View.Task.ID, "attempt", c.Work.Attempt),
		renewed: c.ExpiresAt.Add(-d.pull.lease)}
	d.mu.Lock()
	d.running[t.taskID] = t
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.running[t.taskID] == t {
			delete(d.running, t.taskID)
		}
		d.mu.Unlock()
	}()

	var beats sync.WaitGroup
	beats.Go(t.heartbeat)
	err := t.run(c.View, c.Message)
	stop(errDemoTurnOver)
	beats.Wait()

	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errDemoLeaseOver):
		t.log.InfoContext(ctx, "demo turn stopped: the lease is over")
	case err == nil, errors.Is(cause, errDemoCanceled):
		// The task ended, waits for the client, or was canceled: so does the lease.
		action := workqueue.LeaseDone
		if t.final || errors.Is(cause, errDemoCanceled) {
			action = workqueue.LeaseFinal
		}
		if err := t.endLease(runCtx, action); err != nil && !errors.Is(err, ErrLeaseLost) {
			t.log.WarnContext(ctx, "ending a demo lease", "err", err)
		}
	case runCtx.Err() != nil:
		if err := t.endLease(runCtx, workqueue.LeaseRelease); err != nil && !errors.Is(err, ErrLeaseLost) {
			t.log.WarnContext(ctx, "releasing a demo task at shutdown", "err", err)
		}
	default:
		t.log.WarnContext(ctx, "demo turn ended early: it is claimed again when its lease runs out", "err", err)
	}
}

// endLease ends the turn's lease (LeaseDone; LeaseFinal, by the claim's
// Work: the task is final) or hands it back (LeaseRelease), through an
// outage while the runner runs, and in one try when it is shutting down.
func (t *demoTurn) endLease(runCtx context.Context, action string) error {
	lease := t.d.pull.lease
	renew := func(ctx context.Context) error {
		if action == workqueue.LeaseFinal {
			return t.d.pull.q.Final(ctx, t.work)
		}
		return t.d.pull.q.Renew(ctx, t.leaseID, t.taskID, action, lease)
	}
	if runCtx.Err() == nil {
		return t.d.cfg.Outage.Retry(runCtx, "ending a demo lease", renew)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), 5*time.Second)
	defer cancel()
	return renew(ctx)
}

// run emits the turn's events from where the task stands to the turn's
// end. It returns nil when the turn is over.
func (t *demoTurn) run(view a2a.TaskView, prompt a2a.Message) error {
	plan, err := t.d.plan(view.Task, prompt)
	if err != nil { // the options fit no more (the limits changed since)
		t.plan = demoPlan{taskID: view.Task.ID, contextID: view.Task.ContextID}
		return t.fail("The demo agent cannot run this task: " + err.Error())
	}
	t.plan = plan
	gap := time.Second / time.Duration(t.d.cfg.Limits.MaxEventsPerSecond)
	for {
		ev, ok := plan.next(view.Task)
		if !ok {
			t.final = view.Task.Status.State.Terminal()
			return nil
		}
		if ev.delay {
			if err := sleep(t.ctx, plan.delay); err != nil {
				return err
			}
		}
		if err := sleep(t.ctx, t.last.Add(gap).Sub(t.d.cfg.Now())); err != nil { // paced: MaxEventsPerSecond
			return err
		}
		t.last = t.d.cfg.Now()
		view, err = t.write(ev)
		var oe *OutageError
		switch {
		case err == nil:
		case errors.Is(err, errDemoTaskOver):
			t.final = true
			return nil
		case errors.As(err, &oe):
			return t.fail("The demo agent stopped: " + oe.Error() + ".")
		case t.ctx.Err() != nil, errors.Is(err, ErrLeaseLost):
			return err
		default:
			return t.fail("The demo agent could not record its progress: " + err.Error())
		}
	}
}

// write commits ev, retrying through a Redis outage. A try after a failed
// one reads the task again first: the failed commit may have landed (its
// answer lost), and then the turn goes on from there instead of emitting
// ev twice.
func (t *demoTurn) write(ev demoEvent) (a2a.TaskView, error) {
	var view a2a.TaskView
	tried := false
	err := t.d.cfg.Outage.Retry(t.ctx, "committing a demo event", func(ctx context.Context) error {
		if err := t.fresh(ctx); err != nil {
			return err
		}
		if tried {
			cur, err := t.d.pull.commit.Load(ctx, t.taskID)
			if err != nil {
				return err
			}
			if next, ok := t.plan.next(cur.Task); !ok || next.seq != ev.seq {
				view = cur
				return nil
			}
		}
		tried = true
		e := ev.ev
		e.Metadata = json.RawMessage(`{"emitNs":"` + strconv.FormatInt(t.d.cfg.Now().UnixNano(), 10) + `","seq":` + strconv.Itoa(ev.seq) + `}`)
		v, err := t.d.pull.commit.Append(ctx, t.taskID, e)
		var te *a2a.TransitionError
		if errors.As(err, &te) && te.From.Terminal() {
			return errDemoTaskOver // canceled from elsewhere: stop quietly
		}
		view = v
		return err
	})
	return view, err
}

// fail ends the task as failed with text as its status message. The write
// keeps trying through an outage for as long as the turn runs.
func (t *demoTurn) fail(text string) error {
	t.log.ErrorContext(t.ctx, "demo task failed", "why", text)
	err := t.d.cfg.Outage.Persist(t.ctx, "failing a demo task", func(ctx context.Context) error {
		if err := t.fresh(ctx); err != nil {
			return err
		}
		_, err := t.d.pull.commit.Append(ctx, t.taskID, t.plan.status(a2a.StateFailed, text, nil).ev)
		var te *a2a.TransitionError
		if errors.As(err, &te) && te.From.Terminal() {
			return nil
		}
		return err
	})
	t.final = err == nil
	return err
}

// fresh makes sure the lease is still the turn's before a write: once half
// the lease passed since the last renewal that succeeded (a heartbeat
// failed: Redis was unavailable), it renews the lease first. A lost lease
// stops the turn: another instance may be working on the task.
func (t *demoTurn) fresh(ctx context.Context) error {
	lease := t.d.pull.lease
	t.mu.Lock()
	age := t.d.cfg.Now().Sub(t.renewed)
	t.mu.Unlock()
	if age < lease/2 {
		return nil
	}
	at := t.d.cfg.Now()
	err := t.d.pull.q.Renew(ctx, t.leaseID, t.taskID, workqueue.LeaseRenew, lease)
	switch {
	case err == nil:
		t.renewedAt(at)
	case errors.Is(err, ErrLeaseLost):
		t.stop(errDemoLeaseOver)
	}
	return err
}

func (t *demoTurn) renewedAt(at time.Time) {
	t.mu.Lock()
	if at.After(t.renewed) {
		t.renewed = at
	}
	t.mu.Unlock()
}

// heartbeat keeps the lease alive every third of it, and stops the turn
// when the client canceled the task (on any instance) or the lease is over.
func (t *demoTurn) heartbeat() {
	tick := time.NewTicker(max(t.d.pull.lease/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		at := t.d.cfg.Now()
		beat, err := t.d.pull.Heartbeat(t.ctx, t.taskID, t.leaseID)
		switch {
		case err == nil && beat.Canceled:
			t.stop(errDemoCanceled)
			return
		case err == nil:
			t.renewedAt(at)
		case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrTaskFinished):
			t.stop(errDemoLeaseOver)
			return
		case t.ctx.Err() == nil:
			t.log.WarnContext(t.ctx, "heartbeat of a demo task failed", "err", err)
		}
	}
}

// demoPlan is what a turn's message asks of the demo agent.
type demoPlan struct {
	taskID, contextID string
	prompt            string // the message id of the turn's message
	text              string
	steps, chunks     int
	delay             time.Duration
	outcome           a2a.TaskState
	// first: the turn's message created the task (which was submitted).
	first bool
	// artifactID is the id of the turn's artifact, the same on every
	// instance, so that a resumed turn finds its chunks.
	artifactID string
}

// demoEvent is one event of a turn.
type demoEvent struct {
	ev    a2a.Event
	seq   int  // its number in the turn, from 1 (the metadata's "seq")
	delay bool // a working step: the step delay comes first
}

// demoStep is the metadata of a working step's status message: which turn
// it belongs to and how far the turn got.
type demoStep struct {
	Demo struct {
		Turn string `json:"turn"`
		Step int    `json:"step"`
	} `json:"demo"`
}

func (d *Demo) plan(t a2a.Task, prompt a2a.Message) (demoPlan, error) {
	steps, delay, outcome, chunks, err := d.options(prompt)
	if err != nil {
		return demoPlan{}, err
	}
	return demoPlan{taskID: t.ID, contextID: t.ContextID, prompt: prompt.MessageID, text: textOf(prompt),
		steps: steps, chunks: chunks, delay: delay, outcome: outcome,
		first:      len(t.History) > 0 && t.History[0].MessageID == prompt.MessageID,
		artifactID: uuid.NewSHA1(uuid.NameSpaceURL, []byte("relay:demo:"+t.ID+":"+prompt.MessageID)).String()}, nil
}

// next returns the turn's next event for the task as it stands, or false
// when the turn is over. How far the turn got is read from the task: the
// step its status message names (for this turn), the chunks of the turn's
// artifact.
func (p demoPlan) next(t a2a.Task) (demoEvent, bool) {
	st := t.Status.State
	switch {
	case st.Terminal():
		return demoEvent{}, false
	case st.Interrupted():
		if turn := turnOf(t.Status); turn == "" || turn == p.prompt {
			return demoEvent{}, false // this turn's own end (or one the demo did not mark)
		}
		// A turn queued while the task worked (the client wrote meanwhile),
		// whose earlier turn left the task waiting for input: this message
		// is the client's next word, so the turn takes the task up again.
		var md demoStep
		md.Demo.Turn = p.prompt
		return p.status(a2a.StateWorking, "working on the message sent meanwhile", &md).at(1), true
	case p.outcome == a2a.StateRejected:
		return p.status(a2a.StateRejected, "The demo agent rejected this task, as asked.", nil).at(1), true
	}
	seq := 0
	if p.steps == 0 && p.first && p.outcome != a2a.StateFailed {
		// The state machine goes through working on the way to any other end.
		if st == a2a.StateSubmitted {
			return p.status(a2a.StateWorking, "", nil).at(1), true
		}
		seq = 1
	}
	if done := p.stepOf(t.Status); done < p.steps {
		var md demoStep
		md.Demo.Turn, md.Demo.Step = p.prompt, done+1
		ev := p.status(a2a.StateWorking, "working: step "+strconv.Itoa(done+1)+" of "+strconv.Itoa(p.steps), &md).at(seq + done + 1)
		ev.delay = true
		return ev, true
	}
	seq += p.steps
	switch p.outcome {
	case a2a.StateFailed:
		return p.status(a2a.StateFailed, "The demo agent failed this task, as asked.", nil).at(seq + 1), true
	case a2a.StateInputRequired:
		var md demoStep // names the turn that asked, so that a turn queued meanwhile knows it is not its own end
		md.Demo.Turn, md.Demo.Step = p.prompt, p.steps
		return p.status(a2a.StateInputRequired, "The demo agent needs more input: send another message to this task.", &md).at(seq + 1), true
	}
	if i := p.chunksOf(t); i < p.chunks {
		chunk := splitChunks(p.text, p.chunks)[i]
		return demoEvent{seq: seq + i + 1, ev: a2a.Event{Kind: a2a.EventArtifact, TaskID: p.taskID, ContextID: p.contextID,
			Append: i > 0, LastChunk: i == p.chunks-1,
			Artifact: &a2a.Artifact{ArtifactID: p.artifactID, Name: "echo", Parts: []a2a.Part{{Kind: a2a.PartText, Text: chunk}}}}}, true
	}
	return p.status(a2a.StateCompleted, "", nil).at(seq + p.chunks + 1), true
}

// stepOf returns the working step status st names for this turn, or 0.
func (p demoPlan) stepOf(st a2a.TaskStatus) int {
	if md := stepMeta(st); st.State == a2a.StateWorking && md.Demo.Turn == p.prompt {
		return md.Demo.Step
	}
	return 0
}

// turnOf returns the demo turn a status message names ("" for none).
func turnOf(st a2a.TaskStatus) string { return stepMeta(st).Demo.Turn }

// stepMeta reads the demo's metadata of a status message (zero for none).
func stepMeta(st a2a.TaskStatus) demoStep {
	var md demoStep
	if st.Message != nil && len(st.Message.Metadata) > 0 {
		_ = json.Unmarshal(st.Message.Metadata, &md) // not the demo's: zero
	}
	return md
}

// chunksOf returns how many chunks of the turn's artifact the task holds.
func (p demoPlan) chunksOf(t a2a.Task) int {
	for _, a := range t.Artifacts {
		if a.ArtifactID == p.artifactID {
			return len(a.Parts)
		}
	}
	return 0
}

// status is a status event; text, when set, is its message, with md as
// the message's metadata.
func (p demoPlan) status(s a2a.TaskState, text string, md *demoStep) demoEvent {
	st := &a2a.TaskStatus{State: s}
	if text != "" {
		st.Message = agentMessage(a2a.Task{ID: p.taskID, ContextID: p.contextID}, text)
		if md != nil {
			st.Message.Metadata, _ = json.Marshal(md)
		}
	}
	return demoEvent{ev: a2a.Event{Kind: a2a.EventStatus, TaskID: p.taskID, ContextID: p.contextID, Status: st}}
}

func (e demoEvent) at(seq int) demoEvent {
	e.seq = seq
	return e
}
