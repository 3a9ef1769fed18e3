package a2a

import (
	"bufio"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Streams opening at once on one task, at one event and in one dialect,
// render its first event once and share it; it is freed when the last of
// them lets go, and rendered again for a stream opening after that.
func TestStreamsShareTheirFirstEvent(t *testing.T) {
	t.Parallel()
	const streams = 8
	var c sharedEvents
	var renders atomic.Int32
	gate := make(chan struct{})
	render := func() (any, bool) {
		renders.Add(1)
		<-gate
		return map[string]string{"task": strings.Repeat("x", 1<<20)}, false
	}
	key := sharedKey{taskID: "t1", eventID: "5-0", d: V10}
	got := make([]*sharedEvent, streams)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = c.get(key, render) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for waiting := 0; waiting < streams; { // all have asked before the event is rendered
		if time.Now().After(deadline) {
			close(gate)
			t.Fatalf("%d of %d streams wait for the event being rendered, the others render their own", waiting, streams)
		}
		time.Sleep(time.Millisecond)
		c.mu.Lock()
		if ev := c.m[key]; ev != nil {
			waiting = ev.users
		}
		c.mu.Unlock()
	}
	close(gate)
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Fatalf("%d streams opening at once rendered the first event %d times, want once", streams, n)
	}
	for i, ev := range got {
		if ev != got[0] || ev.err != nil || len(ev.body) < 1<<20 {
			t.Fatalf("stream %d got event %p (err %v, %d bytes), want the shared %p", i, ev, ev.err, len(ev.body), got[0])
		}
	}
	other := c.get(sharedKey{taskID: "t1", eventID: "5-0", d: V03}, render)
	if n := renders.Load(); n != 2 || other == got[0] {
		t.Fatalf("another dialect's stream shares the event (%d renders)", n)
	}
	c.put(other)
	for i, ev := range got {
		if c.held() != 1 {
			t.Fatalf("with %d of %d streams holding it, %d events are held, want 1", streams-i, streams, c.held())
		}
		c.put(ev)
	}
	if c.held() != 0 {
		t.Fatalf("once every stream let go, %d events are held, want none", c.held())
	}
	if c.get(key, render); renders.Load() != 3 {
		t.Fatalf("a stream opening after the others let go rendered %d times in all, want 3", renders.Load())
	}
}

// heldWire records, for each write a stream hands the server, how much of
// the frame was still to go and whether the stream still held the shared
// event; it fails from write failAt on (0: never).
type heldWire struct {
	frame, sent int
	released    *bool
	failAt      int
	writes      int
	heldLeft    []int // bytes left to go at each write made holding the event
	freeLeft    []int // the same, once the stream let go
}

func (w *heldWire) Write(p []byte) (int, error) {
	if w.writes++; w.failAt > 0 && w.writes >= w.failAt {
		return 0, errors.New("the client left")
	}
	if *w.released {
		w.freeLeft = append(w.freeLeft, w.frame-w.sent)
	} else {
		w.heldLeft = append(w.heldLeft, w.frame-w.sent)
	}
	w.sent += len(p)
	return len(p), nil
}

func (w *heldWire) SetWriteDeadline(time.Time) error { return nil }

// A stream whose event is larger than its buffer limit holds the shared
// event only while more than the limit of it is still to go: then it keeps
// a copy of the rest, at most the limit, and lets the event go, once; a
// stream that fails midway lets it go too.
func TestALargeSharedEventIsHeldWithinTheLimit(t *testing.T) {
	t.Parallel()
	const limit, size = 64 << 10, 1 << 20
	ep, err := NewEndpoint(EndpointDeps{Service: nopService{}, Streams: noEvents{}, Log: slog.New(slog.DiscardHandler)},
		StreamConfig{MaxBuffer: limit})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat("x", size))
	for _, failAt := range []int{0, 3} {
		released, releases := false, 0
		head, tail := []byte(`{"jsonrpc":"2.0","id":1,"result":`), []byte("}")
		frame := len("id: 1-0\ndata: ") + len(head) + size + len(tail) + 2
		w := &heldWire{frame: frame, released: &released, failAt: failAt}
		sub := &subscription{ep: ep, fr: rpcFramer{id: []byte("1")}, d: V10, taskID: "t1", conn: w}
		err := sub.sendFrame(bufio.NewWriterSize(w, 4<<10), "1-0", head, body, tail, func() { released = true; releases++ })
		if (err != nil) != (failAt > 0) {
			t.Fatalf("failAt %d: sendFrame = %v", failAt, err)
		}
		if releases != 1 {
			t.Fatalf("failAt %d: the stream let go of the shared event %d times, want once", failAt, releases)
		}
		if failAt > 0 {
			continue
		}
		for _, left := range w.heldLeft[1:] { // (the first write is the head, before the first chunk)
			if left <= limit+len(tail)+2 {
				t.Fatalf("the stream still held the shared event with %d bytes to go, within its limit %d", left, limit)
			}
		}
		if len(w.freeLeft) == 0 || w.freeLeft[0] > limit+len(tail)+2 {
			t.Fatalf("the stream let go of the shared event with %v bytes to go, want at most its limit %d", w.freeLeft, limit)
		}
	}
}
