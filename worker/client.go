package worker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client talks to one relay's worker API on behalf of one queue. Set its
// fields before first use; it is safe for concurrent use afterwards, so
// several goroutines may call Run (or Claim) on the same Client to work on
// several tasks at once.
type Client struct {
	// BaseURL is the relay's address, e.g. "http://localhost:8080".
	BaseURL string
	// Token is a worker token (one of the relay's RELAY_WORKER_TOKENS),
	// sent as "Authorization: Bearer <Token>" on every request.
	Token string
	// Queue is the queue Claim and Run take tasks from.
	Queue string
	// WorkerID names this worker in the relay's logs; empty means
	// "<hostname>-<pid>".
	WorkerID string
	// HTTP sends the requests; nil means http.DefaultClient. A Timeout
	// set on it must exceed the longest claim wait (60s) to be useful.
	HTTP *http.Client
	// Logger receives the logs of Run and KeepAlive; nil means slog.Default().
	Logger *slog.Logger
}

// Operation timeouts applied on top of the caller's context.
const (
	requestTimeout = 30 * time.Second // a post, heartbeat or release
	claimSlack     = 15 * time.Second // added to a claim's wait
	runClaimWait   = 30 * time.Second // the long poll of Run's claims
	maxWaitSeconds = 60
)

// Backoff of Run after failed claims (variables so tests can shorten them).
var (
	backoffMin = 500 * time.Millisecond
	backoffMax = 30 * time.Second
)

// Codes of the worker API's errors (APIError.Code).
const (
	CodeBadRequest        = "bad_request"
	CodeUnauthorized      = "unauthorized"
	CodeNotFound          = "not_found"
	CodeLeaseLost         = "lease_lost"
	CodeTaskCanceled      = "task_canceled"
	CodeTaskFinished      = "task_finished"
	CodeInvalidTransition = "invalid_transition"
	CodeUnavailable       = "unavailable"
	// CodeIdempotencyKeyReused: a post's Idempotency-Key was first sent
	// with other events (or another lease); nothing was committed.
	CodeIdempotencyKeyReused = "idempotency_key_reused"
)

// Sentinel errors for errors.Is. An *APIError matches the one of its code;
// Job.Err and the cause of KeepAlive's context may also be the sentinels
// themselves.
var (
	// ErrLeaseLost: the lease is over (it expired and the task went to
	// another worker, or the task ended) or the lease id is wrong. Stop
	// working on the task.
	ErrLeaseLost = errors.New("worker: lease lost")
	// ErrCanceled: the client canceled the task, or relay failed it at a
	// deadline (its max wait or max run: docs/worker-api.md). Stop
	// working on it.
	ErrCanceled = errors.New("worker: task canceled by the client")
	// ErrFinished: the task had already reached a final state.
	ErrFinished = errors.New("worker: task already finished")
	// ErrDone: this worker ended the job itself, by posting a final or
	// interrupted state (the relay answered "released": true) or by
	// releasing it.
	ErrDone = errors.New("worker: job done")
)

// APIError is an error answer of the worker API:
// {"error": Message, "code": Code} with HTTP status Status.
type APIError struct {
	Status  int    // HTTP status, e.g. 409
	Code    string // e.g. "lease_lost"; empty if the body was not the API's JSON
	Message string // the human-readable "error" field (or the start of the body)
	// RetryAfter is the Retry-After header of a 503 (or 429), zero if none.
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("relay worker API: HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("relay worker API: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Is reports whether e carries the code of the sentinel target, so that
// errors.Is(err, ErrLeaseLost), ErrCanceled and ErrFinished work on API errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrLeaseLost:
		return e.Code == CodeLeaseLost
	case ErrCanceled:
		return e.Code == CodeTaskCanceled
	case ErrFinished:
		return e.Code == CodeTaskFinished
	}
	return false
}

// ends reports whether the error means this worker no longer holds the task.
func (e *APIError) ends() bool {
	switch e.Code {
	case CodeLeaseLost, CodeTaskCanceled, CodeTaskFinished, CodeNotFound:
		return true
	}
	return false
}

// transient reports whether the same request may succeed later (the relay
// or a proxy was busy or down).
func (e *APIError) transient() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// permanent reports whether retrying a claim cannot help (bad token, bad queue, …).
func (e *APIError) permanent() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusRequestTimeout &&
		e.Status != http.StatusTooManyRequests
}

type claimRequest struct {
	WorkerID    string `json:"workerId,omitempty"`
	WaitSeconds int    `json:"waitSeconds"`
}

type claimResponse struct {
	TaskID         string          `json:"taskId"`
	ContextID      string          `json:"contextId"`
	Owner          string          `json:"owner"`
	LeaseID        string          `json:"leaseId"`
	LeaseExpiresAt string          `json:"leaseExpiresAt"`
	LeaseSeconds   float64         `json:"leaseSeconds"`
	Attempt        int             `json:"attempt"`
	Task           json.RawMessage `json:"task"`
	Message        json.RawMessage `json:"message"`
}

// Claim asks for the next task of c.Queue, waiting up to wait for one
// (rounded up to whole seconds, at most 60s; 0 does not wait). It returns
// (nil, nil) when no task came within the wait: claim again.
func (c *Client) Claim(ctx context.Context, wait time.Duration) (*Job, error) {
	secs := min(max(int(math.Ceil(wait.Seconds())), 0), maxWaitSeconds)
	body := claimRequest{WorkerID: cmp.Or(c.WorkerID, defaultWorkerID()), WaitSeconds: secs}
	var r claimResponse
	path := "/v1/queues/" + url.PathEscape(c.Queue) + "/claim"
	x := exchange{}
	status, err := c.send(ctx, path, &x, body, time.Duration(secs)*time.Second+claimSlack, &r)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	if r.TaskID == "" || r.LeaseID == "" {
		return nil, fmt.Errorf("worker: claim answer without taskId or leaseId")
	}
	j := &Job{TaskID: r.TaskID, ContextID: r.ContextID, Owner: r.Owner, LeaseID: r.LeaseID, Attempt: r.Attempt,
		Task: r.Task, TraceParent: x.answered.Get(HeaderTraceParent), c: c, done: make(chan struct{})}
	j.LeaseExpiresAt, _ = time.Parse(time.RFC3339Nano, r.LeaseExpiresAt)
	switch {
	case r.LeaseSeconds > 0:
		j.Lease = time.Duration(r.LeaseSeconds * float64(time.Second))
	case !j.LeaseExpiresAt.IsZero() && time.Until(j.LeaseExpiresAt) > 0:
		j.Lease = time.Until(j.LeaseExpiresAt)
	default:
		j.Lease = 30 * time.Second
	}
	if len(r.Message) > 0 && string(r.Message) != "null" {
		if err := json.Unmarshal(r.Message, &j.Message); err != nil {
			return nil, fmt.Errorf("worker: claim answer: message: %w", err)
		}
	}
	return j, nil
}

// Run claims tasks of c.Queue one after the other and calls handle for each,
// until ctx ends. handle gets the job and a context kept alive by KeepAlive:
// it is canceled when the client cancels the task, when the lease is lost,
// when the job ends, or when ctx ends.
//
// After handle returns, while the job still holds the lease: if ctx has
// ended, the task is released so that another worker takes it at once;
// otherwise it is failed with the handler's error as status text (or with
// "worker returned without ending the task" if handle returned nil without
// a final state). A panic in handle is recovered and fails the task.
//
// Failed claims are retried with capped, jittered exponential backoff
// (honouring Retry-After). Run returns nil once ctx ends, or the claim's
// error when retrying cannot help (a 4xx answer such as 401 unauthorized).
func (c *Client) Run(ctx context.Context, handle func(ctx context.Context, j *Job) error) error {
	log := c.logger()
	failures := 0
	for ctx.Err() == nil {
		j, err := c.Claim(ctx, runClaimWait)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			d := backoff(failures)
			failures++
			var ae *APIError
			if errors.As(err, &ae) {
				if ae.permanent() {
					return err
				}
				d = max(d, ae.RetryAfter)
			}
			log.Warn("worker: claim failed", "queue", c.Queue, "err", err, "retry_in", d)
			if !sleep(ctx, d) {
				break
			}
			continue
		}
		failures = 0
		if j != nil {
			c.work(ctx, j, handle)
		}
	}
	return nil
}

// work runs handle on one claimed job and settles the job afterwards.
func (c *Client) work(ctx context.Context, j *Job, handle func(context.Context, *Job) error) {
	log := c.logger().With("task", j.TaskID, "attempt", j.Attempt)
	log.Info("worker: claimed task")
	jctx, stop := context.WithCancel(ctx)
	defer stop() // ends KeepAlive's heartbeats whatever happens below
	err := callHandler(j.KeepAlive(jctx), j, handle)
	switch ended := j.Err(); {
	case errors.Is(ended, ErrDone):
		log.Info("worker: task done")
	case ended != nil:
		log.Info("worker: task taken away", "reason", ended, "handler_err", err)
	case ctx.Err() != nil:
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		if rerr := j.Release(rctx); rerr != nil {
			log.Warn("worker: release failed", "err", rerr)
		} else {
			log.Info("worker: task released (shutting down)")
		}
	default:
		if err == nil {
			err = errors.New("worker returned without ending the task")
		}
		log.Warn("worker: handler failed, failing the task", "err", err)
		if ferr := j.Fail(ctx, err.Error()); ferr != nil {
			log.Warn("worker: failing the task failed", "err", ferr)
		}
	}
}

// callHandler calls handle, turning a panic into an error.
func callHandler(ctx context.Context, j *Job, handle func(context.Context, *Job) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			j.c.logger().Error("worker: handler panicked", "task", j.TaskID, "panic", r,
				"stack", string(debug.Stack()))
			err = fmt.Errorf("worker panicked: %v", r)
		}
	}()
	return handle(ctx, j)
}

// HeaderTraceParent is the W3C trace-context header: a claim's answer
// carries the claim's traceparent when relay traces (Job.TraceParent),
// and a job's requests send it back.
const HeaderTraceParent = "traceparent"

// exchange is what a request sends beside its body, and what it keeps
// of the answer.
type exchange struct {
	// key is the Idempotency-Key ("": none); traceParent the traceparent
	// ("": none).
	key, traceParent string
	// answered is the answer's header (set by send).
	answered http.Header
}

// errAnswer marks a 2xx answer that could not be read (cut short): the
// request may have been applied.
var errAnswer = errors.New("unreadable answer")

// send sends one JSON request to the worker API, with the headers x asks
// for, and keeps the answer's header in x. It decodes a 2xx answer's body
// into out (unless out is nil or the answer is 204) and turns any other
// answer into an *APIError. timeout bounds the request on top of ctx.
func (c *Client) send(ctx context.Context, path string, x *exchange, body any, timeout time.Duration, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("worker: encoding %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("worker: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if x.key != "" {
		req.Header.Set("Idempotency-Key", x.key)
	}
	if x.traceParent != "" {
		req.Header.Set(HeaderTraceParent, x.traceParent)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("worker: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	x.answered = resp.Header
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return resp.StatusCode, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				return resp.StatusCode, fmt.Errorf("worker: POST %s: %w: %w", path, errAnswer, err)
			}
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	e := &APIError{Status: resp.StatusCode}
	var wire struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if json.Unmarshal(raw, &wire) == nil && (wire.Code != "" || wire.Error != "") {
		e.Code, e.Message = wire.Code, wire.Error
	} else {
		e.Message = cmp.Or(strings.TrimSpace(string(raw[:min(len(raw), 200)])), http.StatusText(resp.StatusCode))
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return resp.StatusCode, e
}

func (c *Client) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

var defaultWorkerID = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return cmp.Or(host, "worker") + "-" + strconv.Itoa(os.Getpid())
})

// backoff is the wait after the n-th consecutive failure (n from 0):
// exponential from backoffMin, capped at backoffMax, with equal jitter.
func backoff(n int) time.Duration {
	d := backoffMax
	if n < 30 {
		d = min(backoffMin<<n, backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends; it reports whether the wait went to term.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
