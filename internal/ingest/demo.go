package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
)

// DemoOptions is the optional "demo" object of a message's metadata.
type DemoOptions struct {
	Steps          *int   `json:"steps"`
	DelayMs        *int   `json:"delayMs"`
	Outcome        string `json:"outcome"`
	ArtifactChunks *int   `json:"artifactChunks"`
}

// Fixed bound of the demo options (the others are DemoLimits).
const maxDemoDelay = 60_000

// DemoLimits bound what the demo agent does for one task. Zero values take
// the documented defaults.
type DemoLimits struct {
	// MaxSteps bounds metadata.demo.steps and metadata.demo.artifactChunks
	// (default 100); a message asking for more is refused.
	MaxSteps int
	// MaxEventsPerSecond paces each task's events (default 50): a shorter
	// delayMs, 0 included, is accepted and stretched to 1s/MaxEventsPerSecond.
	MaxEventsPerSecond int
}

func (l DemoLimits) withDefaults() DemoLimits {
	l.MaxSteps = cmp.Or(l.MaxSteps, 100)
	l.MaxEventsPerSecond = cmp.Or(l.MaxEventsPerSecond, 50)
	return l
}

// Limit sets the bounds of the demo's tasks.
func (d *Demo) Limit(l DemoLimits) { d.limits = l.withDefaults() }

// outOfRange is the refusal of a demo option outside [lo, hi].
func outOfRange(option string, lo, hi int, what string) error {
	return &a2a.FieldError{Field: "message.metadata.demo." + option, Problem: fmt.Sprintf("must be between %d%s and %d", lo, what, hi)}
}

// Appender commits agent events (the Committer implements it).
type Appender interface {
	Append(ctx context.Context, taskID string, events ...a2a.Event) (a2a.TaskView, error)
}

// Demo is the built-in agent: it reports a few working updates, then ends the
// task as the message's metadata asks (completed with an artifact echoing the
// input text, by default).
type Demo struct {
	commit    Appender
	stepDelay time.Duration
	log       *slog.Logger
	now       func() time.Time
	limits    DemoLimits

	mu      sync.Mutex
	running map[string]context.CancelFunc
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc
}

// NewDemo returns a demo agent whose default pause between events is stepDelay.
func NewDemo(commit Appender, stepDelay time.Duration, log *slog.Logger) *Demo {
	ctx, stop := context.WithCancel(context.Background())
	return &Demo{commit: commit, stepDelay: stepDelay, log: log, now: time.Now, limits: DemoLimits{}.withDefaults(),
		running: map[string]context.CancelFunc{}, ctx: ctx, stop: stop}
}

// demoOptions reads and bounds the demo options of a message.
func (d *Demo) options(msg a2a.Message) (steps int, delay time.Duration, outcome a2a.TaskState, chunks int, err error) {
	var meta struct {
		Demo *DemoOptions `json:"demo"`
	}
	steps, delay, outcome, chunks = 2, d.stepDelay, a2a.StateCompleted, 1
	if len(msg.Metadata) == 0 {
		return
	}
	if json.Unmarshal(msg.Metadata, &meta) != nil || meta.Demo == nil {
		return // metadata that is not ours is passed through untouched
	}
	o := meta.Demo
	if o.Steps != nil {
		if steps = *o.Steps; steps < 0 || steps > d.limits.MaxSteps {
			return 0, 0, "", 0, outOfRange("steps", 0, d.limits.MaxSteps, "")
		}
	}
	if o.DelayMs != nil {
		if *o.DelayMs < 0 || *o.DelayMs > maxDemoDelay {
			return 0, 0, "", 0, outOfRange("delayMs", 0, maxDemoDelay, "")
		}
		delay = time.Duration(*o.DelayMs) * time.Millisecond
	}
	if o.ArtifactChunks != nil {
		if chunks = *o.ArtifactChunks; chunks < 0 || chunks > d.limits.MaxSteps {
			return 0, 0, "", 0, outOfRange("artifactChunks", 0, d.limits.MaxSteps, " (no artifact)")
		}
	}
	switch s := a2a.TaskState(o.Outcome); s {
	case "":
	case a2a.StateCompleted, a2a.StateFailed, a2a.StateInputRequired, a2a.StateRejected:
		outcome = s
	default:
		return 0, 0, "", 0, a2a.InvalidParams("metadata.demo.outcome must be completed, failed, input-required or rejected, got %q", o.Outcome)
	}
	return steps, delay, outcome, chunks, nil
}

// Validate checks the demo options of msg.
func (d *Demo) Validate(msg a2a.Message) error {
	_, _, _, _, err := d.options(msg)
	return err
}

// Start runs the demo on task unless it is already running.
func (d *Demo) Start(task a2a.Task, msg a2a.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, busy := d.running[task.ID]; busy {
		return nil
	}
	if d.ctx.Err() != nil {
		return errors.New("the demo agent is shutting down")
	}
	ctx, cancel := context.WithCancel(d.ctx)
	d.running[task.ID] = cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer d.finish(task.ID)
		if err := d.run(ctx, task, msg); err != nil && ctx.Err() == nil {
			d.log.WarnContext(ctx, "demo agent stopped", "task_id", task.ID, "err", err)
		}
	}()
	return nil
}

func (d *Demo) finish(id string) {
	d.mu.Lock()
	if cancel, ok := d.running[id]; ok {
		cancel()
		delete(d.running, id)
	}
	d.mu.Unlock()
}

// Cancel stops the demo's work on a task.
func (d *Demo) Cancel(taskID string) { d.finish(taskID) }

// Close stops every running demo task and waits for them.
func (d *Demo) Close() {
	d.stop()
	d.wg.Wait()
}

func (d *Demo) run(ctx context.Context, task a2a.Task, msg a2a.Message) error {
	steps, delay, outcome, chunks, _ := d.options(msg)
	seq := 0
	gap := time.Second / time.Duration(d.limits.MaxEventsPerSecond)
	var last time.Time
	emit := func(ev a2a.Event) error {
		if err := sleep(ctx, last.Add(gap).Sub(d.now())); err != nil { // paced: MaxEventsPerSecond
			return err
		}
		last = d.now()
		seq++
		ev.TaskID, ev.ContextID = task.ID, task.ContextID
		ev.Metadata = json.RawMessage(`{"emitNs":"` + strconv.FormatInt(d.now().UnixNano(), 10) + `","seq":` + strconv.Itoa(seq) + `}`)
		_, err := d.commit.Append(ctx, task.ID, ev)
		var te *a2a.TransitionError
		if errors.As(err, &te) && te.From.Terminal() {
			return context.Canceled // canceled from elsewhere: stop quietly
		}
		return err
	}
	status := func(s a2a.TaskState, text string) error {
		st := &a2a.TaskStatus{State: s}
		if text != "" {
			st.Message = agentMessage(task, text)
		}
		return emit(a2a.Event{Kind: a2a.EventStatus, Status: st})
	}
	if outcome == a2a.StateRejected {
		return status(a2a.StateRejected, "The demo agent rejected this task, as asked.")
	}
	if steps == 0 && task.Status.State == a2a.StateSubmitted && outcome != a2a.StateFailed {
		// The state machine goes through working on the way to any other end.
		if err := status(a2a.StateWorking, ""); err != nil {
			return err
		}
	}
	for i := 1; i <= steps; i++ {
		if err := sleep(ctx, delay); err != nil {
			return err
		}
		if err := status(a2a.StateWorking, "working: step "+strconv.Itoa(i)+" of "+strconv.Itoa(steps)); err != nil {
			return err
		}
	}
	switch outcome {
	case a2a.StateFailed:
		return status(a2a.StateFailed, "The demo agent failed this task, as asked.")
	case a2a.StateInputRequired:
		return status(a2a.StateInputRequired, "The demo agent needs more input: send another message to this task.")
	}
	artifactID := uuid.NewString()
	for i, chunk := range splitChunks(textOf(msg), chunks) { // no artifact when chunks is 0
		err := emit(a2a.Event{Kind: a2a.EventArtifact, Append: i > 0, LastChunk: i == chunks-1,
			Artifact: &a2a.Artifact{ArtifactID: artifactID, Name: "echo", Parts: []a2a.Part{{Kind: a2a.PartText, Text: chunk}}}})
		if err != nil {
			return err
		}
	}
	return status(a2a.StateCompleted, "")
}

func agentMessage(task a2a.Task, text string) *a2a.Message {
	return &a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleAgent, TaskID: task.ID, ContextID: task.ContextID,
		Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}
}

// textOf joins the text parts of a message.
func textOf(m a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == a2a.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// splitChunks cuts s into n pieces (by rune) whose concatenation is s.
func splitChunks(s string, n int) []string {
	r := []rune(s)
	out := make([]string, n)
	for i := range n {
		out[i] = string(r[i*len(r)/n : (i+1)*len(r)/n])
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
