package a2a

import (
	"testing"
)

// A stream whose rendering of a shared first event panics (the stream's
// writer recovers, and never lets go of the event) leaves nothing behind:
// a stream opening after it renders the event again, where it got the
// half-made event, without a body, for as long as relay ran.
func TestASharedEventWhoseRenderingPanickedIsRenderedAgain(t *testing.T) {
	t.Parallel()
	var c sharedEvents
	key := sharedKey{taskID: "t1", eventID: "5-0", d: V10}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the rendering's panic did not reach the stream")
			}
		}()
		c.get(key, func() (any, bool) { panic("render") })
	}()
	if n := c.held(); n != 0 {
		t.Fatalf("%d shared events are held after the rendering panicked, want 0", n)
	}
	ev := c.get(key, func() (any, bool) { return map[string]string{"task": "x"}, false })
	if ev.err != nil || string(ev.body) != `{"task":"x"}` {
		t.Fatalf("the next stream got %q (err %v), want the event rendered again", ev.body, ev.err)
	}
	c.put(ev)
}
