package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
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

// outOfRange is the refusal of a demo option outside [lo, hi].
func outOfRange(option string, lo, hi int, what string) error {
	return &a2a.FieldError{Field: "message.metadata.demo." + option, Problem: fmt.Sprintf("must be between %d%s and %d", lo, what, hi)}
}

// DemoQueue is the work queue of the demo agent's task turns. A ':' can
// occur in no worker queue name (config.ParseBackend and the worker API
// refuse it), so it never meets a configured queue, and no external worker
// can claim from it.
const DemoQueue = "relay:demo"

// DemoConfig configures a Demo. Zero values take the documented defaults.
type DemoConfig struct {
	// StepDelay is the default pause before each working step (0: none).
	StepDelay time.Duration
	// Limits bound what one task may ask.
	Limits DemoLimits
	// Concurrency is how many task turns one instance runs at once
	// (default 1024); more wait in the queue.
	Concurrency int
	// Claimers is how many claims wait for a turn at once (default 4).
	Claimers int
	// ClaimWait is how long one claim waits for a turn (default 1s).
	ClaimWait time.Duration
	// Worker names this instance in the queue (default
	// "demo-<hostname>-<random>").
	Worker string
	// Outage is how writes ride out Redis outages.
	Outage Outage
	// Now is the clock of pacing and lease ages (default time.Now).
	Now func() time.Time
}

// Validate checks the fields.
func (c DemoConfig) Validate() error {
	switch {
	case c.StepDelay < 0:
		return fmt.Errorf("ingest: demo: step delay: %s is negative", c.StepDelay)
	case c.Concurrency < 0:
		return fmt.Errorf("ingest: demo: concurrency: %d is negative", c.Concurrency)
	case c.Claimers < 0:
		return fmt.Errorf("ingest: demo: claimers: %d is negative", c.Claimers)
	case c.Limits.MaxSteps < 0 || c.Limits.MaxEventsPerSecond < 0:
		return fmt.Errorf("ingest: demo: limits: %+v has a negative bound", c.Limits)
	}
	return nil
}

func (c DemoConfig) withDefaults() DemoConfig {
	c.Limits = c.Limits.withDefaults()
	c.Concurrency = cmp.Or(c.Concurrency, 1024)
	c.Claimers = cmp.Or(c.Claimers, 4)
	c.ClaimWait = cmp.Or(c.ClaimWait, time.Second)
	if c.Worker == "" {
		host, _ := os.Hostname()
		c.Worker = "demo-" + cmp.Or(host, "relay") + "-" + uuid.NewString()[:8]
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Outage.Now == nil {
		c.Outage.Now = c.Now
	}
	return c
}

// Demo is the built-in agent: it reports a few working updates, then ends the
// task as the message's metadata asks (completed with an artifact echoing the
// input text, by default).
//
// It works like any backend, under a lease: Start offers the task turn to
// DemoQueue, and Run, on every instance, claims turns, keeps their leases
// alive and carries each to its end. A turn whose instance died is claimed
// again once its lease runs out, and resumes where the task stands (the
// step its last status names, the artifact chunks it holds): no step and
// no chunk is emitted twice. Writes ride out Redis outages (Outage); past
// its bound the task fails, saying why.
type Demo struct {
	pull  *Pull
	queue PullQueue
	cfg   DemoConfig
	log   *slog.Logger

	mu      sync.Mutex
	running map[string]*demoTurn // by task id: the turns this instance runs
	closed  bool
	closing chan struct{}
	runs    sync.WaitGroup
}

// NewDemo returns the demo agent, whose turns go through pull's queue
// DemoQueue; Run works them.
func NewDemo(pull *Pull, cfg DemoConfig, log *slog.Logger) (*Demo, error) {
	if pull == nil {
		return nil, errors.New("ingest: demo: nil pull backend")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	log = log.With("agent", "demo")
	cfg.Outage.Log = cmp.Or(cfg.Outage.Log, log)
	return &Demo{pull: pull, queue: pull.Queue(DemoQueue), cfg: cfg, log: log,
		running: map[string]*demoTurn{}, closing: make(chan struct{})}, nil
}

// options reads and bounds the demo options of a message.
func (d *Demo) options(msg a2a.Message) (steps int, delay time.Duration, outcome a2a.TaskState, chunks int, err error) {
	var meta struct {
		Demo *DemoOptions `json:"demo"`
	}
	steps, delay, outcome, chunks = 2, d.cfg.StepDelay, a2a.StateCompleted, 1
	if len(msg.Metadata) == 0 {
		return
	}
	if json.Unmarshal(msg.Metadata, &meta) != nil || meta.Demo == nil {
		return // metadata that is not ours is passed through untouched
	}
	o := meta.Demo
	if o.Steps != nil {
		if steps = *o.Steps; steps < 0 || steps > d.cfg.Limits.MaxSteps {
			return 0, 0, "", 0, outOfRange("steps", 0, d.cfg.Limits.MaxSteps, "")
		}
	}
	if o.DelayMs != nil {
		if *o.DelayMs < 0 || *o.DelayMs > maxDemoDelay {
			return 0, 0, "", 0, outOfRange("delayMs", 0, maxDemoDelay, "")
		}
		delay = time.Duration(*o.DelayMs) * time.Millisecond
	}
	if o.ArtifactChunks != nil {
		if chunks = *o.ArtifactChunks; chunks < 0 || chunks > d.cfg.Limits.MaxSteps {
			return 0, 0, "", 0, outOfRange("artifactChunks", 0, d.cfg.Limits.MaxSteps, " (no artifact)")
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

// demoEventBytes is about what one of the demo's status or chunk events
// stores beside its text: the event (its status message and metadata) and
// the snapshot's growth.
const demoEventBytes = 1024

// Estimate is about what the demo stores in answer to msg, read from its
// options as the turn will (Estimator): an event per step, the end, and,
// when it completes with an artifact, its echo of the message's text
// (stored twice: in the chunks' events and the snapshot's artifact) in
// its chunks' events.
func (d *Demo) Estimate(_ a2a.Task, msg a2a.Message) Output {
	steps, _, outcome, chunks, err := d.options(msg)
	if err != nil {
		return Output{}
	}
	out := Output{Events: steps + 2} // (a first working status, the end)
	if outcome == a2a.StateCompleted && chunks > 0 {
		var text int64
		for _, p := range msg.Parts {
			if p.Kind == a2a.PartText {
				text += jsonStringBytes(p.Text)
			}
		}
		out.Events += chunks
		out.Bytes += 2 * text
	}
	out.Bytes += int64(out.Events) * demoEventBytes
	return out
}

// jsonStringBytes is the length of s as encoding/json writes it, without
// its quotes: escapes (HTML's characters included) take more than their
// bytes.
func jsonStringBytes(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 5 // \u00XX
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			n += 3 // U+2028, U+2029: \u2028 for 3 bytes
		}
	}
	return n
}

// Start offers the task turn to the demo's queue; an instance's Run takes it.
func (d *Demo) Start(task a2a.Task, msg a2a.Message) error { return d.queue.Start(task, msg) }

// QueueOf names the demo's work queue, so that the commit that makes a
// task's turn claimable records its offer in the same step, and the turn
// is offered numbered (Queued).
func (d *Demo) QueueOf(task a2a.Task, msg a2a.Message) string { return d.queue.QueueOf(task, msg) }

// Offer puts the turn, as its commit recorded it, in the demo's queue.
func (d *Demo) Offer(ctx context.Context, task a2a.Task, msg a2a.Message, o taskstore.Offer) error {
	return d.queue.Offer(ctx, task, msg, o)
}

// Cancel stops the turn of taskID at once when this instance runs it
// (another instance's turn sees the cancel at its next heartbeat or write).
func (d *Demo) Cancel(taskID string) {
	d.mu.Lock()
	t := d.running[taskID]
	d.mu.Unlock()
	if t != nil {
		t.stop(errDemoCanceled)
	}
}

// Close stops Run: no more claims, and the turns under way are handed back
// to the queue (released), so that another instance takes them at once. It
// returns when Run has.
func (d *Demo) Close() {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.closing)
	}
	d.mu.Unlock()
	d.runs.Wait()
}

// Run claims the demo's task turns and works them, up to Concurrency at
// once, until ctx ends or Close. The turns still running then are
// released; Run returns when all have ended.
func (d *Demo) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.runs.Add(1)
	d.mu.Unlock()
	defer d.runs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-d.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	slots := make(chan struct{}, d.cfg.Concurrency)
	var turns, claimers sync.WaitGroup
	defer turns.Wait()
	for range d.cfg.Claimers {
		claimers.Go(func() { d.claim(ctx, slots, &turns) })
	}
	claimers.Wait()
	return nil
}

// claimBatch bounds the turns one claim of the demo runner takes at once:
// when many wait, they are read and granted a batch per round trip.
const claimBatch = 16

// claim takes turns while a slot is free, until ctx ends: as many as
// slots are free, up to claimBatch, per claim.
func (d *Demo) claim(ctx context.Context, slots chan struct{}, turns *sync.WaitGroup) {
	bo := d.cfg.Outage.Backoff()
	var lastLog time.Time
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1
	more:
		for n < claimBatch {
			select {
			case slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		cs, err := d.pull.ClaimN(ctx, DemoQueue, d.cfg.Worker, d.cfg.ClaimWait, n)
		for range n - len(cs) {
			<-slots
		}
		for _, c := range cs {
			turns.Go(func() {
				defer func() { <-slots }()
				d.handle(ctx, c)
			})
		}
		if len(cs) > 0 {
			if err != nil && ctx.Err() == nil { // some of the batch could not be taken: they come back after a lease
				d.log.WarnContext(ctx, "claiming part of a batch of demo work failed", "claimed", len(cs), "err", err)
			}
			bo.Reset()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if now := d.cfg.Now(); now.Sub(lastLog) >= 10*time.Second {
				lastLog = now
				d.log.WarnContext(ctx, "claiming demo work failed; retrying", "err", err)
			}
			if !pause(ctx, bo.NextBackOff()) {
				return
			}
		}
	}
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
