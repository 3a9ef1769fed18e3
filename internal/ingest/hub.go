package ingest

import "sync"

// Hub tells waiters in this process that a task was committed to. Waiters on
// other instances do not hear it; they fall back to polling the store.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
}

// NewHub returns an empty Hub.
func NewHub() *Hub { return &Hub{waiters: map[string]map[chan struct{}]struct{}{}} }

// Watch returns a channel that receives (without blocking the committer)
// after each commit to taskID, and a function to stop watching.
func (h *Hub) Watch(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.waiters[taskID] == nil {
		h.waiters[taskID] = map[chan struct{}]struct{}{}
	}
	h.waiters[taskID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.waiters[taskID], ch)
		if len(h.waiters[taskID]) == 0 {
			delete(h.waiters, taskID)
		}
		h.mu.Unlock()
	}
}

// Notify wakes every watcher of taskID.
func (h *Hub) Notify(taskID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters[taskID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
