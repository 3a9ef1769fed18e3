package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/queue"
	"github.com/a2arelay/relay/internal/secrets"
)

// taskAfter returns the task as it was after h's event: the body of a v0.3
// or v0.1 notification. Redis keeps one copy of each task (its current
// snapshot, and a checkpoint once its event stream is compacted), not one
// per version: an older version is folded from the stored events, which
// gives it exactly for every event still stored.
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
	if task, err = a2a.FoldStored(at.Base, at.Events); err != nil {
		// Never another version under this notification's id: the
		// attempt fails (dead letter) with the reason.
		return task, fmt.Errorf("rebuild the task after event %s (version %d): %w", h.EventID, h.Version, err)
	}
	return task, nil
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
