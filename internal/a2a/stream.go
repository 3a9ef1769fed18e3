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

	"github.com/gofiber/fiber/v2"
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

// subscription is one open SSE stream.
type subscription struct {
	h       *Handler
	id      json.RawMessage
	d       Dialect
	taskID  string
	after   string
	first   *TaskView // sent first unless the client resumes with Last-Event-ID
	release func()
	indexes map[string]int // v0.1 artifact indexes by artifact id
	conn    interface{ SetWriteDeadline(time.Time) error }
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

// stream answers a streaming method: it opens the subscription (errors so
// far are ordinary JSON-RPC errors, or one SSE error event when the client
// accepts only a stream) and hands the rest to the body writer.
func (h *Handler) stream(c *fiber.Ctx, id json.RawMessage, method string, rt route, params json.RawMessage) error {
	if h.streams == nil {
		h.report(method, rt.dialect, CodeUnsupportedOperation)
		return h.streamError(c, id, rt.dialect, Errorf(CodeUnsupportedOperation, "streaming is not enabled on this relay"))
	}
	release, err := h.streams.Acquire(c.UserContext())
	if err != nil {
		e, _ := AsError(err)
		h.report(method, rt.dialect, e.Code)
		return h.streamError(c, id, rt.dialect, err)
	}
	sub, err := h.safeOpen(c, rt, params)
	if err != nil {
		release()
		e, known := AsError(err)
		if !known {
			h.log.ErrorContext(c.UserContext(), "a2a stream failed to open", "err", err)
		}
		h.report(method, rt.dialect, e.Code)
		return h.streamError(c, id, rt.dialect, err)
	}
	h.report(method, rt.dialect, 0)
	sub.h, sub.id, sub.release, sub.conn = h, id, release, c.Context().Conn()
	setSSEHeaders(c)
	c.Context().SetBodyStreamWriter(sub.run)
	return nil
}

func setSSEHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
}

// streamError answers a streaming method that failed before its stream
// began: with one SSE error event when the client accepts only a stream
// (SDK clients refuse anything else), else as an ordinary JSON-RPC error.
// Either way a refusal by a limit has its HTTP status (errorStatus).
func (h *Handler) streamError(c *fiber.Ctx, id json.RawMessage, d Dialect, err error) error {
	e, _ := AsError(err)
	r := response{JSONRPC: "2.0", ID: id, Error: ptr(e.toWire(d))}
	status := errorStatus(c, err)
	if !strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
		return writeRPC(c, status, r)
	}
	setSSEHeaders(c)
	b, _ := json.Marshal(r)
	return c.Status(status).Send(append(append([]byte("data: "), b...), '\n', '\n'))
}

// safeOpen opens a subscription, turning a panic into -32603.
func (h *Handler) safeOpen(c *fiber.Ctx, rt route, params json.RawMessage) (sub *subscription, err error) {
	defer func() {
		if r := recover(); r != nil {
			h.log.ErrorContext(c.UserContext(), "panic opening an a2a stream", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			sub, err = nil, &Error{Code: CodeInternal, Message: "internal error"}
		}
	}()
	return h.openSubscription(c, rt, params)
}

// openSubscription starts or continues the task (stream methods) or finds it
// (re-attach methods) and decides where the stream begins.
func (h *Handler) openSubscription(c *fiber.Ctx, rt route, params json.RawMessage) (*subscription, error) {
	ctx := c.UserContext()
	sub := &subscription{d: rt.dialect, indexes: map[string]int{}}
	var view TaskView
	if rt.op == opStream {
		p, _, err := decodeSend(rt.dialect, params)
		if err != nil {
			return nil, err
		}
		p.Blocking = false
		if view, err = h.svc.Send(ctx, p); err != nil {
			return nil, inWire(codecFor(rt.dialect), true, err)
		}
	} else {
		taskID, _, err := codecFor(rt.dialect).decodeTaskQuery(params)
		if err != nil {
			return nil, err
		}
		if view, err = h.streams.Current(ctx, taskID); err != nil {
			return nil, err
		}
		// A finished task has nothing left to stream, unless a client resumes
		// and has yet to receive its last events.
		if st := view.Task.Status.State; st.Terminal() && rt.dialect == V10 && c.Get("Last-Event-ID") == "" {
			return nil, Errorf(CodeUnsupportedOperation, "task %s is %s: there is nothing left to subscribe to", taskID, st)
		}
	}
	sub.ended = view.Task.Status.State.Terminal()
	if rt.shared && view.Dialect == V01 {
		sub.d = V01 // tasks/resubscribe of a v0.1 task answers in v0.1
	}
	sub.taskID, sub.after, sub.first = view.Task.ID, view.EventID, &view
	for i, a := range view.Task.Artifacts {
		sub.indexes[a.ArtifactID] = i
	}
	if last := c.Get("Last-Event-ID"); last != "" {
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
			s.h.log.Error("panic in a2a stream", "task_id", s.taskID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			s.writeError(w, &Error{Code: CodeInternal, Message: "internal error"})
		}
	}()
	ctx := context.Background()
	cfg := s.h.streamCfg
	if s.first != nil {
		task := s.first.Task
		s.first = nil // the stream keeps only the rendered event, and that only while it writes it
		if done, err := s.write(w, s.after, task, nil); done || err != nil {
			return
		}
	}
	idle := time.Now()
	for {
		select {
		case <-s.h.closing:
			return
		default:
		}
		evs, err := s.h.streams.Next(ctx, s.taskID, s.after, cfg.Poll)
		if err != nil {
			s.h.log.WarnContext(ctx, "a2a stream read failed", "task_id", s.taskID, "err", err)
			s.writeError(w, &Error{Code: CodeInternal, Message: "the stream failed; resubscribe with Last-Event-ID to resume"})
			return
		}
		for i := range evs {
			e := evs[i]
			evs[i] = StreamEvent{} // sent events are not kept while later ones are written
			s.after = e.ID
			done, err := s.write(w, e.ID, Task{}, &e.Event)
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

// write sends one event (or, when ev is nil, the task itself) and reports
// whether it was the last one of the stream.
func (s *subscription) write(w *bufio.Writer, id string, task Task, ev *Event) (bool, error) {
	var result any
	var final bool
	switch {
	case ev == nil:
		result, final = s.renderTask(task), task.Status.State.Terminal() || task.Status.State.Interrupted()
	case ev.Kind == EventStatus || ev.Kind == EventArtifact:
		result = s.renderEvent(*ev)
		final = ev.Kind == EventStatus && ev.Status != nil && (ev.Status.State.Terminal() || ev.Status.State.Interrupted())
	default:
		return false, nil // the task's creation and client messages are in the task sent first
	}
	b, err := json.Marshal(response{JSONRPC: "2.0", ID: s.id, Result: result})
	if err != nil {
		return true, err
	}
	if id == "0-0" {
		id = ""
	}
	size := len(b)
	if err := s.sendFrame(w, id, b); err != nil { // b is not used again: sendFrame may free it early
		if size > s.h.streamCfg.MaxBuffer {
			s.h.log.Info("a2a stream dropped: its client did not take a large event", "task_id", s.taskID, "event_bytes", size, "err", err)
		}
		return true, err
	}
	return final, nil
}

func (s *subscription) writeError(w *bufio.Writer, e *Error) {
	b, _ := json.Marshal(response{JSONRPC: "2.0", ID: s.id, Error: ptr(e.toWire(s.d))})
	_ = s.sendFrame(w, "", b)
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
