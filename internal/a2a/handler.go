package a2a

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Handler serves the A2A JSON-RPC endpoint in every dialect.
type Handler struct {
	svc  Service
	card *Card
	log  *slog.Logger

	streams   Streamer
	streamCfg StreamConfig
	closing   chan struct{}
	observe   func(method string, d Dialect, code int)
}

// Observe makes the handler report every routed request: its method, the
// dialect of its answer, and the JSON-RPC error code (0 for a result).
func (h *Handler) Observe(f func(method string, d Dialect, code int)) { h.observe = f }

func (h *Handler) report(method string, d Dialect, code int) {
	if h.observe != nil {
		h.observe(method, d, code)
	}
}

// NewHandler returns a Handler over svc; card answers the extended-card methods.
func NewHandler(svc Service, card *Card, log *slog.Logger) *Handler {
	return &Handler{svc: svc, card: card, log: log, closing: make(chan struct{})}
}

// EnableStreaming serves the streaming methods over SSE from streams.
func (h *Handler) EnableStreaming(streams Streamer, cfg StreamConfig) {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultStreamMaxBuffer
	}
	h.streams, h.streamCfg = streams, cfg
}

// CloseStreams ends every open stream (at shutdown: clients resume with
// Last-Event-ID on another instance or after the restart).
func (h *Handler) CloseStreams() { close(h.closing) }

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
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: ptr(perr.toWire(V03))})
	}
	header, ok := parseVersion(c.Get("A2A-Version"))
	if !ok {
		e := Errorf(CodeVersionNotSupported, "A2A-Version %q is not supported; relay speaks 0.1, 0.3 and 1.0", c.Get("A2A-Version"))
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: ptr(e.toWire(V10))})
	}
	rt, ok := routes[req.Method]
	if !ok {
		e := Errorf(CodeMethodNotFound, "method not found: %s", req.Method)
		return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: ptr(e.toWire(cmp.Or(header, V03)))})
	}
	if rt.shared && header != "" {
		// An explicit version header names the reply dialect, whatever the task's.
		rt.dialect, rt.shared = header, false
	}
	params := req.Params
	if rt.dialect == V10 {
		// ProtoJSON: snake_case names are as good as lowerCamel ones.
		var err error
		if params, err = normalizeNames(params); err != nil {
			e, _ := AsError(err)
			h.report(req.Method, rt.dialect, e.Code)
			if rt.op == opStream || rt.op == opResubscribe {
				return h.streamError(c, id, rt.dialect, err)
			}
			return writeRPC(c, fiber.StatusOK, response{JSONRPC: "2.0", ID: id, Error: ptr(e.toWire(rt.dialect))})
		}
	}
	if rt.op == opStream || rt.op == opResubscribe {
		return h.stream(c, id, req.Method, rt, params)
	}
	result, d, err := h.call(c.UserContext(), rt, params, false)
	if err != nil {
		e, known := AsError(err)
		if !known {
			h.log.ErrorContext(c.UserContext(), "a2a request failed", "method", req.Method, "err", err)
		}
		h.report(req.Method, d, e.Code)
		return writeRPC(c, errorStatus(c, err), response{JSONRPC: "2.0", ID: id, Error: ptr(e.toWire(d))})
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
func (h *Handler) notification(c *fiber.Ctx, req request, perr *Error) error {
	noReply := func(status int) error { return c.Status(status).Send(nil) }
	if perr != nil {
		return noReply(fiber.StatusNoContent)
	}
	header, ok := parseVersion(c.Get("A2A-Version"))
	rt, known := routes[req.Method]
	if !ok || !known || rt.op == opResubscribe {
		return noReply(fiber.StatusNoContent)
	}
	if rt.shared && header != "" {
		rt.dialect, rt.shared = header, false
	}
	params := req.Params
	if rt.dialect == V10 {
		var err error
		if params, err = normalizeNames(params); err != nil {
			return noReply(fiber.StatusNoContent)
		}
	}
	if rt.op == opStream {
		rt.op = opSend
	}
	_, d, err := h.call(c.UserContext(), rt, params, true)
	if err != nil {
		e, known := AsError(err)
		if !known {
			h.log.ErrorContext(c.UserContext(), "a2a notification failed", "method", req.Method, "err", err)
		}
		h.report(req.Method, d, e.Code)
		if status := errorStatus(c, err); status != fiber.StatusOK {
			return noReply(status)
		}
		return noReply(fiber.StatusNoContent)
	}
	h.report(req.Method, d, 0)
	return noReply(fiber.StatusNoContent)
}

// call runs one operation, turning a panic into -32603. It returns the
// dialect the reply is shaped in. detached: no one waits for the result (a
// notification), so a send does not block until its task ends.
func (h *Handler) call(ctx context.Context, rt route, params json.RawMessage, detached bool) (res any, d Dialect, err error) {
	d = rt.dialect
	defer func() {
		if r := recover(); r != nil {
			h.log.ErrorContext(ctx, "panic in a2a handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, &Error{Code: CodeInternal, Message: "internal error"}
		}
	}()
	return h.dispatch(ctx, rt, params, detached)
}

func (h *Handler) dispatch(ctx context.Context, rt route, params json.RawMessage, detached bool) (any, Dialect, error) {
	cd := codecFor(rt.dialect)
	// render picks the codec of a stored task for the methods v0.1 and v0.3 share.
	render := func(v TaskView) codec {
		if rt.shared && v.Dialect == V01 {
			return codecFor(V01)
		}
		return cd
	}
	switch rt.op {
	case opSend:
		p, hl, err := decodeSend(rt.dialect, params)
		if err != nil {
			return nil, rt.dialect, err
		}
		if detached {
			p.Blocking = false
		}
		v, err := h.svc.Send(ctx, p)
		if err != nil {
			return nil, rt.dialect, inWire(cd, true, err)
		}
		return cd.encodeSendResult(WithHistory(v.Task, hl)), rt.dialect, nil
	case opGet, opCancel:
		id, hl, err := cd.decodeTaskQuery(params)
		if err != nil {
			return nil, rt.dialect, err
		}
		var v TaskView
		if rt.op == opGet {
			v, err = h.svc.GetTask(ctx, id)
		} else {
			v, err = h.svc.CancelTask(ctx, id)
		}
		if err != nil {
			return nil, rt.dialect, err
		}
		return render(v).encodeTask(WithHistory(v.Task, hl)), rt.dialect, nil
	case opList:
		return h.list(ctx, params)
	case opExtendedCard:
		if h.card == nil || !h.card.HasExtended() {
			return nil, rt.dialect, Errorf(CodeExtendedCardNotConfig, "no extended agent card is configured")
		}
		return h.card.Extended(rt.dialect), rt.dialect, nil
	}
	return h.push(ctx, rt, cd, params)
}

// push runs the push-config operations.
func (h *Handler) push(ctx context.Context, rt route, cd codec, params json.RawMessage) (any, Dialect, error) {
	d := rt.dialect
	if rt.op == opPushSet {
		c, err := cd.decodePushSet(params)
		if err != nil {
			return nil, d, err
		}
		c.Dialect = d
		if c, err = h.svc.SetPushConfig(ctx, c); err != nil {
			return nil, d, inWire(cd, false, err)
		}
		return cd.encodePush(c), d, nil
	}
	taskID, cfgID, err := cd.decodePushRef(params)
	if err != nil {
		return nil, d, err
	}
	switch rt.op {
	case opPushGet:
		c, err := h.svc.GetPushConfig(ctx, taskID, cfgID)
		if err != nil {
			return nil, d, err
		}
		return cd.encodePush(c), d, nil
	case opPushList:
		cs, err := h.svc.ListPushConfigs(ctx, taskID)
		if err != nil {
			return nil, d, err
		}
		return cd.encodePushList(cs), d, nil
	case opPushDelete:
		if err := h.svc.DeletePushConfig(ctx, taskID, cfgID); err != nil {
			return nil, d, err
		}
		return cd.encodeDeleted(), d, nil
	}
	return nil, d, Errorf(CodeMethodNotFound, "method not found")
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

// errorStatus is the HTTP status of a JSON-RPC answer carrying err: 200,
// as JSON-RPC over HTTP has it, except for a refusal by a limit, which
// says whose limit (429: the client's, 503: the instance's) and, with
// Retry-After, when to try again, so that HTTP clients back off. A
// storage budget (*QuotaError) is the client's: 429, without Retry-After,
// since only finishing or expiring tasks frees it.
func errorStatus(c *fiber.Ctx, err error) int {
	var qe *QuotaError
	if errors.As(err, &qe) {
		return fiber.StatusTooManyRequests // the client's own budget; no time to retry at
	}
	var le *LimitError
	if !errors.As(err, &le) {
		return fiber.StatusOK
	}
	if le.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
	}
	if le.Scope == LimitClient {
		return fiber.StatusTooManyRequests
	}
	return fiber.StatusServiceUnavailable
}

// resultOrNull keeps a nil result as an explicit JSON null (delete returns null).
func resultOrNull(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func ptr[T any](v T) *T { return &v }
