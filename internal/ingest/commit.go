// Package ingest is the one commit path of relay: every change to a task is
// validated against the state machine and committed here, atomically with
// its event-stream entry. It also holds the agent side: the Service that
// turns A2A requests into commits, the pull backend (work queues under
// leases), the built-in demo agent (an in-process worker of its own queue),
// and Outage, the one policy by which in-process agents ride out Redis
// outages.
package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/telemetry"
	"github.com/a2arelay/relay/internal/tenant"
)

// Store is what the commit path needs of Redis (taskstore.Store implements it).
type Store interface {
	Load(ctx context.Context, taskID string) (taskstore.Record, error)
	Commit(ctx context.Context, c taskstore.Commit) ([]string, error)
	CommitOnce(ctx context.Context, c taskstore.Commit, once taskstore.Once) ([]string, *taskstore.Applied, error)
	Applied(ctx context.Context, taskID, key string) (taskstore.Applied, error)
}

// TurnStore is what the commit path keeps of task turns beside its commits
// (taskstore.Turns implements it).
type TurnStore interface {
	DropOfferSoon(o taskstore.Offer)
	// Turn deadlines (deadline.go).
	ClaimTurn(ctx context.Context, taskID string, now time.Time, limits taskstore.TurnLimits) (expired string, err error)
	DropDeadline(ctx context.Context, taskID string) error
}

// URLIndex lists push configs under their webhook URLs (taskstore.URLIndex
// implements it).
type URLIndex interface {
	// IndexPushURL lists a push config under its webhook URL before the
	// config is stored (taskstore's urlindex.go: replays by URL read it).
	IndexPushURL(ctx context.Context, rawURL, taskID, configID string, now time.Time) error
}

// maxConflictRetries bounds how often a commit is recomputed when another
// writer changed the task in between.
const maxConflictRetries = 16

// Committer validates task events and commits them through the Store.
type Committer struct {
	store     Store
	turnStore TurnStore
	urls      URLIndex
	now       func() time.Time
	retention time.Duration
	hub       *Hub
	views     *viewCache
	observe   func(events int)
	tracer    *telemetry.Tracer
	limits    TaskLimits
	// turns: some turn limit is set (TaskLimits.Turn, SkillTurn).
	turns bool
}

// CommitterDeps are what a Committer works with.
type CommitterDeps struct {
	// Store commits to Redis (required).
	Store Store
	// Turns records the claims, deadlines and offers of task turns
	// (required).
	Turns TurnStore
	// URLs lists the push configs of every commit, and of the Service,
	// under their webhook URLs (required).
	URLs URLIndex
	// Hub is told of every commit (required).
	Hub *Hub
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Observe, when set, is told the number of events of every commit.
	Observe func(events int)
	// Tracer traces every commit, and the agents' claims and turns (nil:
	// tracing is off).
	Tracer *telemetry.Tracer
}

// CommitterConfig is how a Committer commits.
type CommitterConfig struct {
	// Retention is how long a finished task is kept (default 7 days).
	Retention time.Duration
	// Limits bound what every task keeps.
	Limits TaskLimits
}

// TaskLimits bound what one task keeps. Zero values take the documented
// defaults.
type TaskLimits struct {
	// MaxHistory is the most messages a task's history keeps (default
	// 100): a message beyond it is refused, not folded away, so that the
	// snapshot, what webhooks get and what the event stream folds to stay
	// one task.
	MaxHistory int
	// MaxArtifacts is the most artifacts a task keeps (default 100): an
	// agent's event that would add another is refused.
	MaxArtifacts int
	// Turn limits every task turn (deadline.go): how long it may wait
	// unclaimed, and run once claimed (zero: no limit, the default).
	Turn taskstore.TurnLimits
	// SkillTurn overrides Turn for the tasks whose first message names
	// the skill (metadata "skill"); a zero field takes Turn's.
	SkillTurn map[string]taskstore.TurnLimits
}

// withDefaults fills the zero limits.
func (l TaskLimits) withDefaults() TaskLimits {
	l.MaxHistory = cmp.Or(l.MaxHistory, 100)
	l.MaxArtifacts = cmp.Or(l.MaxArtifacts, 100)
	return l
}

// check returns an error naming the first limit out of range.
func (l TaskLimits) check() error {
	if l.MaxHistory < 0 || l.MaxArtifacts < 0 {
		return fmt.Errorf("MaxHistory (%d) and MaxArtifacts (%d) must not be negative", l.MaxHistory, l.MaxArtifacts)
	}
	if l.Turn.Wait < 0 || l.Turn.Run < 0 {
		return fmt.Errorf("turn limits (wait %s, run %s) must not be negative", l.Turn.Wait, l.Turn.Run)
	}
	for skill, t := range l.SkillTurn {
		if t.Wait < 0 || t.Run < 0 {
			return fmt.Errorf("turn limits of skill %q (wait %s, run %s) must not be negative", skill, t.Wait, t.Run)
		}
	}
	return nil
}

// anyTurn reports whether some turn limit is set.
func (l TaskLimits) anyTurn() bool {
	turns := l.Turn.Any()
	for _, t := range l.SkillTurn {
		turns = turns || t.Any()
	}
	return turns
}

// checkLimits refuses a task that grew past the limits with an event: a
// *a2a.FieldError naming what was refused.
func (c *Committer) checkLimits(before, after *a2a.Task) error {
	if n := len(after.History); n > len(before.History) && n > c.limits.MaxHistory {
		return HistoryFull(after.ID, c.limits.MaxHistory)
	}
	if n := len(after.Artifacts); n > len(before.Artifacts) && n > c.limits.MaxArtifacts {
		return &a2a.FieldError{Field: "artifact.artifactId",
			Problem: fmt.Sprintf("would be a new artifact of task %s, which keeps at most %d (RELAY_TASK_MAX_ARTIFACTS)", after.ID, c.limits.MaxArtifacts)}
	}
	return nil
}

// HistoryFull is the error for a message to a task whose history holds
// max messages already.
func HistoryFull(taskID string, max int) error {
	return &a2a.FieldError{Field: "message",
		Problem: fmt.Sprintf("cannot be added: task %s keeps at most %d messages in its history (RELAY_TASK_MAX_HISTORY); start a new task", taskID, max)}
}

func (c *Committer) committed(n int) {
	if c.observe != nil {
		c.observe(n)
	}
}

// NewCommitter returns a Committer, or an error naming what is missing or
// out of range.
func NewCommitter(d CommitterDeps, cfg CommitterConfig) (*Committer, error) {
	switch {
	case d.Store == nil || d.Hub == nil:
		return nil, errors.New("ingest: committer: Store and Hub are required")
	case d.Turns == nil || d.URLs == nil:
		return nil, errors.New("ingest: committer: Turns and URLs are required")
	case cfg.Retention < 0:
		return nil, fmt.Errorf("ingest: committer: Retention (%s) must not be negative", cfg.Retention)
	}
	if err := cfg.Limits.check(); err != nil {
		return nil, fmt.Errorf("ingest: committer: %w", err)
	}
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &Committer{store: d.Store, turnStore: d.Turns, urls: d.URLs, now: now, retention: cmp.Or(cfg.Retention, 7*24*time.Hour), hub: d.Hub,
		views: newViewCache(8192, now), observe: d.Observe, tracer: d.Tracer, limits: cfg.Limits.withDefaults(), turns: cfg.Limits.anyTurn()}, nil
}

// Field names of the task hash beside the snapshot.
const (
	fieldDialect = "dialect"
	fieldCreated = "created"
	fieldOwner   = "owner"
)

// Create commits a new task (its first event carries the whole task) with
// the push configs registered inline. It returns taskstore.ErrConflict when a
// task with that id exists already.
func (c *Committer) Create(ctx context.Context, t a2a.Task, d a2a.Dialect, push []a2a.PushConfig) (a2a.TaskView, error) {
	return c.create(ctx, t, d, push, nil, 0)
}

// CreateOffered is Create for a task whose first turn is offered to a work
// queue: the commit records offer (its TaskID is t's) in the same atomic
// step, and returns it as recorded, numbered (Turn) by the version the
// commit made. The caller offers that turn and drops the record (DropOfferSoon)
// once the offer is in the queue. Should relay die in between, the
// Reofferer makes the offer.
func (c *Committer) CreateOffered(ctx context.Context, t a2a.Task, d a2a.Dialect, push []a2a.PushConfig, offer taskstore.Offer) (a2a.TaskView, taskstore.Offer, error) {
	view, err := c.create(ctx, t, d, push, &offer, 0)
	return view, offer, err
}

// create commits a new task; offer, when not nil, is recorded and
// numbered (CreateOffered); reserve counts the task's first turn's output
// in its owner's usage ahead of its writing (taskstore's Reservations).
func (c *Committer) create(ctx context.Context, t a2a.Task, d a2a.Dialect, push []a2a.PushConfig, offer *taskstore.Offer, reserve int64) (a2a.TaskView, error) {
	if offer != nil {
		offer.TaskID, offer.Turn = t.ID, 1 // (the version a creation makes: taskstore numbers the record alike)
	}
	now := c.now().UTC()
	if t.Status.Timestamp == "" {
		t.Status.Timestamp = timestamp(now)
	}
	ev := a2a.Event{Kind: a2a.EventTask, TaskID: t.ID, ContextID: t.ContextID, Task: &t}
	snap, evb, err := encode(t, []a2a.Event{ev})
	if err != nil {
		return a2a.TaskView{}, err
	}
	pc := make(map[string][]byte, len(push))
	for _, p := range push {
		if err := c.urls.IndexPushURL(ctx, p.URL, t.ID, p.ID, now); err != nil {
			return a2a.TaskView{}, fmt.Errorf("ingest: index push config: %w", err)
		}
		if pc[p.ID], err = json.Marshal(p); err != nil {
			return a2a.TaskView{}, fmt.Errorf("ingest: encode push config: %w", err)
		}
	}
	var dl taskstore.Deadline
	if st := t.Status.State; !st.Terminal() && !st.Interrupted() {
		dl.Start = c.turnLimits(t)
	}
	owner := tenant.Owner(ctx)
	fields := map[string]string{fieldDialect: string(d), fieldCreated: strconv.FormatInt(now.UnixMilli(), 10)}
	if owner != "" {
		fields[fieldOwner] = owner
	}
	ctx, span := c.startCommit(ctx, t.ID)
	tp := telemetry.TraceParent(ctx)
	if offer != nil && tp != "" {
		fields[fieldTrace] = tp
	}
	commit := taskstore.Commit{
		TaskID: t.ID, Snapshot: snap, Events: evb, Deliver: deliverable([]a2a.Event{ev}), Class: classes([]a2a.Event{ev}), UpdatedAt: now, PushConfigs: pc,
		PushAccept: pushAccept(push), Fields: fields, Owner: owner, Offer: offer, Deadline: dl, Reserve: reserve, TraceParent: tp,
	}
	ids, err := c.store.Commit(ctx, commit)
	endSpan(span, err)
	if err != nil {
		return a2a.TaskView{}, err
	}
	view := a2a.TaskView{Task: t, Dialect: d, EventID: last(ids), Owner: owner}
	c.views.put(t.ID, cachedView{view: view, version: 1, snapLen: len(snap), reserve: commit.ReserveAfter()})
	c.committed(1)
	c.hub.Notify(t.ID)
	return view, nil
}

// Append validates events against the task's current snapshot and commits
// them as one atomic step. Status events get a timestamp when they lack one
// and their final flag set from the state. A forbidden change returns an
// *a2a.TransitionError and commits nothing.
func (c *Committer) Append(ctx context.Context, taskID string, events ...a2a.Event) (a2a.TaskView, error) {
	a, err := c.append(ctx, taskID, events, nil, nil, "", 0)
	return a.View, err
}

// AppendOffered is Append for events that make a new turn of the task
// claimable in a work queue (a client's message): the commit records offer
// (its TaskID is taskID's) in the same atomic step, and returns it as
// recorded, numbered as CreateOffered does.
func (c *Committer) AppendOffered(ctx context.Context, taskID string, offer taskstore.Offer, events ...a2a.Event) (a2a.TaskView, taskstore.Offer, error) {
	a, err := c.append(ctx, taskID, events, nil, &offer, "", 0)
	return a.View, a.offer, err
}

// DropOfferSoon removes the record of an offer that is in its work queue
// now, within a few tens of milliseconds, together with the others of its
// partition (taskstore.Turns.DropOfferSoon: one ZREM for many under load).
// It does not wait; a record it fails to remove is the Reofferer's.
func (c *Committer) DropOfferSoon(o taskstore.Offer) { c.turnStore.DropOfferSoon(o) }

// Appended is what an append under an idempotency key did (AppendOnce).
type Appended struct {
	// View is the task the append made (zero when Replayed).
	View a2a.TaskView
	// Answer is the answer recorded with the key: this append's
	// (Once.Answer), or, when Replayed, the first append's under the key.
	Answer []byte
	// Replayed: the key was committed already; nothing was.
	Replayed bool
	// offer is the offer the commit recorded, numbered (AppendOffered).
	offer taskstore.Offer
}

// append commits events, under once when not nil, recording offer when
// not nil, and, when expect is not empty, only while the task's turn
// record is expect (a deadline's failure of the turn:
// taskstore.ErrTurnMoved). reserve counts the output of the turn the
// events start in the owner's usage ahead of its writing; events that end
// a turn (a final or interrupted state) give back what is left of the
// task's reserve (taskstore's Reservations; a turn queued behind the one
// that ends is then counted as it writes).
func (c *Committer) append(ctx context.Context, taskID string, events []a2a.Event, once *Once, offer *taskstore.Offer, expect string, reserve int64) (Appended, error) {
	reread := false
	for range maxConflictRetries {
		a, err := c.tryAppend(ctx, taskID, events, once, offer, expect, reserve)
		var te *a2a.TransitionError
		switch {
		case errors.As(err, &te) && !reread:
			// Refused by what may be a cached view that another instance's
			// commits left behind (a worker's post after its earlier posts
			// landed through another relay): only the stored task decides,
			// so the task is read again once before the refusal stands.
			reread = true
		case !errors.Is(err, taskstore.ErrConflict):
			return a, err
		}
		c.views.drop(taskID) // another writer got in first: read the task again
	}
	return Appended{}, fmt.Errorf("ingest: task %s: %w after %d tries", taskID, taskstore.ErrConflict, maxConflictRetries)
}

func (c *Committer) tryAppend(ctx context.Context, taskID string, events []a2a.Event, once *Once, offer *taskstore.Offer, expect string, reserve int64) (Appended, error) {
	cached, err := c.current(ctx, taskID)
	if err != nil {
		return Appended{}, err
	}
	view := cached.view
	view.Task = cloneTask(view.Task)
	before := view.Task
	now := c.now().UTC()
	evs := make([]a2a.Event, len(events))
	changesStatus := false // (a commit without a status update keeps its task's place in listings)
	for i, ev := range events {
		ev.ContextID = cmp.Or(ev.ContextID, view.Task.ContextID)
		if ev.Kind == a2a.EventStatus && ev.Status != nil {
			changesStatus = true
			st := *ev.Status
			st.Timestamp = cmp.Or(st.Timestamp, timestamp(now))
			ev.Status = &st
			ev.Final = st.State.Terminal() || st.State.Interrupted()
		}
		if err := a2a.Apply(&view.Task, ev); err != nil {
			return Appended{}, err
		}
		evs[i] = ev
	}
	if err := c.checkLimits(&before, &view.Task); err != nil {
		return Appended{}, err
	}
	snap, evb, err := encode(view.Task, evs)
	if err != nil {
		return Appended{}, err
	}
	var expire time.Duration
	if view.Task.Status.State.Terminal() {
		expire = c.retention
	}
	var recorded taskstore.Offer
	if offer != nil { // numbered by the version this try makes, as taskstore numbers the record
		recorded = *offer
		recorded.TaskID, recorded.Turn = taskID, cached.version+1
	}
	commit := taskstore.Commit{
		TaskID: taskID, Version: cached.version, Snapshot: snap, PrevSnapshotLen: cached.snapLen, Events: evb, Deliver: deliverable(evs), Class: classes(evs),
		UpdatedAt: now, KeepPlace: !changesStatus, ExpireAfter: expire, Owner: view.Owner, Offer: offer, Deadline: c.turnChange(before, view.Task, evs, expect),
		Reserve: reserve, PrevReserve: cached.reserve, Release: view.Task.Status.State.Terminal() || view.Task.Status.State.Interrupted(),
	}
	ids, answer, replayed, err := c.commitTraced(ctx, &commit, offer != nil, once, view)
	if replayed {
		return Appended{Answer: answer, Replayed: true}, err
	}
	if err != nil {
		return Appended{}, err
	}
	view.EventID = last(ids)
	if expire > 0 {
		c.views.drop(taskID)
	} else {
		c.views.put(taskID, cachedView{view: view, version: cached.version + 1, snapLen: len(snap), reserve: commit.ReserveAfter()})
	}
	c.committed(len(evs))
	c.hub.Notify(taskID)
	return Appended{View: view, Answer: answer, offer: recorded}, nil
}

// commitTraced commits commit, under once when not nil, in a span of its
// own whose traceparent the commit keeps (and, when it starts a turn, the
// task's turn keeps: both are set in commit, whose usage counts them). replayed: the key's first commit landed already,
// nothing was written, and answer is the first one's.
func (c *Committer) commitTraced(ctx context.Context, commit *taskstore.Commit, turn bool, once *Once, view a2a.TaskView) (ids []string, answer []byte, replayed bool, err error) {
	ctx, span := c.startCommit(ctx, commit.TaskID)
	defer func() { endSpan(span, err) }()
	if commit.TraceParent = telemetry.TraceParent(ctx); turn && commit.TraceParent != "" {
		commit.Fields = map[string]string{fieldTrace: commit.TraceParent} // the turn this commit starts
	}
	if once == nil {
		ids, err = c.store.Commit(ctx, *commit)
		return ids, nil, false, err
	}
	if answer, err = once.Answer(view); err != nil {
		return nil, nil, false, err
	}
	var first *taskstore.Applied
	ids, first, err = c.store.CommitOnce(ctx, *commit, taskstore.Once{Key: once.Key, Hash: once.Hash, Answer: answer})
	if err == nil && first != nil {
		answer, err = once.replay(*first)
		return nil, answer, true, err
	}
	return ids, answer, false, err
}

// current returns the task as last committed through this Committer, or
// as stored. A stale cached view is harmless: the commit's version check
// refuses it and Append reads the task again.
func (c *Committer) current(ctx context.Context, taskID string) (cachedView, error) {
	if v, ok := c.views.get(taskID); ok {
		return v, nil
	}
	rec, err := c.store.Load(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return cachedView{}, a2a.ErrTaskNotFound(taskID)
	}
	if err != nil {
		return cachedView{}, err
	}
	view, err := decodeRecord(rec)
	return cachedView{view: view, version: rec.Version, snapLen: len(rec.Snapshot), reserve: rec.Reserve}, err
}

// cloneTask copies the slices Apply appends to, so a cached view is never
// changed by a commit that then fails.
func cloneTask(t a2a.Task) a2a.Task {
	t.History = slices.Clone(t.History)
	t.Artifacts = slices.Clone(t.Artifacts)
	for i := range t.Artifacts {
		t.Artifacts[i].Parts = slices.Clone(t.Artifacts[i].Parts)
	}
	return t
}

func encode(t a2a.Task, events []a2a.Event) ([]byte, [][]byte, error) {
	snap, err := json.Marshal(t)
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: encode task: %w", err)
	}
	evb := make([][]byte, len(events))
	for i, ev := range events {
		if evb[i], err = json.Marshal(ev); err != nil {
			return nil, nil, fmt.Errorf("ingest: encode event: %w", err)
		}
	}
	return snap, evb, nil
}

func decodeRecord(rec taskstore.Record) (a2a.TaskView, error) {
	var v a2a.TaskView
	if err := json.Unmarshal(rec.Snapshot, &v.Task); err != nil {
		return v, fmt.Errorf("ingest: decode stored task: %w", err)
	}
	v.Dialect = a2a.Dialect(rec.Fields[fieldDialect])
	v.Owner = rec.Fields[fieldOwner]
	return v, nil
}

// timestamp formats t as ISO 8601 UTC with a Z, as A2A wants.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// deliverable marks the events that go to webhooks: every change the agent
// or relay makes, but not the client's own messages.
func deliverable(events []a2a.Event) []bool {
	out := make([]bool, len(events))
	for i, ev := range events {
		out[i] = ev.Kind.Notifies()
	}
	return out
}

func last(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// Load reads a task from Redis, bypassing the view cache: what another
// instance committed is seen at once.
func (c *Committer) Load(ctx context.Context, taskID string) (a2a.TaskView, error) {
	rec, err := c.store.Load(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(taskID)
	}
	if err != nil {
		return a2a.TaskView{}, err
	}
	return decodeRecord(rec)
}

// loadTurn is Load, whether the task has a turn record (a deadline that a
// claim of its turn moves: ClaimTurn), and the traceparent of its latest
// turn ("": none).
func (c *Committer) loadTurn(ctx context.Context, taskID string) (a2a.TaskView, bool, string, error) {
	rec, err := c.store.Load(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return a2a.TaskView{}, false, "", a2a.ErrTaskNotFound(taskID)
	}
	if err != nil {
		return a2a.TaskView{}, false, "", err
	}
	v, err := decodeRecord(rec)
	return v, rec.Deadline != "", rec.Fields[fieldTrace], err
}
