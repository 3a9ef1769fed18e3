package ingest

import (
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
)

// cachedView is a task as committed, with the version it was committed at.
type cachedView struct {
	view    a2a.TaskView
	version int64
	// snapLen is the length of the stored snapshot of version: a commit
	// counts in its owner's usage only what the snapshot grows by.
	snapLen int
	// reserve is the task's reserve at version (taskstore.Record.Reserve).
	reserve int64
	at      time.Time
}

// viewTTL bounds how long a cached view is used: long enough for an agent's
// run of events, far shorter than any retention, so a task that expired and
// was created again under the same id never matches an old view's version.
const viewTTL = 10 * time.Second

// viewCache remembers the last committed view of active tasks, so that an
// agent's next event commits without reading the task first. It is bounded:
// when full it is emptied, which only costs reads.
type viewCache struct {
	mu    sync.Mutex
	max   int
	now   func() time.Time
	views map[string]cachedView
}

func newViewCache(max int, now func() time.Time) *viewCache {
	return &viewCache{max: max, now: now, views: make(map[string]cachedView)}
}

func (c *viewCache) get(id string) (cachedView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.views[id]
	if ok && c.now().Sub(v.at) > viewTTL {
		delete(c.views, id)
		return cachedView{}, false
	}
	return v, ok
}

func (c *viewCache) put(id string, v cachedView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v.at = c.now()
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
