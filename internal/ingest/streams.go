package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
	"github.com/a2arelay/relay/internal/tenant"
)

// Streams serves subscribers of task event streams (SSE). They read the
// task's Redis stream, so events committed on any instance reach them. A
// bounded number may be open at once; each holds one connection of a pool
// kept for them, so that blocked readers never starve other work.
type Streams struct {
	store    *taskstore.Store
	rdb      redis.UniversalClient
	slots    chan struct{}
	perOwner int

	mu    sync.Mutex
	open  map[string]int      // open streams by owner
	loads map[string]*loading // reads of a task for streams opening on it
}

// loading is one read of a task that the streams opening on it at once
// share: a large task is read and decoded once for them, not once each.
type loading struct {
	done chan struct{}
	view a2a.TaskView
	err  error
}

// StreamsDeps are what Streams work with.
type StreamsDeps struct {
	Store *taskstore.Store
	// RDB is the pool the streams' blocking reads go through (one
	// connection each), apart from the rest of relay's.
	RDB redis.UniversalClient
}

// StreamsConfig bounds the streams open at once.
type StreamsConfig struct {
	// Max bounds the streams open on this instance (default 256).
	Max int
	// PerOwner bounds one principal's (0: no limit).
	PerOwner int
}

// NewStreams returns Streams, or an error naming what is missing or out of
// range.
func NewStreams(d StreamsDeps, cfg StreamsConfig) (*Streams, error) {
	switch {
	case d.Store == nil || d.RDB == nil:
		return nil, errors.New("ingest: streams: Store and RDB are required")
	case cfg.Max < 0 || cfg.PerOwner < 0:
		return nil, fmt.Errorf("ingest: streams: Max (%d) and PerOwner (%d) must not be negative", cfg.Max, cfg.PerOwner)
	}
	return &Streams{store: d.Store, rdb: d.RDB, slots: make(chan struct{}, cmp.Or(cfg.Max, 256)), perOwner: cfg.PerOwner,
		open: map[string]int{}, loads: map[string]*loading{}}, nil
}

// streamRetryAfter is when a client refused a stream slot is told to try
// again: streams last long, so sooner would mostly be refused again.
const streamRetryAfter = 5 * time.Second

// Acquire takes a stream slot for the principal of ctx, or refuses with an
// *a2a.LimitError naming whose limit is reached.
func (s *Streams) Acquire(ctx context.Context) (release func(), err error) {
	owner := tenant.Owner(ctx)
	s.mu.Lock()
	// Without authentication every client is the same (empty) owner: only
	// the instance limit applies.
	if owner != "" && s.perOwner > 0 && s.open[owner] >= s.perOwner {
		s.mu.Unlock()
		return nil, &a2a.LimitError{Scope: a2a.LimitClient, RetryAfter: streamRetryAfter,
			Message: fmt.Sprintf("too many open streams for this client (%d, the maximum per client on this instance); close one or retry later", s.perOwner)}
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.mu.Unlock()
		return nil, &a2a.LimitError{Scope: a2a.LimitInstance, RetryAfter: streamRetryAfter,
			Message: "too many open streams on this relay instance; retry later"}
	}
	s.open[owner]++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.open[owner]--; s.open[owner] <= 0 {
				delete(s.open, owner)
			}
			s.mu.Unlock()
			<-s.slots
		})
	}, nil
}

// Open returns the number of open streams.
func (s *Streams) Open() int { return len(s.slots) }

// Current returns a task with the id of its last event. Streams opening on
// one task at once share one read of it: the view's task is shared, and
// read only.
func (s *Streams) Current(ctx context.Context, taskID string) (a2a.TaskView, error) {
	s.mu.Lock()
	l, ok := s.loads[taskID]
	if !ok {
		l = &loading{done: make(chan struct{})}
		s.loads[taskID] = l
		s.mu.Unlock()
		// Read for all who wait, whoever of them leaves.
		l.view, l.err = s.load(context.WithoutCancel(ctx), taskID)
		s.mu.Lock()
		delete(s.loads, taskID)
		s.mu.Unlock()
		close(l.done)
	} else {
		s.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return a2a.TaskView{}, ctx.Err()
		}
	}
	if l.err != nil {
		return a2a.TaskView{}, l.err
	}
	if !tenant.Sees(ctx, l.view.Owner) {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(taskID) // another tenant's task does not exist for this one
	}
	return l.view, nil
}

// load reads a task with the id of its last event.
func (s *Streams) load(ctx context.Context, taskID string) (a2a.TaskView, error) {
	rec, last, err := s.store.Current(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(taskID)
	}
	if err != nil {
		return a2a.TaskView{}, err
	}
	v, err := decodeRecord(rec)
	v.EventID = last
	return v, err
}

// Next returns the events after afterID, waiting up to wait for one.
func (s *Streams) Next(ctx context.Context, taskID, afterID string, wait time.Duration) ([]a2a.StreamEvent, error) {
	entries, err := s.store.ReadEvents(ctx, s.rdb, taskID, afterID, wait)
	if err != nil {
		return nil, err
	}
	out := make([]a2a.StreamEvent, 0, len(entries))
	for _, e := range entries {
		var ev a2a.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			return nil, fmt.Errorf("ingest: decode event %s: %w", e.ID, err)
		}
		out = append(out, a2a.StreamEvent{ID: e.ID, Event: ev})
	}
	return out, nil
}
