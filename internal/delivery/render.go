package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/queue"
	"github.com/a2arelay/relay/internal/secrets"
)

// taskAfter returns the task as it was after h's event: the body of a v0.3
// or v0.1 notification. Redis keeps one copy of each task (its current
// snapshot, and a checkpoint once its event stream is trimmed), not one per
// version: an older version is folded from the stored events.
func (w *Workers) taskAfter(ctx context.Context, t queue.Token, h queue.Head, ev a2a.Event) (a2a.Task, error) {
	var task a2a.Task
	switch {
	case len(h.Snapshot) > 0: // a lane entry a previous relay wrote, with its copy
		return task, decodeInto(h.Snapshot, &task, "snapshot")
	case ev.Kind == a2a.EventTask && ev.Task != nil:
		return *ev.Task, nil // the creation, which commits the task event alone
	}
	at, err := w.q.TaskAt(ctx, t.TaskID, h.EventID, h.Version)
	if err != nil {
		return task, fmt.Errorf("read the task after event %s: %w", h.EventID, err)
	}
	if at.Snapshot != nil {
		return task, decodeInto(at.Snapshot, &task, "snapshot")
	}
	task, err = fold(at)
	if errors.Is(err, a2a.ErrNoOrigin) {
		// The events before this one are no longer stored (a stream a
		// previous relay trimmed, or a redelivery of an event older than
		// the checkpoint): the current task is the nearest we have.
		w.log.WarnContext(ctx, "task version no longer stored: sending the current one", "task_id", t.TaskID,
			"event_id", h.EventID, "version", h.Version)
		if at, err = w.q.TaskAt(ctx, t.TaskID, h.EventID, 0); err != nil {
			return task, fmt.Errorf("read the current task: %w", err)
		}
		return task, decodeInto(at.Snapshot, &task, "snapshot")
	}
	return task, err
}

// fold decodes a stored task version's base and events and applies them.
func fold(at queue.TaskAt) (a2a.Task, error) {
	var base *a2a.Task
	if at.Base != nil {
		base = new(a2a.Task)
		if err := decodeInto(at.Base, base, "checkpoint"); err != nil {
			return a2a.Task{}, err
		}
	}
	events := make([]a2a.Event, len(at.Events))
	for i, b := range at.Events {
		if err := decodeInto(b, &events[i], "event"); err != nil {
			return a2a.Task{}, err
		}
	}
	return a2a.Fold(base, events)
}

func decodeInto(b []byte, v any, what string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// configCacheSize bounds the decoded push configs kept in memory.
const configCacheSize = 4096

// configCache keeps push configs decoded and opened (secrets unsealed) by
// their stored bytes, so that the lane's later notifications do not decode
// and decrypt the same record again. A changed record is a new key; the
// cache is emptied when full.
type configCache struct {
	mu sync.Mutex
	m  map[string]a2a.PushConfig
}

// open returns the push config stored as raw.
func (c *configCache) open(ring *secrets.Ring, raw []byte) (a2a.PushConfig, error) {
	c.mu.Lock()
	cfg, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return cfg, nil
	}
	if err := decodeInto(raw, &cfg, "push config"); err != nil {
		return cfg, err
	}
	cfg, _, err := a2a.OpenPush(ring, cfg)
	if err != nil {
		return cfg, fmt.Errorf("open push config secrets: %w", err)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= configCacheSize {
		c.m = make(map[string]a2a.PushConfig, 64)
	}
	c.m[string(raw)] = cfg
	c.mu.Unlock()
	return cfg, nil
}
