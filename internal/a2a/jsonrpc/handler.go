// Package jsonrpc is the JSON-RPC 2.0 binding of A2A (with its SSE
// streams), in every dialect relay speaks (v0.1, v0.3, v1.0): a thin
// adapter over the core in package a2a. It decodes the envelope, finds the
// operation a method names (routes), hands the params to a2a.Endpoint, and
// answers with the result, or with the error's JSON-RPC code and data
// (codes, toWire) and HTTP status (errorStatus).
//
// It knows nothing of Redis, tasks or limits: those are the core's, whose
// errors are kinds (a2a.Kind). What is JSON-RPC's alone stays here: the
// envelope's own errors (parse error, invalid request, method not found),
// the method names, and notifications.
//
// Adding an A2A method: the core gets it once (an a2a.Op, its case in
// Endpoint.dispatch, the Service method behind it, the dialect codecs'
// decode and encode); this binding adds its method name per dialect to
// routes; each other binding (HTTP+JSON: its route) maps it once too.
// Adding an error kind: a2a.Kind, then its code in codes here (the test
// of codes fails until it has one).
package jsonrpc

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"mime"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/telemetry"
)

// Deps are what a Handler calls.
type Deps struct {
	// Endpoint runs the operations (required).
	Endpoint *a2a.Endpoint
	// Log receives internal errors (required).
	Log *slog.Logger
	// Observe, when set, is told of every routed request: its method, the
	// dialect of its answer, and the JSON-RPC error code (0 for a result).
	Observe func(method string, d a2a.Dialect, code int)
}

// Handler serves the A2A JSON-RPC endpoint in every dialect.
type Handler struct {
	ep      *a2a.Endpoint
	log     *slog.Logger
	observe func(method string, d a2a.Dialect, code int)
}

// New returns a Handler over deps.
func New(deps Deps) (*Handler, error) {
	if deps.Endpoint == nil || deps.Log == nil {
		return nil, errors.New("jsonrpc: a Handler needs an Endpoint and a Log")
	}
	return &Handler{ep: deps.Endpoint, log: deps.Log, observe: deps.Observe}, nil
}

func (h *Handler) report(method string, d a2a.Dialect, code int) {
	if h.observe != nil {
		h.observe(method, d, code)
	}
}

// Serve is the fiber handler of the JSON-RPC endpoint (POST).
func (h *Handler) Serve(c *fiber.Ctx) error {
	if !jsonContentType(c.Get(fiber.HeaderContentType)) {
		return writeRPC(c, fiber.StatusUnsupportedMediaType, response{JSONRPC: "2.0", ID: nullID,
			Error: &wireError{Code: CodeInvalidRequest, Message: "Content-Type must be application/json"}})
	}
	req, id, perr := parseRequest(c.Body())
	if req.Notification {
		return h.notification(c, req, perr)
	}
	if perr != nil {
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: perr})
	}
	header, ok := a2a.ParseVersion(c.Get("A2A-Version"))
	if !ok {
		e := a2a.Errorf(a2a.KindVersionNotSupported, "A2A-Version %q is not supported; relay speaks 0.1, 0.3 and 1.0", c.Get("A2A-Version"))
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: ptr(toWire(e, a2a.V10))})
	}
	rt, ok := routes[req.Method]
	if !ok {
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id,
			Error: failure(CodeMethodNotFound, "method not found: "+req.Method)})
	}
	if rt.shared && header != "" {
		// An explicit version header names the reply dialect, whatever the task's.
		rt.dialect, rt.shared = header, false
	}
	call := a2a.Call{Op: rt.op, Dialect: rt.dialect, Shared: rt.shared, Params: req.Params}
	telemetry.Rename(c.UserContext(), "a2a ", req.Method)
	if rt.op.Streaming() {
		return h.stream(c, id, req.Method, call)
	}
	result, d, err := h.ep.Do(c.UserContext(), call)
	if err != nil {
		e, known := a2a.AsError(err)
		if !known {
			h.log.ErrorContext(c.UserContext(), "a2a request failed", "method", req.Method, "err", err)
		}
		h.report(req.Method, d, Code(e.Kind))
		return writeRPC(c, errorStatus(c, e), response{JSONRPC: "2.0", ID: id, Error: ptr(toWire(e, d))})
	}
	h.report(req.Method, d, 0)
	return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Result: resultOrNull(result)})
}

// notification serves a request without an id: a JSON-RPC 2.0 notification
// (§4.1), to which "the Server MUST NOT reply". It runs as a request would
// and answers HTTP 204 with no body, whatever the outcome: an unknown
// method, invalid params or an error of the method go unreported too. Only
// a refusal by a limit keeps its HTTP status (429 or 503, Retry-After), so
// that HTTP clients back off, still without a body. A send runs as a
// non-blocking one (no one waits for its result); a streaming send runs as
// that send, without a stream; a re-attach, which only reads, is not run.
// (An envelope that is not a valid request, notification or not, has
// already been answered under a null id, as §5 has it.)
func (h *Handler) notification(c *fiber.Ctx, req request, perr *wireError) error {
	noReply := func(status int) error { return c.Status(status).Send(nil) }
	if perr != nil {
		return noReply(fiber.StatusNoContent)
	}
	header, ok := a2a.ParseVersion(c.Get("A2A-Version"))
	rt, known := routes[req.Method]
	if !ok || !known || rt.op == a2a.OpSubscribe {
		return noReply(fiber.StatusNoContent)
	}
	if rt.shared && header != "" {
		rt.dialect, rt.shared = header, false
	}
	if rt.op == a2a.OpStream {
		rt.op = a2a.OpSend
	}
	_, d, err := h.ep.Do(c.UserContext(), a2a.Call{Op: rt.op, Dialect: rt.dialect, Shared: rt.shared, Params: req.Params, Detached: true})
	if err != nil {
		e, known := a2a.AsError(err)
		if !known {
			h.log.ErrorContext(c.UserContext(), "a2a notification failed", "method", req.Method, "err", err)
		}
		h.report(req.Method, d, Code(e.Kind))
		if status := errorStatus(c, e); status != fiber.StatusOK {
			return noReply(status)
		}
		return noReply(fiber.StatusNoContent)
	}
	h.report(req.Method, d, 0)
	return noReply(fiber.StatusNoContent)
}

// stream answers a streaming method: it opens the stream (errors so far
// are ordinary JSON-RPC errors, or one SSE error event when the client
// accepts only a stream) and hands the rest to the body writer.
func (h *Handler) stream(c *fiber.Ctx, id json.RawMessage, method string, call a2a.Call) error {
	call.LastEventID = c.Get("Last-Event-ID")
	st, err := h.ep.Open(c.UserContext(), call, c.Context().Conn(), framer{id: id})
	if err != nil {
		e, _ := a2a.AsError(err)
		h.report(method, call.Dialect, Code(e.Kind))
		return h.streamError(c, id, call.Dialect, e)
	}
	h.report(method, call.Dialect, 0)
	setSSEHeaders(c)
	c.Context().SetBodyStreamWriter(st.Run)
	return nil
}

// framer wraps each event of a stream in a JSON-RPC response to the
// request that opened it.
type framer struct{ id json.RawMessage }

// Envelope is a response whose result is the event:
// {"jsonrpc":"2.0","id":<id>,"result":<event>}.
func (f framer) Envelope() (head, tail []byte) {
	id, err := json.Marshal(f.id) // compacted, as in every other response
	if err != nil {
		id = nullID
	}
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...), []byte("}")
}

func (f framer) Error(d a2a.Dialect, e *a2a.Error) []byte {
	b, _ := json.Marshal(response{JSONRPC: "2.0", ID: f.id, Error: ptr(toWire(e, d))})
	return b
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
func (h *Handler) streamError(c *fiber.Ctx, id json.RawMessage, d a2a.Dialect, e *a2a.Error) error {
	r := response{JSONRPC: "2.0", ID: id, Error: ptr(toWire(e, d))}
	status := errorStatus(c, e)
	if !strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
		return writeRPC(c, status, r)
	}
	setSSEHeaders(c)
	b, _ := json.Marshal(r)
	return c.Status(status).Send(append(append([]byte("data: "), b...), '\n', '\n'))
}

// jsonContentType accepts JSON media types, and a missing Content-Type.
func jsonContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}

func writeRPC(c *fiber.Ctx, status int, r response) error {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: r.ID, Error: &wireError{Code: CodeInternal, Message: "internal error"}})
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(b)
}

// errorStatus is the HTTP status of a JSON-RPC answer carrying e: 200,
// as JSON-RPC over HTTP has it, except for a refusal by a limit, which
// says whose limit (429: the client's, 503: the instance's) and, with
// Retry-After, when to try again, so that HTTP clients back off. A
// storage budget is the client's: 429, without Retry-After, since only
// finishing or expiring tasks frees it.
func errorStatus(c *fiber.Ctx, e *a2a.Error) int {
	if e.Quota != nil {
		return fiber.StatusTooManyRequests // the client's own budget; no time to retry at
	}
	le := e.Limit
	if le == nil {
		return fiber.StatusOK
	}
	if le.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
	}
	if le.Scope == a2a.LimitClient {
		return fiber.StatusTooManyRequests
	}
	return fiber.StatusServiceUnavailable
}

// Refuse answers an A2A request relay refuses before reading it (no
// credentials, a rate limit): e's code and message under a null id, with
// the HTTP status given; with its details in data when A2A-Version says
// 1.0 (the method, which names the dialect otherwise, is not read yet).
func Refuse(c *fiber.Ctx, status int, e *a2a.Error) error {
	d := a2a.V03
	if v, _ := a2a.ParseVersion(c.Get("A2A-Version")); v == a2a.V10 {
		d = a2a.V10
	}
	return writeRPC(c, status, response{JSONRPC: "2.0", ID: nullID, Error: ptr(toWire(e, d))})
}

// RefuseTransport answers a request the HTTP server refused before it
// reached the handler (too large a body, a panic) with status and msg:
// -32603 for a status of 500 or more, -32600 otherwise.
func RefuseTransport(c *fiber.Ctx, status int, msg string) error {
	code := CodeInvalidRequest
	if status >= 500 {
		code = CodeInternal
	}
	return writeRPC(c, status, response{JSONRPC: "2.0", ID: nullID, Error: failure(code, msg)})
}

// resultOrNull keeps a nil result as an explicit JSON null (delete returns null).
func resultOrNull(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func ptr[T any](v T) *T { return &v }
