package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/secrets"
	"github.com/a2arelay/relay/internal/taskstore"
)

// render returns the body of h's notification in dialect d: from the
// cache when another config of the task in the same dialect, or an earlier
// attempt, rendered it already.
func (w *Workers) render(ctx context.Context, t outbox.Token, h outbox.Head, d a2a.Dialect) (a2a.Notification, error) {
	key := bodyKey{task: t.TaskID, event: h.EventID, dialect: d}
	if n, ok := w.bodies.get(key); ok {
		return n, nil
	}
	if d == a2a.V10 {
		// Most v1.0 bodies are read straight from the stored event's bytes;
		// the few it does not read go the decoding way below.
		if n, ok := a2a.EncodeStoredV10(h.Event); ok {
			w.bodies.put(key, n)
			return n, nil
		}
	}
	var ev a2a.Event
	if err := decodeInto(h.Event, &ev, "event"); err != nil {
		return a2a.Notification{}, err
	}
	var snap a2a.Task
	switch {
	case d == a2a.V10 && ev.Task != nil:
		snap = *ev.Task // v1.0 sends the snapshot only for the task event, which carries it
	case d != a2a.V10:
		var err error
		if snap, err = w.taskAfter(ctx, t, h, ev); err != nil {
			return a2a.Notification{}, err
		}
	}
	n, err := a2a.EncodeNotification(d, ev, snap)
	if err != nil {
		return n, fmt.Errorf("encode notification: %w", err)
	}
	w.bodies.put(key, n)
	return n, nil
}

// bodyCacheBytes bounds the bodies the cache keeps.
const bodyCacheBytes = 16 << 20

// bodyCache keeps rendered notification bodies by (task, event, dialect),
// bounded in bytes (emptied when full): a body depends on nothing else, so
// the configs of a task that share a dialect, and the retries of a
// notification, render it once.
type bodyCache struct {
	mu    sync.Mutex
	m     map[bodyKey]a2a.Notification
	bytes int
}

type bodyKey struct {
	task, event string
	dialect     a2a.Dialect
}

func (c *bodyCache) get(k bodyKey) (a2a.Notification, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[k]
	return n, ok
}

func (c *bodyCache) put(k bodyKey, n a2a.Notification) {
	size := len(n.Body) + len(k.task) + len(k.event)
	if size > bodyCacheBytes/8 {
		return // a large body is not worth evicting everything for
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+size > bodyCacheBytes {
		c.m, c.bytes = make(map[bodyKey]a2a.Notification, 256), 0
	}
	if _, ok := c.m[k]; !ok {
		c.m[k] = n
		c.bytes += size
	}
}

// taskAfter returns the task as it was after h's event: the body of a v0.3
// or v0.1 notification. Redis keeps one copy of each task (its current
// snapshot, and a checkpoint once its event stream is compacted), not one
// per version: an older version is folded from the stored events, which
// gives it exactly for every event still stored.
func (w *Workers) taskAfter(ctx context.Context, t outbox.Token, h outbox.Head, ev a2a.Event) (a2a.Task, error) {
	var task a2a.Task
	switch {
	case len(h.Snapshot) > 0: // a lane entry a previous relay wrote, with its copy
		return task, decodeInto(h.Snapshot, &task, "snapshot")
	case ev.Kind == a2a.EventTask && ev.Task != nil:
		return *ev.Task, nil // the creation, which commits the task event alone
	}
	at, err := w.tasks.TaskAt(ctx, t.TaskID, h.EventID, h.Version)
	if errors.Is(err, taskstore.ErrNotFound) {
		return task, fmt.Errorf("read the task after event %s: %w", h.EventID, err) // gone: permanent
	}
	if err != nil {
		return task, fmt.Errorf("%w: read the task after event %s: %w", errTransient, h.EventID, err)
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
	m  map[string]openConfig
}

// openConfig is a stored push config, opened, and why it may not be used.
type openConfig struct {
	a2a.PushConfig
	// invalid: the config fails a2a.PushConfig.Validate. The relay that
	// stored it did not check what this one does (it is older); it is not
	// sent on (see Policy.decide).
	invalid error
	// endpoint is health.EndpointID(Owner, URL): the endpoint whose health
	// the attempts count to (the config's owner's own).
	endpoint string
}

// open returns the push config stored as raw.
func (c *configCache) open(ring *secrets.Ring, raw []byte) (openConfig, error) {
	c.mu.Lock()
	oc, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return oc, nil
	}
	var cfg a2a.PushConfig
	if err := decodeInto(raw, &cfg, "push config"); err != nil {
		return oc, err
	}
	cfg, _, err := a2a.OpenPush(ring, cfg)
	if err != nil {
		return oc, fmt.Errorf("open push config secrets: %w", err)
	}
	oc = openConfig{PushConfig: cfg, invalid: cfg.Validate(), endpoint: health.EndpointID(cfg.Owner, cfg.URL)}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= configCacheSize {
		c.m = make(map[string]openConfig, 64)
	}
	c.m[string(raw)] = oc
	c.mu.Unlock()
	return oc, nil
}
