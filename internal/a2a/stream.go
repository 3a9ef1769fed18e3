package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// StreamEvent is one entry of a task's event stream.
type StreamEvent struct {
	ID    string
	Event Event
}

// Streamer is what SSE subscriptions need (ingest.Streams implements it).
type Streamer interface {
	// Acquire takes a stream slot for the principal of ctx; the error
	// (a *LimitError) says which limit refused it.
	Acquire(ctx context.Context) (release func(), err error)
	Current(ctx context.Context, taskID string) (TaskView, error)
	Next(ctx context.Context, taskID, afterID string, wait time.Duration) ([]StreamEvent, error)
}

// StreamConfig tunes SSE subscriptions.
type StreamConfig struct {
	// KeepAlive is the idle time after which a ": ping" comment is sent (default 15s).
	KeepAlive time.Duration
	// Poll bounds each blocking read, and so how soon a stream notices shutdown (default 1s).
	Poll time.Duration
	// MaxBuffer is how many bytes of an event a stream may hold for a
	// client that is not taking them (default DefaultStreamMaxBuffer).
	// Within it a client has writeTimeout to take each chunk; beyond it
	// (the rest of a larger event) slowClientGrace, then it is dropped.
	MaxBuffer int
}

var streamIDPattern = regexp.MustCompile(`^\d+-\d+$`)

// StreamConn is the connection a stream writes to: each write gets a
// deadline; a net.Conn also tells when its client left.
type StreamConn interface{ SetWriteDeadline(time.Time) error }

// Framer shapes what a stream sends in its binding's envelope: each event
// is a result (the event's JSON, in the stream's dialect) between head and
// tail (JSON-RPC wraps it in a response, HTTP+JSON sends it as it is), so
// that streams can share an event's bytes; Error is the event that ends a
// stream.
type Framer interface {
	Envelope() (head, tail []byte)
	Error(d Dialect, e *Error) []byte
}

// EventSender is a Framer that sends each event itself (gRPC's messages)
// rather than in the SSE frame the stream writes: Send gets the event's
// JSON, in the stream's dialect, and must not keep it past its return (a
// stream's first event is shared with other streams).
type EventSender interface {
	Framer
	Send(event []byte) error
}

// Stream is one open SSE stream: Run writes it.
type Stream struct{ sub *subscription }

// Dialect is the dialect the stream speaks (for a shared method, the task's).
func (s *Stream) Dialect() Dialect { return s.sub.d }

// Run writes the stream to w until the task's final event, the client
// leaves, or relay shuts down (CloseStreams); it frees the stream's slot.
func (s *Stream) Run(w *bufio.Writer) { s.sub.run(w) }

// subscription is one open SSE stream.
type subscription struct {
	ep      *Endpoint
	fr      Framer
	d       Dialect
	taskID  string
	after   string
	first   *TaskView // sent first unless the client resumes with Last-Event-ID
	release func()
	indexes map[string]int // v0.1 artifact indexes by artifact id
	conn    StreamConn
	// ended: the task was finished when the stream opened, so once the
	// events after the resume point are sent there is no more to wait for.
	ended bool
}

// gone reports whether the client closed its connection. While a stream
// runs, its writer owns the connection and an SSE client sends nothing
// more, so a read that ends in EOF (rather than the short deadline) means
// the client left: its slot and Redis connection are freed within a poll.
func (s *subscription) gone() bool {
	c, ok := s.conn.(net.Conn)
	if !ok {
		return false
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	_ = c.SetReadDeadline(time.Time{})
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// Open opens the stream of a streaming operation (OpStream starts or
// continues the task, OpSubscribe finds it) on conn, framed by fr: it takes
// a stream slot and decides where the stream begins. Errors so far (a
// limit, the task not found, bad params, streaming off) are the binding's
// to answer; nothing is written yet.
func (e *Endpoint) Open(ctx context.Context, c Call, conn StreamConn, fr Framer) (st *Stream, err error) {
	if c.Params, err = c.params(); err != nil {
		return nil, err
	}
	if e.streams == nil {
		return nil, Errorf(KindUnsupportedOperation, "streaming is not enabled on this relay")
	}
	release, err := e.streams.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := e.safeOpen(ctx, c)
	if err != nil {
		release()
		if _, known := AsError(err); !known {
			e.log.ErrorContext(ctx, "a2a stream failed to open", "err", err)
		}
		return nil, err
	}
	sub.ep, sub.fr, sub.release, sub.conn = e, fr, release, conn
	return &Stream{sub: sub}, nil
}

// safeOpen opens a subscription, turning a panic into KindInternal.
func (e *Endpoint) safeOpen(ctx context.Context, c Call) (sub *subscription, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.log.ErrorContext(ctx, "panic opening an a2a stream", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			sub, err = nil, &Error{Kind: KindInternal, Message: "internal error"}
		}
	}()
	return e.openSubscription(ctx, c)
}

// openSubscription starts or continues the task (stream methods) or finds it
// (re-attach methods) and decides where the stream begins.
func (e *Endpoint) openSubscription(ctx context.Context, c Call) (*subscription, error) {
	sub := &subscription{d: c.Dialect, indexes: map[string]int{}}
	var view TaskView
	if c.Op == OpStream {
		p, _, err := decodeSend(c.Dialect, c.Params)
		if err != nil {
			return nil, err
		}
		p.Blocking = false
		if view, err = e.svc.Send(ctx, p); err != nil {
			return nil, inWire(codecFor(c.Dialect), true, err)
		}
	} else {
		taskID, _, err := codecFor(c.Dialect).decodeTaskQuery(c.Params)
		if err != nil {
			return nil, err
		}
		if view, err = e.streams.Current(ctx, taskID); err != nil {
			return nil, err
		}
		// A finished task has nothing left to stream, unless a client resumes
		// and has yet to receive its last events.
		if st := view.Task.Status.State; st.Terminal() && c.Dialect == V10 && c.LastEventID == "" {
			return nil, Errorf(KindUnsupportedOperation, "task %s is %s: there is nothing left to subscribe to", taskID, st)
		}
	}
	sub.ended = view.Task.Status.State.Terminal()
	if c.Shared && view.Dialect == V01 {
		sub.d = V01 // tasks/resubscribe of a v0.1 task answers in v0.1
	}
	sub.taskID, sub.after, sub.first = view.Task.ID, view.EventID, &view
	for i, a := range view.Task.Artifacts {
		sub.indexes[a.ArtifactID] = i
	}
	if last := c.LastEventID; last != "" {
		if !streamIDPattern.MatchString(last) || (view.EventID != "" && streamIDLess(view.EventID, last)) {
			return nil, InvalidParams("Last-Event-ID %q is not an event id relay sent for this task", last)
		}
		sub.after, sub.first = last, nil
	}
	if sub.after == "" {
		sub.after = "0-0"
	}
	return sub, nil
}

// run writes the stream until the task's final event, the client leaves,
// or relay shuts down.
func (s *subscription) run(w *bufio.Writer) {
	defer s.release()
	defer func() {
		// The writer runs outside the handler, where no middleware recovers:
		// a panic here must end this stream, never the process.
		if r := recover(); r != nil {
			s.ep.log.Error("panic in a2a stream", "task_id", s.taskID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			s.writeError(w, &Error{Kind: KindInternal, Message: "internal error"})
		}
	}()
	ctx := context.Background()
	cfg := s.ep.streamCfg
	if s.first != nil {
		if done, err := s.writeFirst(w); done || err != nil {
			return
		}
	}
	idle := time.Now()
	for {
		select {
		case <-s.ep.closing:
			return
		default:
		}
		evs, err := s.ep.streams.Next(ctx, s.taskID, s.after, cfg.Poll)
		if err != nil {
			s.ep.log.WarnContext(ctx, "a2a stream read failed", "task_id", s.taskID, "err", err)
			s.writeError(w, &Error{Kind: KindInternal, Message: "the stream failed; resubscribe with Last-Event-ID to resume"})
			return
		}
		for i := range evs {
			e := evs[i]
			evs[i] = StreamEvent{} // sent events are not kept while later ones are written
			s.after = e.ID
			done, err := s.write(w, e.ID, e.Event)
			if done || err != nil {
				return
			}
			idle = time.Now()
		}
		if len(evs) == 0 && (s.ended || s.gone()) {
			return
		}
		if len(evs) == 0 && time.Since(idle) >= cfg.KeepAlive {
			if _, err := w.WriteString(": ping\n\n"); err != nil || s.flushHolding(w, 0) != nil {
				return // the client left
			}
			idle = time.Now()
		}
	}
}

// writeFirst sends the task, the stream's first event, rendered once for
// all the streams that send it at once (sharedEvents), and reports whether
// it was the last one of the stream.
func (s *subscription) writeFirst(w *bufio.Writer) (bool, error) {
	v := s.first
	s.first = nil // the stream keeps only the shared event, and that only while it writes it
	key := sharedKey{taskID: s.taskID, eventID: v.EventID, d: s.d}
	ev := s.ep.shared.get(key, func() (any, bool) {
		st := v.Task.Status.State
		return s.renderTask(v.Task), st.Terminal() || st.Interrupted()
	})
	v = nil
	if ev.err != nil {
		s.ep.shared.put(ev)
		return true, ev.err
	}
	final := ev.final
	err := s.send(w, s.after, ev.body, func() { s.ep.shared.put(ev) })
	return final, err
}

// write sends one event and reports whether it was the last one of the
// stream.
func (s *subscription) write(w *bufio.Writer, id string, ev Event) (bool, error) {
	if ev.Kind != EventStatus && ev.Kind != EventArtifact {
		return false, nil // the task's creation and client messages are in the task sent first
	}
	final := ev.Kind == EventStatus && ev.Status != nil && (ev.Status.State.Terminal() || ev.Status.State.Interrupted())
	b, err := json.Marshal(s.renderEvent(ev))
	if err != nil {
		return true, err
	}
	return final, s.send(w, id, b, nil) // b is not used again: sendFrame may free it early
}

// send writes an event's JSON in the stream's envelope; release (when set)
// lets go of body, an event other streams share (see sendFrame).
func (s *subscription) send(w *bufio.Writer, id string, body []byte, release func()) error {
	if id == "0-0" {
		id = ""
	}
	if es, ok := s.fr.(EventSender); ok {
		defer func() {
			if release != nil {
				release()
			}
		}()
		return es.Send(body)
	}
	size := len(body)
	head, tail := s.fr.Envelope()
	if err := s.sendFrame(w, id, head, body, tail, release); err != nil {
		if size > s.ep.streamCfg.MaxBuffer {
			s.ep.log.Info("a2a stream dropped: its client did not take a large event", "task_id", s.taskID, "event_bytes", size, "err", err)
		}
		return err
	}
	return nil
}

func (s *subscription) writeError(w *bufio.Writer, e *Error) {
	_ = s.sendFrame(w, "", nil, s.fr.Error(s.d, e), nil, nil)
}

// streamIDLess orders Redis stream ids ("ms-seq").
func streamIDLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	if len(am) != len(bm) {
		return len(am) < len(bm)
	}
	if am != bm {
		return am < bm
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return as < bs
}
