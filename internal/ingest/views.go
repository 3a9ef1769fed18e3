package ingest

import (
	"sync"

	"github.com/a2arelay/relay/internal/a2a"
)

// cachedView is a task as committed, with the version it was committed at.
type cachedView struct {
	view    a2a.TaskView
	version int64
}

// viewCache remembers the last committed view of active tasks, so that an
// agent's next event commits without reading the task first. It is bounded:
// when full it is emptied, which only costs reads.
type viewCache struct {
	mu    sync.Mutex
	max   int
	views map[string]cachedView
}

func newViewCache(max int) *viewCache {
	return &viewCache{max: max, views: make(map[string]cachedView)}
}

func (c *viewCache) get(id string) (cachedView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.views[id]
	return v, ok
}

func (c *viewCache) put(id string, v cachedView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.views) >= c.max {
		clear(c.views)
	}
	c.views[id] = v
}

func (c *viewCache) drop(id string) {
	c.mu.Lock()
	delete(c.views, id)
	c.mu.Unlock()
}
