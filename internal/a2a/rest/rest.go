// Package rest is the HTTP+JSON (REST) binding of A2A (spec §11), for
// v1.0 and for v0.3's /v1/... paths: a thin adapter over the core in
// package a2a, as a2a/jsonrpc is. Each route names an operation; the
// binding takes the request from the body and the URL (path and query
// fields go in a2a.Call.Fields), runs it on the a2a.Endpoint, and answers
// with the result as it is, or with the error as a google.rpc.Status body
// and the HTTP status spec §5.4 gives its kind (statuses). Streams are SSE
// whose data are the events themselves.
//
// The dialect is the A2A-Version header's: 1.0, or 0.3 when the header is
// absent (spec §3.2.6: a request without it is taken as 0.3) or says 0.3.
// ListTasks exists only in v1.0 and is always answered in it. v0.1 has no
// HTTP+JSON binding. v0.3 here is ProtoJSON of v0.3's a2a.proto, which the
// Endpoint does not speak: v03.go translates its requests, answers and
// stream events with the codec of a2a (V03ProtoRequest, V03ProtoResult,
// V03ProtoEvent) and answers its errors as {"code", "message"}.
//
// Adding a method: its route in Register, mapped to the a2a.Op the core
// has for it. Adding an error kind: its status in statuses (the test of
// statuses fails until it has one).
package rest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"mime"
	"net/url"
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
	// Observe, when set, is told of every routed request: its operation's
	// name (the v1.0 method name), the dialect of its answer, and its error
	// (nil for a result).
	Observe func(method string, d a2a.Dialect, err *a2a.Error)
}

// Handler serves the A2A HTTP+JSON routes.
type Handler struct {
	ep      *a2a.Endpoint
	log     *slog.Logger
	observe func(method string, d a2a.Dialect, err *a2a.Error)
}

// New returns a Handler over deps.
func New(deps Deps) (*Handler, error) {
	if deps.Endpoint == nil || deps.Log == nil {
		return nil, errors.New("rest: a Handler needs an Endpoint and a Log")
	}
	return &Handler{ep: deps.Endpoint, log: deps.Log, observe: deps.Observe}, nil
}

// Prefix is where the routes are mounted: v0.3's paths start with it, and
// a v1.0 card names it in the interface URL.
const Prefix = "/v1"

// Register mounts the routes under Prefix on r, each behind mw (the
// guard: authentication, tenant, rate limit).
func (h *Handler) Register(r fiber.Router, mw ...fiber.Handler) {
	route := func(method, path string, op a2a.Op, name string) {
		handlers := append(append([]fiber.Handler{}, mw...), func(c *fiber.Ctx) error { return h.serve(c, op, name) })
		r.Add(method, Prefix+path, handlers...)
	}
	route(fiber.MethodPost, "/message\\:send", a2a.OpSend, "SendMessage")
	route(fiber.MethodPost, "/message\\:stream", a2a.OpStream, "SendStreamingMessage")
	route(fiber.MethodGet, "/tasks", a2a.OpList, "ListTasks")
	// /tasks/{id}, /tasks/{id}:cancel and /tasks/{id}:subscribe share one
	// path segment: the verb after the last colon picks the operation.
	route(fiber.MethodGet, "/tasks/:task", opTaskGET, "")
	route(fiber.MethodPost, "/tasks/:task", opTaskPOST, "")
	route(fiber.MethodPost, "/tasks/:task/pushNotificationConfigs", a2a.OpPushSet, "CreateTaskPushNotificationConfig")
	route(fiber.MethodGet, "/tasks/:task/pushNotificationConfigs", a2a.OpPushList, "ListTaskPushNotificationConfigs")
	route(fiber.MethodGet, "/tasks/:task/pushNotificationConfigs/:config", a2a.OpPushGet, "GetTaskPushNotificationConfig")
	route(fiber.MethodDelete, "/tasks/:task/pushNotificationConfigs/:config", a2a.OpPushDelete, "DeleteTaskPushNotificationConfig")
	route(fiber.MethodGet, "/extendedAgentCard", a2a.OpExtendedCard, "GetExtendedAgentCard")
	route(fiber.MethodGet, "/card", opCardV03, "GetExtendedAgentCard") // v0.3's path of it
}

// Pseudo-operations of the routes on /tasks/{id...}: the verb decides.
const (
	opTaskGET  a2a.Op = -1
	opTaskPOST a2a.Op = -2
	opCardV03  a2a.Op = -3
)

// Owns reports whether path is one of the binding's routes, so that errors
// raised before a route ran (too large a body) are answered in its shape.
func Owns(path string) bool {
	rest, ok := strings.CutPrefix(path, Prefix+"/")
	if !ok {
		return false
	}
	switch {
	case rest == "message:send", rest == "message:stream", rest == "tasks", rest == "extendedAgentCard", rest == "card":
		return true
	case strings.HasPrefix(rest, "tasks/"):
		segs := strings.Split(strings.TrimPrefix(rest, "tasks/"), "/")
		return len(segs) == 1 || segs[1] == "pushNotificationConfigs"
	}
	return false
}

func (h *Handler) report(method string, d a2a.Dialect, err *a2a.Error) {
	if h.observe != nil && method != "" {
		h.observe(method, d, err)
	}
}

// serve answers one route.
func (h *Handler) serve(c *fiber.Ctx, op a2a.Op, name string) error {
	d, ok := dialect(c.Get("A2A-Version"))
	if !ok {
		e := a2a.Errorf(a2a.KindVersionNotSupported, "A2A-Version %q is not supported over HTTP+JSON; relay speaks 0.3 and 1.0 here", c.Get("A2A-Version"))
		return h.fail(c, name, a2a.V10, e)
	}
	call := a2a.Call{Op: op, Dialect: d, Fields: map[string]any{}}
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodDelete {
		if !jsonContentType(c.Get(fiber.HeaderContentType)) {
			return h.fail(c, name, d, a2a.Errorf(a2a.KindInvalidParams, "Content-Type must be application/json or application/a2a+json"))
		}
		if body := c.Body(); len(strings.TrimSpace(string(body))) > 0 {
			if !a2a.TextValid(body) {
				return h.fail(c, name, d, a2a.InvalidParams("the body is not valid UTF-8 (or escapes a lone UTF-16 surrogate)"))
			}
			call.Params = json.RawMessage(body)
		}
	}
	var err error
	if call.Op, name, err = h.target(c, call, op, name); err != nil {
		return h.fail(c, name, d, err)
	}
	if call.Op == a2a.OpList {
		call.Dialect = a2a.V10
	}
	if call.Dialect == a2a.V03 { // ProtoJSON of v0.3's proto, or the object model (v03.go)
		if call.Params, err = a2a.V03ProtoRequest(call.Op, call.Params); err != nil {
			return h.fail(c, name, d, err)
		}
	}
	if err := fields(c, call); err != nil {
		return h.fail(c, name, call.Dialect, err)
	}
	telemetry.Rename(c.UserContext(), "a2a ", name)
	if call.Op.Streaming() {
		return h.stream(c, name, call)
	}
	result, rd, err := h.ep.Do(c.UserContext(), call)
	if err != nil {
		return h.fail(c, name, rd, err)
	}
	h.report(name, rd, nil)
	if rd == a2a.V03 {
		if result, err = a2a.V03ProtoResult(call.Op, result); err != nil {
			return h.fail(c, name, rd, err)
		}
	}
	if result == nil { // a deleted push config: google.protobuf.Empty
		result = struct{}{}
	}
	if card, ok := result.(json.RawMessage); ok && call.Op == a2a.OpExtendedCard {
		return writeCard(c, card)
	}
	return writeJSON(c, fiber.StatusOK, result)
}

// ServeCard is the handler of /.well-known/agent-card.json and agent.json:
// the public card with Cache-Control and an ETag (A2A §8.6), 304 to an
// If-None-Match that names it.
func ServeCard(card *a2a.Card) fiber.Handler {
	return func(c *fiber.Ctx) error {
		body, etag, maxAge, err := card.Served()
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age="+strconv.Itoa(int(maxAge.Seconds())))
		c.Set(fiber.HeaderETag, etag)
		if a2a.ETagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
			return c.SendStatus(fiber.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	}
}

// writeCard answers with the caller's extended card, which only that
// caller may cache (A2A §8.6): revalidated each time with its ETag, and
// 304 to an If-None-Match that names it.
func writeCard(c *fiber.Ctx, card json.RawMessage) error {
	etag := a2a.ETag(card)
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	c.Set(fiber.HeaderETag, etag)
	if a2a.ETagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(card)
}

// target resolves the operation of a /tasks/{id...} route from its verb.
func (h *Handler) target(c *fiber.Ctx, call a2a.Call, op a2a.Op, name string) (a2a.Op, string, error) {
	if op == opCardV03 {
		if call.Dialect != a2a.V03 {
			return op, "", fiber.ErrNotFound
		}
		return a2a.OpExtendedCard, name, nil
	}
	if op != opTaskGET && op != opTaskPOST {
		return op, name, nil
	}
	seg, err := url.PathUnescape(c.Params("task"))
	if err != nil {
		return op, "", a2a.InvalidParams("the task id in the URL is not escaped correctly")
	}
	id, verb := seg, ""
	if i := strings.LastIndexByte(seg, ':'); i >= 0 {
		switch seg[i+1:] {
		case "cancel", "subscribe":
			id, verb = seg[:i], seg[i+1:]
		}
	}
	call.Fields["id"] = id
	switch {
	case op == opTaskGET && verb == "":
		return a2a.OpGet, "GetTask", nil
	case verb == "subscribe": // GET in the proto's annotation, POST in the spec's text
		return a2a.OpSubscribe, "SubscribeToTask", nil
	case op == opTaskPOST && verb == "cancel":
		return a2a.OpCancel, "CancelTask", nil
	}
	return op, "", fiber.ErrNotFound
}

// fields puts the URL's path and query parameters of call's route in
// call.Fields, named as the dialect's params name them.
func fields(c *fiber.Ctx, call a2a.Call) error {
	task, err := url.PathUnescape(c.Params("task"))
	if err != nil {
		return a2a.InvalidParams("the task id in the URL is not escaped correctly")
	}
	config, err := url.PathUnescape(c.Params("config"))
	if err != nil {
		return a2a.InvalidParams("the push config id in the URL is not escaped correctly")
	}
	v03 := call.Dialect == a2a.V03
	switch call.Op {
	case a2a.OpPushSet:
		call.Fields["taskId"] = task
	case a2a.OpPushList:
		call.Fields[pick(v03, "id", "taskId")] = task
	case a2a.OpPushGet, a2a.OpPushDelete:
		call.Fields[pick(v03, "id", "taskId")] = task
		call.Fields[pick(v03, "pushNotificationConfigId", "id")] = config
	}
	return query(c, call)
}

func pick(v03 bool, a, b string) string {
	if v03 {
		return a
	}
	return b
}

// Query parameters of the GET routes and their JSON types (spec §11.5:
// numbers and booleans as decimal and lowercase strings); others are
// strings. A status given as a number is the enum's number.
var (
	intQuery  = map[string]bool{"pageSize": true, "page_size": true, "historyLength": true, "history_length": true}
	boolQuery = map[string]bool{"includeArtifacts": true, "include_artifacts": true}
)

// query adds the query parameters of a GET to call.Fields, each under its
// name (snake_case names are read as ProtoJSON reads them, once the
// Endpoint normalizes the params).
func query(c *fiber.Ctx, call a2a.Call) error {
	if c.Method() != fiber.MethodGet {
		return nil
	}
	for k, v := range c.Context().QueryArgs().All() {
		name, val := string(k), string(v)
		if !a2a.TextValid(k) || !a2a.TextValid(v) {
			return a2a.InvalidParams("a query parameter is not valid UTF-8")
		}
		if _, dup := call.Fields[name]; dup {
			return a2a.InvalidParams("query parameter %s is given twice", name)
		}
		switch {
		case intQuery[name]:
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil {
				return a2a.InvalidParams("%s must be an integer, got %q", name, val)
			}
			call.Fields[name] = n
		case boolQuery[name]:
			if val != "true" && val != "false" {
				return a2a.InvalidParams("%s must be true or false, got %q", name, val)
			}
			call.Fields[name] = val == "true"
		case name == "status":
			if n, err := strconv.Atoi(val); err == nil {
				call.Fields[name] = n
				continue
			}
			call.Fields[name] = val
		default:
			call.Fields[name] = val
		}
	}
	return nil
}

// dialect maps the A2A-Version header to the dialect of the request.
func dialect(h string) (a2a.Dialect, bool) {
	d, ok := a2a.ParseVersion(h)
	switch {
	case !ok || d == a2a.V01:
		return "", false
	case d == "":
		return a2a.V03, true
	}
	return d, true
}

// stream answers a streaming route: errors before the stream begins are
// ordinary error answers; then SSE whose data are the events.
func (h *Handler) stream(c *fiber.Ctx, name string, call a2a.Call) error {
	call.LastEventID = c.Get("Last-Event-ID")
	st, err := h.ep.Open(c.UserContext(), call, c.Context().Conn(), framer{})
	if err != nil {
		return h.fail(c, name, call.Dialect, err)
	}
	h.report(name, st.Dialect(), nil)
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	run := st.Run
	if st.Dialect() == a2a.V03 {
		run = v03Events(st.Run)
	}
	c.Context().SetBodyStreamWriter(run)
	return nil
}

// framer sends each event as it is, and an error that ends a stream as
// the error body.
type framer struct{}

func (framer) Envelope() (head, tail []byte) { return nil, nil }

func (framer) Error(d a2a.Dialect, e *a2a.Error) []byte {
	b, _ := json.Marshal(errorOf(d, e, statuses[e.Kind]))
	return b
}

// fail answers err.
func (h *Handler) fail(c *fiber.Ctx, name string, d a2a.Dialect, err error) error {
	if errors.Is(err, fiber.ErrNotFound) {
		return RefuseTransport(c, fiber.StatusNotFound, "no such route: "+c.Method()+" "+c.Path())
	}
	e, known := a2a.AsError(err)
	if !known {
		h.log.ErrorContext(c.UserContext(), "a2a request failed", "method", name, "err", err)
	}
	h.report(name, d, e)
	s := statusOf(c, e)
	return writeJSON(c, s.code, errorOf(d, e, s))
}

// status is the HTTP status of each kind (spec §5.4) with its
// google.rpc.Code name. KindLimited says whose limit: see Status.
type status struct {
	code int
	name string
}

// statuses maps every kind of the core (read-only); a test walks
// a2a.Kinds through it.
var statuses = map[a2a.Kind]status{
	a2a.KindInternal:                  {fiber.StatusInternalServerError, "INTERNAL"},
	a2a.KindInvalidParams:             {fiber.StatusBadRequest, "INVALID_ARGUMENT"},
	a2a.KindTaskNotFound:              {fiber.StatusNotFound, "NOT_FOUND"},
	a2a.KindTaskNotCancelable:         {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindPushNotSupported:          {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindUnsupportedOperation:      {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindContentTypeNotSupported:   {fiber.StatusBadRequest, "INVALID_ARGUMENT"},
	a2a.KindInvalidAgentResponse:      {fiber.StatusInternalServerError, "INTERNAL"},
	a2a.KindExtendedCardNotConfigured: {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindExtensionRequired:         {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindVersionNotSupported:       {fiber.StatusBadRequest, "FAILED_PRECONDITION"},
	a2a.KindLimited:                   {fiber.StatusTooManyRequests, "RESOURCE_EXHAUSTED"},
	a2a.KindUnauthenticated:           {fiber.StatusUnauthorized, "UNAUTHENTICATED"},
}

// statusOf is the HTTP status of an answer carrying e (spec §5.4); a kind
// without one is 500. A refusal by a limit says whose (429: the client's,
// 503: the instance's) and, with Retry-After, when to try again; a storage
// budget is the client's, 429 without Retry-After.
func statusOf(c *fiber.Ctx, e *a2a.Error) status {
	s, ok := statuses[e.Kind]
	if !ok {
		s = statuses[a2a.KindInternal]
	}
	if le := e.Limit; le != nil {
		if le.RetryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
		}
		if le.Scope == a2a.LimitInstance {
			s = status{fiber.StatusServiceUnavailable, "UNAVAILABLE"}
		}
	}
	return s
}

// errorBody is google.rpc.Status as HTTP+JSON answers an error (spec §11.6).
type errorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
		Details []any  `json:"details,omitempty"`
	} `json:"error"`
}

func body(e *a2a.Error, s status) errorBody {
	var b errorBody
	b.Error.Code, b.Error.Status, b.Error.Message, b.Error.Details = s.code, s.name, e.Message, e.Details()
	return b
}

// Refuse answers a request relay refuses before it reaches a route (no
// credentials, a rate limit) with e's body and the HTTP status given.
func Refuse(c *fiber.Ctx, code int, e *a2a.Error) error {
	s := statusOf(c, e)
	s.code = code
	return writeJSON(c, code, errorOf(requestDialect(c), e, s))
}

// RefuseTransport answers a request the HTTP server refused before it
// reached a route (too large a body, no such route) with status and msg,
// and the ErrorInfo reason the JSON-RPC binding's envelope errors would
// have (METHOD_NOT_FOUND, INVALID_REQUEST, INTERNAL_ERROR).
func RefuseTransport(c *fiber.Ctx, code int, msg string) error {
	kind := a2a.KindInvalidParams
	name, reason := "INVALID_ARGUMENT", "INVALID_REQUEST"
	switch {
	case code == fiber.StatusNotFound:
		name, reason = "NOT_FOUND", "METHOD_NOT_FOUND"
	case code == fiber.StatusRequestEntityTooLarge:
		name = "RESOURCE_EXHAUSTED"
	case code >= 500:
		kind, name, reason = a2a.KindInternal, "INTERNAL", "INTERNAL_ERROR"
	}
	e := a2a.Errorf(kind, "%s", msg)
	if requestDialect(c) == a2a.V03 {
		return writeJSON(c, code, errorOf(a2a.V03, e, status{code, name}))
	}
	b := body(e, status{code, name})
	b.Error.Details = []any{a2a.ErrorInfo{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: reason, Domain: "a2a-protocol.org"}}
	return writeJSON(c, code, b)
}

func writeJSON(c *fiber.Ctx, code int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		code = fiber.StatusInternalServerError
		b, _ = json.Marshal(body(&a2a.Error{Kind: a2a.KindInternal, Message: "internal error"}, statuses[a2a.KindInternal]))
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(code).Send(b)
}

// jsonContentType accepts JSON media types (application/a2a+json among
// them), and a missing Content-Type.
func jsonContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}
