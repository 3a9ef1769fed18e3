package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// Task deadlines (README "Task deadlines"). A turn of a task (its creation,
// or a client's answer to an interrupted task, until the task is final or
// interrupted again) may wait unclaimed at most TaskLimits.Turn.Wait and
// run, from its first claim, at most Turn.Run, or its skill's limits. Time
// in input-required or auth-required does not count: the next turn has
// limits of its own. Whatever the backend (a worker queue, the upstream
// bridge, the demo), the commit that starts the turn records its deadline
// atomically (taskstore.Deadline), the claim moves it (ClaimTurn), and
// the commit that ends the turn removes it; past a limit the
// DeadlineSweeper, or the claim that finds it passed, fails the task
// through the commit path, conditioned on the turn record it read, so that
// a race with the agent's final post ends in whichever committed first.

// DeadlineMetadata is the key of a status message's metadata that says the
// task failed at a deadline: "wait" or "run".
const DeadlineMetadata = "relayDeadline"

// DeadlineError is the refusal of an agent's work on a task that relay
// failed at a deadline: the worker must stop, as for a cancel
// (errors.Is(err, ErrTaskCanceled)).
type DeadlineError struct {
	// Limit is "wait" or "run".
	Limit string
	// Reason is the task's status message.
	Reason string
}

func (e *DeadlineError) Error() string { return e.Reason }

// Unwrap makes a deadline a cancel to agents that know only those.
func (e *DeadlineError) Unwrap() error { return ErrTaskCanceled }

// turnLimits are the limits of t's turns: its skill's, over the global ones.
func (c *Committer) turnLimits(t a2a.Task) taskstore.TurnLimits {
	l := c.limits.Turn
	if len(t.History) > 0 {
		if s, ok := c.limits.SkillTurn[skillOf(t.History[0])]; ok {
			l.Wait, l.Run = cmp.Or(s.Wait, l.Wait), cmp.Or(s.Run, l.Run)
		}
	}
	return l
}

// turnChange is what a commit of events from before to after does to the
// task's turn record: a final or interrupted state ends the turn; leaving
// an interrupted state starts one: waiting for its claim when the client
// answered (the commit carries a user message), running when the agent
// took the task up again (it holds the claim of a turn queued while the
// task worked, which its claim left without a record).
func (c *Committer) turnChange(before, after a2a.Task, events []a2a.Event, expect string) taskstore.Deadline {
	switch st := after.Status.State; {
	case st.Terminal() || st.Interrupted():
		return taskstore.Deadline{End: true, Expect: expect}
	case before.Status.State.Interrupted():
		answered := slices.ContainsFunc(events, func(e a2a.Event) bool {
			return e.Kind == a2a.EventMessage && e.Message != nil && e.Message.Role == a2a.RoleUser
		})
		return taskstore.Deadline{Start: c.turnLimits(after), Running: !answered}
	}
	return taskstore.Deadline{}
}

// ClaimTurn records that an agent took task's turn: its run limit starts
// (once per turn: a turn taken over keeps it; a turn without a record
// starts it from this instance's limits, unless the task is interrupted:
// then the agent's commit that takes it up again starts it). recorded says whether the task has a turn record
// (loadTurn): the claim moves a record even where no limit is configured
// (another instance wrote it), and costs a command only when some limit
// is configured or the task has a record. A turn whose wait limit had
// passed is failed here, and the claim gets a *DeadlineError: it must not
// be handed out.
func (c *Committer) ClaimTurn(ctx context.Context, task a2a.Task, recorded bool) error {
	if !c.turns && !recorded {
		return nil
	}
	now := c.now()
	limits := c.turnLimits(task)
	if task.Status.State.Interrupted() {
		// A turn queued while the task worked, claimed now that it waits
		// for its client: nothing runs until the agent takes the task up
		// again, whose commit starts the run limit (turnChange). A record
		// made now would time the client's silence.
		limits = taskstore.TurnLimits{}
	}
	rec, err := c.turnStore.ClaimTurn(ctx, task.ID, now, limits)
	if err != nil || rec == "" {
		return err
	}
	turn, _ := taskstore.ParseTurn(rec)
	derr := deadlineOf(turn, now)
	failed, err := c.failTurn(ctx, task.ID, rec, derr)
	switch {
	case err != nil:
		return err
	case !failed:
		// The turn ended or moved on first: not this claim's to drop as
		// failed; the caller hands it back, and the next claim sees.
		return fmt.Errorf("ingest: claim of task %s: %w", task.ID, taskstore.ErrTurnMoved)
	}
	return derr
}

// ExpireTurn fails taskID if its turn is past its limit at now, through
// the commit path, conditioned on the turn record it reads: a turn that
// ended or moved meanwhile is left alone. A listing without a record (the
// task expired) is dropped.
func (c *Committer) ExpireTurn(ctx context.Context, taskID string) (failed bool, err error) {
	rec, err := c.store.Load(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return false, c.turnStore.DropDeadline(ctx, taskID)
	}
	if err != nil {
		return false, err
	}
	turn, ok := taskstore.ParseTurn(rec.Deadline)
	if !ok {
		return false, c.turnStore.DropDeadline(ctx, taskID)
	}
	now := c.now()
	if due, ok := turn.Due(); !ok || now.Before(due) {
		return false, nil
	}
	return c.failTurn(ctx, taskID, rec.Deadline, deadlineOf(turn, now))
}

// failTurn commits the failure of the turn whose record is rec.
func (c *Committer) failTurn(ctx context.Context, taskID, rec string, derr *DeadlineError) (bool, error) {
	md, _ := json.Marshal(map[string]string{DeadlineMetadata: derr.Limit})
	ev := a2a.Event{Kind: a2a.EventStatus, TaskID: taskID, Status: &a2a.TaskStatus{State: a2a.StateFailed,
		Message: &a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleAgent, Metadata: md,
			Parts: []a2a.Part{{Kind: a2a.PartText, Text: derr.Reason}}}}}
	_, err := c.append(ctx, taskID, []a2a.Event{ev}, nil, nil, rec, 0)
	var te *a2a.TransitionError
	switch {
	case errors.Is(err, taskstore.ErrTurnMoved), errors.As(err, &te), a2a.IsKind(err, a2a.KindTaskNotFound):
		return false, nil // the turn ended, or moved on, first
	case err != nil:
		return false, fmt.Errorf("ingest: fail task %s at its deadline: %w", taskID, err)
	}
	return true, nil
}

// deadlineOf is the failure of turn at now.
func deadlineOf(turn taskstore.Turn, now time.Time) *DeadlineError {
	spent := shortDuration(now.Sub(turn.Since))
	if turn.Claimed {
		return &DeadlineError{Limit: "run", Reason: fmt.Sprintf("relay: the task ran %s; the limit is %s (max run)",
			spent, shortDuration(turn.Limits.Run))}
	}
	return &DeadlineError{Limit: "wait", Reason: fmt.Sprintf("relay: the task waited %s unclaimed; the limit is %s (max wait)",
		spent, shortDuration(turn.Limits.Wait))}
}

// shortDuration writes d to the second (to the millisecond under one),
// without zero units: "10m", "1h30m", "250ms".
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// failedAtDeadline returns the refusal for work on t when relay failed it
// at a deadline, or nil.
func failedAtDeadline(t a2a.Task) *DeadlineError {
	st := t.Status
	if st.State != a2a.StateFailed || st.Message == nil || len(st.Message.Metadata) == 0 {
		return nil
	}
	var md map[string]json.RawMessage
	var limit string
	if json.Unmarshal(st.Message.Metadata, &md) != nil || json.Unmarshal(md[DeadlineMetadata], &limit) != nil || limit == "" {
		return nil
	}
	var text []string
	for _, p := range st.Message.Parts {
		if p.Kind == a2a.PartText {
			text = append(text, p.Text)
		}
	}
	return &DeadlineError{Limit: limit, Reason: strings.Join(text, " ")}
}

// DeadlineStore is what the DeadlineSweeper reads of Redis (taskstore.Turns).
type DeadlineStore interface {
	Partitions() int
	DueTurns(ctx context.Context, p, n int, now time.Time) ([]string, error)
}

// DeadlineSweeperDeps are what a DeadlineSweeper works with.
type DeadlineSweeperDeps struct {
	Store  DeadlineStore
	Commit *Committer
	// Leader elects the one sweeping instance; nil sweeps on every call
	// of Run (tests drive RunOnce).
	Leader Leader
	// Holder names this instance in the leader's lease.
	Holder string
	Log    *slog.Logger
}

// DeadlineSweeperConfig configures a DeadlineSweeper. Zero values take the
// documented defaults.
type DeadlineSweeperConfig struct {
	// Every is the time between passes (default 1s).
	Every time.Duration
	// Batch bounds the turns failed per partition and pass (default 64).
	Batch int
}

// DeadlineSweeper fails the tasks whose turn passed its limit. One
// instance at a time sweeps (a Redis lease); each pass reads each
// partition's due turns (one command per partition) and fails at most
// Batch of each.
type DeadlineSweeper struct {
	d   DeadlineSweeperDeps
	cfg DeadlineSweeperConfig
}

// NewDeadlineSweeper returns the sweeper, or an error naming what is
// missing or out of range.
func NewDeadlineSweeper(d DeadlineSweeperDeps, cfg DeadlineSweeperConfig) (*DeadlineSweeper, error) {
	switch {
	case d.Store == nil || d.Commit == nil:
		return nil, errors.New("ingest: deadline sweeper: Store and Commit are required")
	case d.Leader != nil && d.Holder == "":
		return nil, errors.New("ingest: deadline sweeper: Holder is required with a Leader")
	case cfg.Every < 0 || cfg.Batch < 0:
		return nil, fmt.Errorf("ingest: deadline sweeper: Every (%s) and Batch (%d) must not be negative", cfg.Every, cfg.Batch)
	}
	cfg.Every = cmp.Or(cfg.Every, time.Second)
	cfg.Batch = cmp.Or(cfg.Batch, 64)
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &DeadlineSweeper{d: d, cfg: cfg}, nil
}

// Run sweeps every Every while this instance leads, until ctx ends. An
// instance without any turn limit configured does not sweep (nor compete
// for the lead), and costs nothing.
func (s *DeadlineSweeper) Run(ctx context.Context) {
	if !s.d.Commit.turns {
		return
	}
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.d.Leader != nil {
				if lead, err := s.d.Leader.Lead(ctx, "deadlines", s.d.Holder, 5*s.cfg.Every); err != nil || !lead {
					continue
				}
			}
			s.RunOnce(ctx)
		}
	}
}

// RunOnce fails the due turns of every partition (up to Batch each)
// and returns how many it failed.
func (s *DeadlineSweeper) RunOnce(ctx context.Context) int {
	failed := 0
	for p := range s.d.Store.Partitions() {
		ids, err := s.d.Store.DueTurns(ctx, p, s.cfg.Batch, s.d.Commit.now())
		if err != nil {
			if ctx.Err() == nil {
				s.d.Log.WarnContext(ctx, "listing due task deadlines", "partition", p, "err", err)
			}
			continue
		}
		for _, id := range ids {
			ok, err := s.d.Commit.ExpireTurn(ctx, id)
			if err != nil && ctx.Err() == nil {
				s.d.Log.WarnContext(ctx, "failing a task at its deadline", "task_id", id, "err", err)
			}
			if ok {
				failed++
			}
		}
	}
	return failed
}
