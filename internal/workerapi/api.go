// Package workerapi serves the worker API (docs/worker-api.md): agents
// anywhere claim tasks from a queue, post their events and heartbeat over
// plain HTTP, authenticated with worker tokens that are not client
// credentials. The work itself is ingest.Pull's; this package speaks HTTP.
package workerapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/ingest"
)

// Pull is the worker side of the pull backend (ingest.Pull implements it).
type Pull interface {
	Lease() time.Duration
	Claim(ctx context.Context, queue, worker string, wait time.Duration) (*ingest.Claimed, error)
	Heartbeat(ctx context.Context, taskID, leaseID string) (ingest.Beat, error)
	PostOnce(ctx context.Context, taskID, leaseID, key string, events []a2a.Event) (ingest.Posted, error)
	Release(ctx context.Context, taskID, leaseID string) error
}

// Config configures the API.
type Config struct {
	// Tokens are the worker tokens; with none, every request is refused.
	Tokens []string
	// MaxWaiting bounds the claims long-polling at once (default 256).
	MaxWaiting int
	// MaxWait bounds a claim's waitSeconds (default 60s).
	MaxWait time.Duration
}

// API is the worker API's HTTP side.
type API struct {
	pull    Pull
	tokens  auth.Tokens
	waiting chan struct{}
	maxWait time.Duration
	log     *slog.Logger
	done    chan struct{}
}

// Deps are what the worker API works with.
type Deps struct {
	// Pull is the pull backend the API's workers claim from and post to.
	Pull Pull
	Log  *slog.Logger
}

// New returns the worker API, or an error naming what is missing or out
// of range.
func New(d Deps, cfg Config) (*API, error) {
	switch {
	case d.Pull == nil:
		return nil, errors.New("workerapi: Pull is required")
	case cfg.MaxWaiting < 0 || cfg.MaxWait < 0:
		return nil, fmt.Errorf("workerapi: MaxWaiting (%d) and MaxWait (%s) must not be negative", cfg.MaxWaiting, cfg.MaxWait)
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &API{pull: d.Pull, tokens: auth.NewTokens(cfg.Tokens), waiting: make(chan struct{}, cmp.Or(cfg.MaxWaiting, 256)),
		maxWait: cmp.Or(cfg.MaxWait, time.Minute), log: d.Log, done: make(chan struct{})}, nil
}

// Close ends the claims waiting now (relay is shutting down): they answer
// 204 and their workers claim again, from another instance.
func (a *API) Close() {
	select {
	case <-a.done:
	default:
		close(a.done)
	}
}

// Register adds the routes to f.
func (a *API) Register(f fiber.Router) {
	f.Post("/v1/queues/:queue/claim", a.auth, a.claim)
	f.Post("/v1/tasks/:id/events", a.auth, a.events)
	f.Post("/v1/tasks/:id/heartbeat", a.auth, a.heartbeat)
	f.Post("/v1/tasks/:id/release", a.auth, a.release)
}

// fail answers an error in the documented shape.
func fail(c *fiber.Ctx, status int, code, msg string) error {
	return c.Status(status).JSON(fiber.Map{"error": msg, "code": code})
}

// auth admits requests bearing a worker token (compared in constant time).
func (a *API) auth(c *fiber.Ctx) error {
	tok, ok := auth.BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok || tok == "" {
		return fail(c, fiber.StatusUnauthorized, "unauthorized", "worker API: send Authorization: Bearer <worker token>")
	}
	if !a.tokens.Contains(tok) {
		if a.tokens.Empty() {
			return fail(c, fiber.StatusUnauthorized, "unauthorized", "worker API: no worker tokens are configured (RELAY_WORKER_TOKENS)")
		}
		return fail(c, fiber.StatusUnauthorized, "unauthorized", "worker API: unknown worker token")
	}
	return c.Next()
}

// dialect is the event and task shape a request asks for: 1.0 by default.
func dialect(c *fiber.Ctx) (a2a.Dialect, error) {
	switch v := strings.TrimSpace(c.Get("A2A-Version")); v {
	case "", "1", "1.0":
		return a2a.V10, nil
	case "0.3", "0.3.0":
		return a2a.V03, nil
	default:
		return "", fmt.Errorf("A2A-Version %q: the worker API speaks 1.0 and 0.3", v)
	}
}

var queueName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// HeaderTraceParent is the W3C traceparent of a claim's answer, when relay
// traces: the claim's span, in the trace of the task's turn. A worker that
// sends it back on its posts (and starts its own spans under it) joins
// that trace (docs/worker-api.md, "Tracing").
const HeaderTraceParent = "traceparent"

// decode reads a JSON body into v; an empty body is an empty object.
func decode(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(body) == 0 {
		return nil
	}
	if !a2a.TextValid(body) {
		return errors.New("body: not valid UTF-8 (or a lone UTF-16 surrogate escaped in a string)")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("body: not the expected JSON object: %v", err)
	}
	return nil
}

func (a *API) claim(c *fiber.Ctx) error {
	queue := strings.Clone(c.Params("queue")) // fiber's Params point into a buffer reused by later requests; the work queue keeps the name (a sync.Map key)
	if !queueName.MatchString(queue) {
		return fail(c, fiber.StatusBadRequest, "bad_request", "queue: 1 to 128 letters, digits, '.', '_' or '-'")
	}
	d, err := dialect(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	var req struct {
		WorkerID    string   `json:"workerId"`
		WaitSeconds *float64 `json:"waitSeconds"`
	}
	if err := decode(c, &req); err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	wait := 30 * time.Second
	if req.WaitSeconds != nil {
		if *req.WaitSeconds < 0 || *req.WaitSeconds > a.maxWait.Seconds() {
			return fail(c, fiber.StatusBadRequest, "bad_request", fmt.Sprintf("waitSeconds: 0 to %.0f", a.maxWait.Seconds()))
		}
		wait = time.Duration(*req.WaitSeconds * float64(time.Second))
	}
	if len(req.WorkerID) > 128 || !visibleASCII(req.WorkerID) {
		return fail(c, fiber.StatusBadRequest, "bad_request", "workerId: at most 128 visible ASCII characters (no spaces)")
	}
	worker := "worker-" + req.WorkerID
	if req.WorkerID == "" {
		worker = "worker-" + uuid.NewString()
	}
	select {
	case a.waiting <- struct{}{}:
		defer func() { <-a.waiting }()
	default:
		c.Set(fiber.HeaderRetryAfter, "1")
		return fail(c, fiber.StatusServiceUnavailable, "unavailable", "too many claims are waiting on this instance; retry")
	}
	ctx, cancel := context.WithCancel(c.UserContext())
	conn := c.Context().Conn()
	watched := make(chan struct{})
	go func() { // relay shutting down, or the worker hanging up, ends the wait
		defer close(watched)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-a.done:
				cancel()
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if gone(c, conn) {
					cancel()
					return
				}
			}
		}
	}()
	got, err := a.pull.Claim(ctx, queue, worker, wait)
	cancel()
	<-watched
	if got != nil && gone(c, conn) {
		// Nobody would read the answer: hand the task to the next claim now
		// rather than after a lease.
		_ = a.pull.Release(context.WithoutCancel(ctx), got.View.Task.ID, got.Work.LeaseID)
		return nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return c.SendStatus(fiber.StatusNoContent)
		}
		a.log.WarnContext(c.UserContext(), "worker claim", "queue", queue, "err", err)
		c.Set(fiber.HeaderRetryAfter, "1")
		return fail(c, fiber.StatusServiceUnavailable, "unavailable", "cannot claim now: "+err.Error())
	}
	if got == nil {
		return c.SendStatus(fiber.StatusNoContent)
	}
	if got.TraceParent != "" {
		c.Set(HeaderTraceParent, got.TraceParent) // the worker's spans join the turn's trace under the claim
	}
	return c.JSON(fiber.Map{
		"taskId": got.View.Task.ID, "contextId": got.View.Task.ContextID, "owner": got.Owner(),
		"leaseId": got.Work.LeaseID, "leaseExpiresAt": got.ExpiresAt.UTC().Format(time.RFC3339Nano),
		"leaseSeconds": a.pull.Lease().Seconds(), "attempt": got.Work.Attempt,
		"task": a2a.EncodeTask(d, got.View.Task), "message": a2a.EncodeMessage(d, got.Message),
	})
}

type leaseReq struct {
	LeaseID string            `json:"leaseId"`
	Events  []json.RawMessage `json:"events"`
}

// gone reports whether the worker hung up while its claim waited. A
// waiting HTTP/1.1 client sends nothing, so a read that ends in EOF (not
// the short deadline) means it left. A client that did send something
// (pipelining) gets its connection closed after this answer, so the byte
// read here is never missed.
func gone(c *fiber.Ctx, conn net.Conn) bool {
	if conn == nil {
		return false
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	n, err := conn.Read(b[:])
	_ = conn.SetReadDeadline(time.Time{})
	if n > 0 {
		c.Set(fiber.HeaderConnection, "close")
		c.Context().SetConnectionClose()
		return false
	}
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// leaseOf decodes a request naming a lease.
func leaseOf(c *fiber.Ctx) (leaseReq, error) {
	var req leaseReq
	if err := decode(c, &req); err != nil {
		return req, err
	}
	if req.LeaseID == "" {
		return req, errors.New("leaseId: required (the claim's leaseId)")
	}
	return req, nil
}

func (a *API) events(c *fiber.Ctx) error {
	d, err := dialect(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	key, err := idempotencyKey(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	req, err := leaseOf(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	if len(req.Events) > 1000 {
		return fail(c, fiber.StatusBadRequest, "bad_request", "events: at most 1000 per request")
	}
	events := make([]a2a.Event, 0, len(req.Events))
	taskID := strings.Clone(c.Params("id")) // outlives the request (see claim)
	for i, raw := range req.Events {
		ev, err := a2a.DecodeEvent(d, withTaskID(d, raw, taskID))
		if err != nil {
			return fail(c, fiber.StatusBadRequest, "bad_request", fmt.Sprintf("events[%d]: %v", i, errText(err)))
		}
		if ev.TaskID != taskID {
			return fail(c, fiber.StatusBadRequest, "bad_request", fmt.Sprintf("events[%d]: taskId %q is not the task of the URL (%q)", i, ev.TaskID, taskID))
		}
		if err := ev.CheckMetadata(); err != nil {
			return fail(c, fiber.StatusBadRequest, "bad_request", fmt.Sprintf("events[%d]: %v", i, err))
		}
		events = append(events, ev)
	}
	res, err := a.pull.PostOnce(c.UserContext(), taskID, req.LeaseID, key, events)
	if errors.Is(err, ingest.ErrKeyReused) {
		return fail(c, fiber.StatusUnprocessableEntity, "idempotency_key_reused", fmt.Sprintf(
			"%s %q was first sent on task %s with other events or another lease; nothing was committed: send a new key with a new post",
			HeaderIdempotencyKey, key, taskID))
	}
	if err != nil {
		return a.taskError(c, taskID, err)
	}
	if res.Replayed {
		c.Set(HeaderReplayed, "true")
	}
	out := fiber.Map{"state": stateName(d, res.State), "released": res.Released}
	if !res.Released {
		out["leaseExpiresAt"] = res.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return c.JSON(out)
}

func (a *API) heartbeat(c *fiber.Ctx) error {
	d, err := dialect(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	req, err := leaseOf(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	taskID := strings.Clone(c.Params("id")) // outlives the request (see claim)
	beat, err := a.pull.Heartbeat(c.UserContext(), taskID, req.LeaseID)
	if err != nil {
		return a.taskError(c, taskID, err)
	}
	out := fiber.Map{"state": stateName(d, beat.State), "canceled": beat.Canceled}
	if beat.Reason != "" {
		out["reason"] = beat.Reason
	}
	if !beat.Canceled {
		out["leaseExpiresAt"] = beat.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return c.JSON(out)
}

func (a *API) release(c *fiber.Ctx) error {
	req, err := leaseOf(c)
	if err != nil {
		return fail(c, fiber.StatusBadRequest, "bad_request", err.Error())
	}
	taskID := strings.Clone(c.Params("id")) // outlives the request (see claim)
	if err := a.pull.Release(c.UserContext(), taskID, req.LeaseID); err != nil {
		return a.taskError(c, taskID, err)
	}
	return c.JSON(fiber.Map{})
}

// taskError maps the pull backend's errors to the documented answers.
func (a *API) taskError(c *fiber.Ctx, taskID string, err error) error {
	var te *a2a.TransitionError
	var bad *ingest.BadEventError
	var ae *a2a.Error
	var fe *a2a.FieldError
	var de *ingest.DeadlineError
	switch {
	case errors.As(err, &de):
		return fail(c, fiber.StatusConflict, "task_canceled", "task "+taskID+" failed at its deadline ("+de.Reason+"): stop working on it")
	case errors.Is(err, ingest.ErrLeaseLost):
		return fail(c, fiber.StatusConflict, "lease_lost", "the lease on task "+taskID+" is over (expired and taken by another worker, or finished): stop working on it")
	case errors.Is(err, ingest.ErrTaskCanceled):
		return fail(c, fiber.StatusConflict, "task_canceled", "task "+taskID+" was canceled by the client: stop working on it")
	case errors.Is(err, ingest.ErrTaskFinished):
		return fail(c, fiber.StatusConflict, "task_finished", "task "+taskID+" already reached a final state")
	case errors.As(err, &te):
		return fail(c, fiber.StatusUnprocessableEntity, "invalid_transition", te.Error())
	case errors.As(err, &bad):
		return fail(c, fiber.StatusBadRequest, "bad_request", bad.Msg)
	case errors.As(err, &fe): // a limit of the task (RELAY_TASK_MAX_ARTIFACTS, RELAY_TASK_MAX_HISTORY)
		return fail(c, fiber.StatusBadRequest, "bad_request", fe.Error())
	case errors.As(err, &ae) && ae.Kind == a2a.KindTaskNotFound:
		return fail(c, fiber.StatusNotFound, "not_found", "no task "+taskID)
	case errors.As(err, &ae) && ae.Kind == a2a.KindInvalidParams:
		return fail(c, fiber.StatusBadRequest, "bad_request", ae.Message)
	}
	a.log.WarnContext(c.UserContext(), "worker API", "task_id", taskID, "err", err)
	c.Set(fiber.HeaderRetryAfter, "1")
	return fail(c, fiber.StatusServiceUnavailable, "unavailable", "cannot do that now; retry")
}

// withTaskID fills in the taskId an event may leave out (the URL names the
// task); an event naming another task keeps it, and Post refuses it.
func withTaskID(d a2a.Dialect, raw json.RawMessage, taskID string) json.RawMessage {
	var outer map[string]json.RawMessage
	if json.Unmarshal(raw, &outer) != nil {
		return raw // the decoder says what is wrong
	}
	fill := func(obj map[string]json.RawMessage) {
		if _, ok := obj["taskId"]; !ok {
			obj["taskId"], _ = json.Marshal(taskID)
		}
	}
	if d == a2a.V03 {
		fill(outer)
	} else {
		for _, k := range []string{"statusUpdate", "artifactUpdate"} {
			var inner map[string]json.RawMessage
			if v, ok := outer[k]; ok && json.Unmarshal(v, &inner) == nil && inner != nil {
				fill(inner)
				outer[k], _ = json.Marshal(inner)
			}
		}
	}
	b, err := json.Marshal(outer)
	if err != nil {
		return raw
	}
	return b
}

// errText is an error's message without an a2a.Error's code prefix.
func errText(err error) string {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// stateName names a state as dialect d does.
func stateName(d a2a.Dialect, s a2a.TaskState) string {
	if d == a2a.V10 {
		return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
	}
	return string(s)
}

// visibleASCII tells whether s is made of visible ASCII characters only
// ('!' to '~'). A worker id names the claim's consumer in the queue and in
// the lease the queue stores ("<lease id> <entry> <consumer>"), whose parts
// are cut at spaces.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}
