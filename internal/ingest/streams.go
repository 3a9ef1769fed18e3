package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/queue"
)

// Streams serves subscribers of task event streams (SSE). They read the
// task's Redis stream, so events committed on any instance reach them. A
// bounded number may be open at once; each holds one connection of a pool
// kept for them, so that blocked readers never starve other work.
type Streams struct {
	store *queue.Store
	rdb   redis.UniversalClient
	slots chan struct{}
}

// NewStreams returns Streams reading through rdb, at most max at once.
func NewStreams(store *queue.Store, rdb redis.UniversalClient, max int) *Streams {
	return &Streams{store: store, rdb: rdb, slots: make(chan struct{}, max)}
}

// Acquire takes a stream slot; ok is false when all are taken.
func (s *Streams) Acquire() (release func(), ok bool) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, true
	default:
		return nil, false
	}
}

// Open returns the number of open streams.
func (s *Streams) Open() int { return len(s.slots) }

// Current returns a task with the id of its last event.
func (s *Streams) Current(ctx context.Context, taskID string) (a2a.TaskView, error) {
	rec, last, err := s.store.Current(ctx, taskID)
	if errors.Is(err, queue.ErrNotFound) {
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
