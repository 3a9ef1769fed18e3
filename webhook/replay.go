package webhook

import (
	"sync"
	"time"
)

// replayCache remembers processed notification ids for a window, at most
// capacity of them: when full, the oldest is forgotten first. With a window
// <= 0 it remembers nothing. It also tracks the ids a middleware handler is
// working on.
type replayCache struct {
	window   time.Duration
	capacity int

	mu       sync.Mutex
	until    map[string]time.Time // id -> remembered until
	queue    []replayEntry        // in the order added, from head on
	head     int
	inflight map[string]bool // ids a middleware handler is working on
}

type replayEntry struct {
	id    string
	until time.Time
}

func newReplayCache(window time.Duration, capacity int) *replayCache {
	return &replayCache{window: window, capacity: capacity,
		until: map[string]time.Time{}, inflight: map[string]bool{}}
}

// seen reports whether id was added and is still remembered at now.
func (c *replayCache) seen(id string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.until[id]
	return ok && now.Before(u)
}

// add remembers id until now + window (an id remembered already keeps its
// time), forgetting expired ids and, when full, the oldest.
func (c *replayCache) add(id string, now time.Time) {
	if c.window <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.head < len(c.queue) && !now.Before(c.queue[c.head].until) {
		c.pop()
	}
	if u, ok := c.until[id]; ok && now.Before(u) {
		return
	}
	for len(c.until) >= c.capacity && c.head < len(c.queue) {
		c.pop()
	}
	u := now.Add(c.window)
	c.until[id] = u
	c.queue = append(c.queue, replayEntry{id: id, until: u})
}

// pop forgets the oldest entry (unless its id was added again since).
func (c *replayCache) pop() {
	e := c.queue[c.head]
	c.queue[c.head] = replayEntry{}
	c.head++
	if u, ok := c.until[e.id]; ok && u.Equal(e.until) {
		delete(c.until, e.id)
	}
	if c.head >= 1024 && c.head*2 >= len(c.queue) {
		c.queue = append([]replayEntry(nil), c.queue[c.head:]...)
		c.head = 0
	}
}

// begin marks id as being handled; false when it already is.
func (c *replayCache) begin(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[id] {
		return false
	}
	c.inflight[id] = true
	return true
}

// end unmarks id.
func (c *replayCache) end(id string) {
	c.mu.Lock()
	delete(c.inflight, id)
	c.mu.Unlock()
}
