package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/failpoint"
	"github.com/a2arelay/relay/internal/secrets"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// Agent is the backend that works on tasks. Start must return at once; the
// agent reports progress through the Committer.
type Agent interface {
	// Validate checks a message before a task is created or continued for it.
	Validate(msg a2a.Message) error
	// Start begins (or continues) work on task, prompted by msg. An error
	// means the agent cannot take the task: it fails.
	Start(task a2a.Task, msg a2a.Message) error
	// Cancel stops work on a task that was canceled.
	Cancel(taskID string)
}

// Queued is an Agent whose turns wait in a work queue until a worker claims
// them (Pull.Queue, and the Router in front of such backends). The Service
// records the offer of each turn with the commit that makes the turn
// claimable, in the same atomic step, then makes it (Offer, in place of
// Start) and drops the record: a relay that dies in between leaves the
// record, and the Reofferer makes the offer. An agent that is not Queued
// (in-process, not queue-based) has no such record.
type Queued interface {
	// QueueOf names the work queue of task's turn prompted by msg, or ""
	// when that turn is not queued. It is asked before the commit (task
	// may not be stored yet; its history starts with its first message).
	QueueOf(task a2a.Task, msg a2a.Message) string
	// Offer puts task's turn prompted by msg in its work queue: o, as the
	// commit recorded it (its queue is QueueOf's; its Turn numbers it).
	Offer(ctx context.Context, task a2a.Task, msg a2a.Message, o taskstore.Offer) error
}

// TaskStore is what the Service reads of Redis beyond the commit path
// (taskstore.Store implements it).
type TaskStore interface {
	Store
	Exists(ctx context.Context, taskID string) (bool, error)
	ScanIndex(ctx context.Context, owner string, cursor *taskstore.IndexEntry, limit int) ([]taskstore.IndexEntry, error)
	LoadMany(ctx context.Context, owner string, taskIDs []string) (map[string]taskstore.Record, error)
	IndexSize(ctx context.Context, owner string) (int64, error)
	Unindex(ctx context.Context, owner, taskID string) error
	SetPushConfig(ctx context.Context, owner, taskID, id string, config []byte, accept string, max int) error
	ReplacePushConfig(ctx context.Context, taskID, id string, config []byte) error
	PushConfig(ctx context.Context, taskID, id string) ([]byte, error)
	PushConfigs(ctx context.Context, taskID string) (map[string]string, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
}

// Config configures a Service. Zero values take the documented defaults.
type Config struct {
	// BlockingTimeout bounds a blocking send (default 30s).
	BlockingTimeout time.Duration
	// PollInterval is how often a blocking send re-reads a task that another
	// instance may be changing (default 250ms).
	PollInterval time.Duration
	// MaxPushConfigs caps the push configs of one task (default 16).
	MaxPushConfigs int
	// CheckURL refuses webhook URLs relay must not POST to (the SSRF guard's
	// check of literal addresses); nil checks only the URL's shape.
	CheckURL func(string) error
	// Gate, when set, may hold the creation of a new task while delivery
	// is behind (backpressure.Pressure implements it).
	Gate Gate
	// Secrets seals push config tokens and credentials at rest (nil: they
	// are stored in plain text).
	Secrets *secrets.Ring
	// Message bounds the messages clients send (zero: no bound).
	Message a2a.MessageLimits
	// Quota, when set, holds clients to their storage budgets: a send or a
	// push config past one is refused before anything is stored.
	Quota Quota
	// Outage is how handing a task to its agent rides out Redis outages
	// (the offer, and failing the task when the offer cannot be made).
	Outage Outage
	// ListCountMax bounds the index entries a filtered ListTasks reads to
	// count its matches (totalSize), so that one request cannot make relay
	// load a client's every task (default 2,000).
	ListCountMax int
}

// Quota is a client's storage budgets (quota.Quota implements it).
type Quota interface {
	// Admit checks that owner may store bytes more (and a task more when
	// newTask) and counts them; past a budget it returns *a2a.QuotaError.
	Admit(ctx context.Context, owner string, bytes int64, newTask bool) error
}

// admit asks the quota, when there is one.
func (s *Service) admit(ctx context.Context, bytes int64, newTask bool) error {
	if s.cfg.Quota == nil {
		return nil
	}
	return s.cfg.Quota.Admit(ctx, tenant.Owner(ctx), bytes, newTask)
}

// Estimator is an Agent that tells, before a turn runs, about how much it
// will store in answer to a message. Admission (Config.Quota) charges a
// send its message and this estimate, and the commit that starts the turn
// counts the estimate in the client's usage, as a reserve that the turn's
// commits draw on and its end gives back (taskstore's Reservations): a
// client's storage budget refuses the sends whose answers would pass it,
// on every instance, rather than only those that come after the answers
// are stored. An Agent that is not one (a worker queue, an upstream agent)
// is charged for its output as it is committed.
type Estimator interface {
	// Estimate is the output of t's turn prompted by msg (t may not be
	// stored yet: a new task's history starts with msg).
	Estimate(t a2a.Task, msg a2a.Message) Output
}

// Output is what an agent's turn stores.
type Output struct {
	// Bytes counts its events and the task's growth, as the usage counts
	// them (taskstore's usage.go).
	Bytes int64
	// Events is how many events it commits: each makes a notification
	// per push config of the task.
	Events int
}

// output is what admission charges for the agent's answer to msg in task
// t with configs push configs: the agent's estimate (Estimator), with
// taskstore.NotificationBytes per notification it makes; 0 without a
// quota or an estimate.
func (s *Service) output(t a2a.Task, msg a2a.Message, configs int) int64 {
	e, ok := s.agent.(Estimator)
	if s.cfg.Quota == nil || !ok {
		return 0
	}
	out := e.Estimate(t, msg)
	return out.Bytes + int64(out.Events)*int64(configs)*taskstore.NotificationBytes
}

// sendBytes is what a send is counted as storing before its agent
// answers: the message twice (the snapshot's history and the event) and
// its inline push config.
func sendBytes(p a2a.SendParams, msgBytes int) int64 {
	n := 2 * int64(msgBytes)
	if p.PushConfig != nil {
		if b, err := json.Marshal(p.PushConfig); err == nil {
			n += int64(len(b))
		}
	}
	return n
}

// Gate is backpressure on new tasks.
type Gate interface {
	Admit(ctx context.Context) (time.Duration, error)
}

// Service implements a2a.Service on top of the commit path.
type Service struct {
	store  TaskStore
	commit *Committer
	hub    *Hub
	agent  Agent
	cfg    Config
	log    *slog.Logger
}

// ServiceDeps are what a Service works with.
type ServiceDeps struct {
	Store  TaskStore
	Commit *Committer
	Hub    *Hub
	// Agent runs the turns (a Router in front of the backends).
	Agent Agent
	Log   *slog.Logger
}

// NewService returns a Service, or an error naming what is missing or out
// of range.
func NewService(d ServiceDeps, cfg Config) (*Service, error) {
	switch {
	case d.Store == nil || d.Commit == nil || d.Hub == nil || d.Agent == nil:
		return nil, errors.New("ingest: service: Store, Commit, Hub and Agent are required")
	case cfg.BlockingTimeout < 0 || cfg.PollInterval < 0 || cfg.MaxPushConfigs < 0 || cfg.ListCountMax < 0:
		return nil, fmt.Errorf("ingest: service: BlockingTimeout (%s), PollInterval (%s), MaxPushConfigs (%d) and ListCountMax (%d) must not be negative",
			cfg.BlockingTimeout, cfg.PollInterval, cfg.MaxPushConfigs, cfg.ListCountMax)
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	cfg.BlockingTimeout = cmp.Or(cfg.BlockingTimeout, 30*time.Second)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 250*time.Millisecond)
	cfg.MaxPushConfigs = cmp.Or(cfg.MaxPushConfigs, 16)
	cfg.ListCountMax = cmp.Or(cfg.ListCountMax, 2000)
	if cfg.Outage.Log == nil {
		cfg.Outage.Log = d.Log
	}
	return &Service{store: d.Store, commit: d.Commit, hub: d.Hub, agent: d.Agent, cfg: cfg, log: d.Log}, nil
}

// Send creates or continues a task with p.Message and starts the agent on it.
func (s *Service) Send(ctx context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	if err := validateMessage(p.Message); err != nil {
		return a2a.TaskView{}, err
	}
	size, err := s.cfg.Message.Check(p.Message)
	if err != nil {
		return a2a.TaskView{}, err
	}
	if err := p.Validate(); err != nil {
		return a2a.TaskView{}, err
	}
	if err := s.agent.Validate(p.Message); err != nil {
		return a2a.TaskView{}, err
	}
	if p.PushConfig != nil {
		if err := s.checkPushURL(p.PushConfig.URL); err != nil {
			return a2a.TaskView{}, err
		}
	}
	var view a2a.TaskView
	bytes := sendBytes(p, size)
	if p.TaskID == "" {
		view, err = s.create(ctx, p, bytes)
	} else {
		view, err = s.continueTask(ctx, p, bytes)
		if a2a.IsKind(err, a2a.KindTaskNotFound) && p.ClientChosenID {
			view, err = s.create(ctx, p, bytes)
			if errors.Is(err, taskstore.ErrConflict) { // created concurrently: continue it
				view, err = s.continueTask(ctx, p, bytes)
			}
		}
	}
	if err != nil || !p.Blocking {
		return view, err
	}
	return s.waitSettled(ctx, view)
}

func (s *Service) create(ctx context.Context, p a2a.SendParams, bytes int64) (a2a.TaskView, error) {
	configs := 0
	if p.PushConfig != nil {
		configs = 1
	}
	reserve := s.output(a2a.Task{History: []a2a.Message{p.Message}}, p.Message, configs)
	if err := s.admit(ctx, bytes+reserve, true); err != nil {
		return a2a.TaskView{}, err
	}
	if s.cfg.Gate != nil {
		if _, err := s.cfg.Gate.Admit(ctx); err != nil {
			return a2a.TaskView{}, err
		}
	}
	id := cmp.Or(p.TaskID, uuid.NewString())
	msg := p.Message
	msg.TaskID = id
	msg.ContextID = cmp.Or(p.ContextID, msg.ContextID, uuid.NewString())
	task := a2a.Task{
		ID: id, ContextID: msg.ContextID, Status: a2a.TaskStatus{State: a2a.StateSubmitted},
		History: []a2a.Message{msg}, Metadata: p.Metadata,
	}
	var push []a2a.PushConfig
	if p.PushConfig != nil {
		sealed, err := a2a.SealPush(s.cfg.Secrets, normalizePush(*p.PushConfig, id, p.Dialect, tenant.Owner(ctx)))
		if err != nil {
			return a2a.TaskView{}, wrapStore("seal push config", err)
		}
		push = append(push, sealed)
	}
	var view a2a.TaskView
	var err error
	offer := s.offerOf(task, msg)
	view, err = s.commit.create(ctx, task, p.Dialect, push, offer, reserve)
	if err != nil {
		return a2a.TaskView{}, err
	}
	return s.start(ctx, view, msg, offer), nil
}

// offerOf is the offer of task's turn prompted by msg when the agent
// queues it (Queued), or nil.
func (s *Service) offerOf(task a2a.Task, msg a2a.Message) *taskstore.Offer {
	q, ok := s.agent.(Queued)
	if !ok {
		return nil
	}
	if name := q.QueueOf(task, msg); name != "" {
		return &taskstore.Offer{Queue: name, TaskID: task.ID, MessageID: msg.MessageID}
	}
	return nil
}

// start hands a task turn to the agent; a task the agent cannot take fails
// rather than waiting forever. Both writes ride out a Redis outage
// (Config.Outage): the hand-over is retried up to the bound, and failing
// the task keeps trying while relay runs. The client's going away does
// not stop them: the task was acknowledged when it was committed. A turn
// whose offer the commit recorded is the exception: it is offered
// (Queued.Offer, retried the same way), its record stays when the offer
// fails, and the Reofferer offers it later; once the offer is made the
// record goes.
func (s *Service) start(ctx context.Context, view a2a.TaskView, msg a2a.Message, offer *taskstore.Offer) a2a.TaskView {
	failpoint.Hit(failpoint.AfterCommit)
	bg := context.WithoutCancel(ctx)
	if offer != nil {
		err := s.cfg.Outage.Retry(bg, "offering a task's turn to its work queue", func(ctx context.Context) error {
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return s.agent.(Queued).Offer(octx, view.Task, msg, *offer) // (offerOf made offer: the agent is Queued)
		})
		if err != nil {
			s.log.WarnContext(ctx, "offering a task's turn to its work queue; it is offered again later", "task_id", view.Task.ID,
				"queue", offer.Queue, "err", err)
			return view
		}
		s.commit.DropOfferSoon(*offer) // (a record left, its removal failing, is offered again later)
		return view
	}
	err := s.cfg.Outage.Retry(bg, "handing a task to its agent", func(context.Context) error {
		return s.agent.Start(view.Task, msg)
	})
	if err == nil {
		return view
	}
	s.log.ErrorContext(ctx, "agent backend refused a task", "task_id", view.Task.ID, "err", err)
	text := "relay could not hand the task to its agent: " + err.Error()
	var failed a2a.TaskView
	cerr := s.cfg.Outage.Persist(bg, "failing a task its agent refused", func(ctx context.Context) (err error) {
		failed, err = s.commit.Append(ctx, view.Task.ID, a2a.Event{Kind: a2a.EventStatus, TaskID: view.Task.ID,
			Status: &a2a.TaskStatus{State: a2a.StateFailed, Message: &a2a.Message{MessageID: uuid.NewString(), Role: a2a.RoleAgent,
				Parts: []a2a.Part{{Kind: a2a.PartText, Text: text}}}}})
		return err
	})
	if cerr != nil {
		s.log.ErrorContext(ctx, "failing a task its agent refused", "task_id", view.Task.ID, "err", cerr)
		return view
	}
	return failed
}

func (s *Service) continueTask(ctx context.Context, p a2a.SendParams, bytes int64) (a2a.TaskView, error) {
	// The owner first: the contextId check's error names the task's
	// context, which only its owner may learn.
	cur, err := s.GetTask(ctx, p.TaskID)
	if err != nil {
		return cur, err
	}
	ctxID := cmp.Or(p.ContextID, p.Message.ContextID)
	if ctxID != "" && ctxID != cur.Task.ContextID {
		return cur, a2a.InvalidParams("contextId %q does not match task %s (contextId %q)", ctxID, p.TaskID, cur.Task.ContextID)
	}
	if max := s.commit.limits.MaxHistory; len(cur.Task.History) >= max && !cur.Task.Status.State.Terminal() {
		return cur, HistoryFull(cur.Task.ID, max)
	}
	var reserve int64
	if s.output(cur.Task, p.Message, 0) > 0 { // (the configs are read only when there is an output to charge)
		configs, err := s.store.PushConfigs(ctx, cur.Task.ID)
		if err != nil {
			return cur, wrapStore("read push configs", err)
		}
		n := len(configs)
		if p.PushConfig != nil {
			n++ // (errs high by one when it replaces a config)
		}
		reserve = s.output(cur.Task, p.Message, n)
	}
	if err := s.admit(ctx, bytes+reserve, false); err != nil {
		return cur, err
	}
	msg := p.Message
	msg.TaskID, msg.ContextID = cur.Task.ID, cur.Task.ContextID
	events := []a2a.Event{{Kind: a2a.EventMessage, TaskID: msg.TaskID, Message: &msg}}
	if cur.Task.Status.State.Interrupted() {
		events = append(events, a2a.Event{Kind: a2a.EventStatus, TaskID: msg.TaskID, Status: &a2a.TaskStatus{State: a2a.StateWorking}})
	}
	if p.PushConfig != nil {
		if _, err := s.SetPushConfig(ctx, normalizePush(*p.PushConfig, cur.Task.ID, p.Dialect, tenant.Owner(ctx))); err != nil {
			return cur, err
		}
	}
	offer := s.offerOf(cur.Task, msg)
	a, err := s.commit.append(ctx, p.TaskID, events, nil, offer, "", reserve)
	view := a.View
	if offer != nil {
		*offer = a.offer
	}
	var te *a2a.TransitionError
	if errors.As(err, &te) {
		return cur, a2a.Errorf(a2a.KindUnsupportedOperation, "task %s is %s, a terminal state: it accepts no more messages", p.TaskID, te.From)
	}
	if err != nil {
		return cur, err
	}
	return s.start(ctx, view, msg, offer), nil
}

// waitSettled waits until the task is terminal or interrupted, or the
// blocking timeout passes, and returns the task as it then stands.
func (s *Service) waitSettled(ctx context.Context, view a2a.TaskView) (a2a.TaskView, error) {
	woke, stop := s.hub.Watch(view.Task.ID)
	defer stop()
	deadline := time.NewTimer(s.cfg.BlockingTimeout)
	defer deadline.Stop()
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	for {
		latest, err := s.GetTask(ctx, view.Task.ID)
		if err != nil {
			return view, err
		}
		view = latest
		if st := view.Task.Status.State; st.Terminal() || st.Interrupted() {
			return view, nil
		}
		select {
		case <-woke:
		case <-poll.C:
		case <-deadline.C:
			return view, nil
		case <-ctx.Done():
			return view, ctx.Err()
		}
	}
}

// GetTask returns a stored task of the principal of ctx. Another
// principal's task is not found, exactly like one that does not exist.
func (s *Service) GetTask(ctx context.Context, id string) (a2a.TaskView, error) {
	rec, err := s.store.Load(ctx, id)
	if errors.Is(err, taskstore.ErrNotFound) {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
	}
	if err != nil {
		return a2a.TaskView{}, err
	}
	v, err := decodeRecord(rec)
	if err == nil && !tenant.Sees(ctx, v.Owner) {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
	}
	return v, err
}

// CancelTask moves an active task to canceled and stops its agent.
func (s *Service) CancelTask(ctx context.Context, id string) (a2a.TaskView, error) {
	if _, err := s.GetTask(ctx, id); err != nil {
		return a2a.TaskView{}, err
	}
	view, err := s.commit.Append(ctx, id, a2a.Event{Kind: a2a.EventStatus, TaskID: id, Status: &a2a.TaskStatus{State: a2a.StateCanceled}})
	var te *a2a.TransitionError
	if errors.As(err, &te) {
		return view, a2a.Errorf(a2a.KindTaskNotCancelable, "task %s is %s and cannot be canceled", id, te.From)
	}
	if err != nil {
		return view, err
	}
	s.agent.Cancel(id)
	return view, nil
}

func validateMessage(m a2a.Message) error {
	switch {
	case m.Role != a2a.RoleUser:
		return a2a.InvalidParams("message.role must be user, got %q", m.Role)
	case len(m.Parts) == 0:
		return a2a.InvalidParams("message.parts must not be empty")
	case m.MessageID == "":
		return a2a.InvalidParams("message.messageId is required")
	}
	return nil
}

// checkPushURL asks the SSRF guard about a webhook URL whose shape
// a2a.PushConfig.Validate has checked.
func (s *Service) checkPushURL(raw string) error {
	if s.cfg.CheckURL != nil {
		if err := s.cfg.CheckURL(raw); err != nil {
			return a2a.InvalidParams("push notification url refused: %v (allow its range with RELAY_WEBHOOK_ALLOW_CIDRS)", err)
		}
	}
	return nil
}

func wrapStore(op string, err error) error { return fmt.Errorf("ingest: %s: %w", op, err) }
