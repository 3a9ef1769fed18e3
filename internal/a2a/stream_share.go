package a2a

import (
	"encoding/json"
	"errors"
	"sync"
)

// The first event of a stream is the task itself, as large as the task.
// When many streams open on one task (clients re-attaching after a
// restart, or many readers of one large task), each rendering its own copy
// would cost the task's size for every stream at once, in rendering as in
// what waits for a slow client. So the first event is rendered once per
// task, event id and dialect, without the binding's envelope, and every
// stream that sends it writes from those bytes: a stream holds a shared
// event, never a copy of its own, and only while it has more than its
// buffer limit of it left to write (sendFrame).

// sharedKey names one rendering of a task's first event.
type sharedKey struct {
	taskID, eventID string
	d               Dialect
}

// sharedEvent is an event rendered once for the streams that send it: the
// JSON of the result, which each stream's Framer envelopes.
type sharedEvent struct {
	key   sharedKey
	body  []byte
	final bool // the stream ends with it
	err   error
	done  chan struct{} // closed once body (or err) is set
	users int           // streams holding it (guarded by sharedEvents.mu)
}

// sharedEvents are the shared events some stream holds. An event is kept
// while a stream holds it, and no longer.
type sharedEvents struct {
	mu sync.Mutex
	m  map[sharedKey]*sharedEvent
}

// get returns the event of key, rendering it with render unless a stream
// holds it or is rendering it. The caller holds it until it calls put.
func (c *sharedEvents) get(key sharedKey, render func() (any, bool)) *sharedEvent {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[sharedKey]*sharedEvent{}
	}
	ev := c.m[key]
	if ev != nil {
		ev.users++
		c.mu.Unlock()
		<-ev.done
		return ev
	}
	ev = &sharedEvent{key: key, done: make(chan struct{}), users: 1}
	c.m[key] = ev
	c.mu.Unlock()
	rendered := false
	defer func() {
		// A rendering that panicked (its stream recovers, and never puts
		// the event) fails the streams waiting for it, and is not kept.
		if !rendered {
			ev.err = errSharedRender
		}
		if ev.err != nil {
			c.mu.Lock()
			delete(c.m, key) // the next stream tries again
			c.mu.Unlock()
		}
		close(ev.done)
	}()
	v, final := render()
	ev.body, ev.err = json.Marshal(v)
	ev.final = final
	rendered = true
	return ev
}

// errSharedRender fails the streams that waited for a rendering that
// panicked.
var errSharedRender = errors.New("a2a: the shared first event could not be rendered")

// put releases a stream's hold on ev: the last one frees it.
func (c *sharedEvents) put(ev *sharedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.users--; ev.users == 0 && c.m[ev.key] == ev {
		delete(c.m, ev.key)
	}
}

// held returns how many shared events streams hold.
func (c *sharedEvents) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
