package worker

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"
)

// States a worker reports with Job.Status. Status also accepts any other
// state name, in this spelling or as a v1.0 TASK_STATE_* name.
const (
	StateWorking       = "working"
	StateInputRequired = "input-required" // hands the task back to the client
	StateAuthRequired  = "auth-required"  // hands the task back to the client
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateRejected      = "rejected"
)

// Job is a claimed task: the worker holds its lease until it ends the task,
// releases it, or the relay takes it away (cancellation, lease lost). Its
// methods are safe for concurrent use (KeepAlive heartbeats while the
// handler posts events).
type Job struct {
	// TaskID is the claimed task's id.
	TaskID string
	// ContextID is the task's context (conversation) id. It is its
	// owner's: two clients naming the same contextId have a context each.
	ContextID string
	// Owner is the client (principal) the task belongs to: "key:<name>"
	// for an API key, "jwt:<iss>|<sub>" for a JWT, "" when relay runs
	// without client authentication (every client is the one anonymous
	// principal). Key anything kept per context by (Owner, ContextID), or
	// two clients' conversations mix.
	Owner string
	// LeaseID identifies this worker's lease; every request about the task carries it.
	LeaseID string
	// LeaseExpiresAt is when the lease granted by the claim expires; posts
	// and heartbeats renew it.
	LeaseExpiresAt time.Time
	// Lease is the lease length (leaseSeconds); heartbeat well within it.
	Lease time.Duration
	// Attempt counts how many times the task was handed out: above 1, a
	// previous worker lost its lease and the task may hold some of its events.
	Attempt int
	// Task is the task as it stands, with its history, in the v1.0 shape.
	Task json.RawMessage
	// Message is the message that prompted this claim (the latest user message).
	Message Message
	// TraceParent is the W3C traceparent of the claim ("" when relay does
	// not trace): the task turn's trace, which the client's request
	// started. The job's requests send it back, so that their commits and
	// the deliveries of the events posted join that trace; a worker that
	// traces starts its own spans under it (docs/worker-api.md, "Tracing").
	TraceParent string

	c    *Client
	mu   sync.Mutex
	err  error         // why the job ended; nil while the lease is held
	done chan struct{} // closed when err is set
}

// Message is an A2A v1.0 message.
type Message struct {
	MessageID string          `json:"messageId"`
	ContextID string          `json:"contextId,omitempty"`
	TaskID    string          `json:"taskId,omitempty"`
	Role      string          `json:"role"`  // "ROLE_USER" or "ROLE_AGENT"
	Parts     []Part          `json:"parts"` // the content, in order
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Text returns the text parts of m joined with newlines.
func (m Message) Text() string {
	var texts []string
	for _, p := range m.Parts {
		if p.isText() {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Part is one part of an A2A v1.0 message or artifact: text, a file (Raw
// bytes or a URL) or structured Data. A part with neither Raw, URL nor Data
// is a text part, and is encoded with its "text" even when empty.
type Part struct {
	Text      string          `json:"text,omitempty"`      // a text part's text
	Raw       []byte          `json:"raw,omitempty"`       // a file's bytes (base64 on the wire)
	URL       string          `json:"url,omitempty"`       // a file's URL
	Data      json.RawMessage `json:"data,omitempty"`      // structured data (JSON)
	MediaType string          `json:"mediaType,omitempty"` // e.g. "text/plain", "image/png"
	Filename  string          `json:"filename,omitempty"`  // a file's name
	Metadata  json.RawMessage `json:"metadata,omitempty"`  // the part's metadata (JSON object)
}

func (p Part) isText() bool { return len(p.Raw) == 0 && p.URL == "" && len(p.Data) == 0 }

// MarshalJSON implements json.Marshaler: a text part always has "text".
func (p Part) MarshalJSON() ([]byte, error) {
	type plain Part
	if !p.isText() {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Text string `json:"text"`
		plain
	}{p.Text, plain(p)})
}

type statusEvent struct {
	StatusUpdate struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId,omitempty"`
		Status    struct {
			State   string   `json:"state"`
			Message *Message `json:"message,omitempty"`
		} `json:"status"`
	} `json:"statusUpdate"`
}

type artifactEvent struct {
	ArtifactUpdate struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId,omitempty"`
		Artifact  struct {
			ArtifactID string `json:"artifactId"`
			Parts      []Part `json:"parts"`
		} `json:"artifact"`
		Append    bool `json:"append"`
		LastChunk bool `json:"lastChunk"`
	} `json:"artifactUpdate"`
}

// StatusEvent builds a v1.0 statusUpdate event for Post. state is a state
// name such as StateWorking ("working") or a TASK_STATE_* name; text, if not
// empty, becomes the status message (role ROLE_AGENT). Post it together with
// other events to commit them atomically.
func (j *Job) StatusEvent(state, text string) json.RawMessage {
	var e statusEvent
	e.StatusUpdate.TaskID, e.StatusUpdate.ContextID = j.TaskID, j.ContextID
	e.StatusUpdate.Status.State = wireState(state)
	if text != "" {
		e.StatusUpdate.Status.Message = &Message{MessageID: rand.Text(), Role: "ROLE_AGENT",
			Parts: []Part{{Text: text}}}
	}
	return mustJSON(e)
}

// ArtifactEvent builds a v1.0 artifactUpdate event for Post: one chunk of
// text for the artifact artifactID. appendChunk appends the chunk to the
// artifact's parts (false starts or replaces the artifact); lastChunk marks
// the artifact complete.
func (j *Job) ArtifactEvent(artifactID, text string, appendChunk, lastChunk bool) json.RawMessage {
	var e artifactEvent
	e.ArtifactUpdate.TaskID, e.ArtifactUpdate.ContextID = j.TaskID, j.ContextID
	e.ArtifactUpdate.Artifact.ArtifactID = artifactID
	e.ArtifactUpdate.Artifact.Parts = []Part{{Text: text}}
	e.ArtifactUpdate.Append, e.ArtifactUpdate.LastChunk = appendChunk, lastChunk
	return mustJSON(e)
}

// Status posts a status update (see StatusEvent). A final state
// ("completed", "failed", "rejected") or an interrupted one
// ("input-required", "auth-required") ends the job.
func (j *Job) Status(ctx context.Context, state, text string) error {
	return j.Post(ctx, j.StatusEvent(state, text))
}

// Artifact posts one chunk of an artifact (see ArtifactEvent).
func (j *Job) Artifact(ctx context.Context, artifactID, text string, appendChunk, lastChunk bool) error {
	return j.Post(ctx, j.ArtifactEvent(artifactID, text, appendChunk, lastChunk))
}

// Complete ends the task as completed, with text (if not empty) as the
// final status message.
func (j *Job) Complete(ctx context.Context, text string) error {
	return j.Status(ctx, StateCompleted, text)
}

// Fail ends the task as failed, with text (if not empty) as the final
// status message.
func (j *Job) Fail(ctx context.Context, text string) error {
	return j.Status(ctx, StateFailed, text)
}

type leaseRequest struct {
	LeaseID string `json:"leaseId"`
}

type postRequest struct {
	LeaseID string `json:"leaseId"`
	Events  []any  `json:"events"`
}

type postResponse struct {
	State    string `json:"state"`
	Released bool   `json:"released"`
}

// Post posts raw v1.0 StreamResponse events ({"statusUpdate": …} or
// {"artifactUpdate": …}; any value that encodes to one, such as a map, a
// json.RawMessage or the result of StatusEvent and ArtifactEvent). The
// events are committed atomically, in order, or not at all, and renew the
// lease. API errors are *APIError: errors.Is(err, ErrCanceled),
// ErrLeaseLost or ErrFinished means stop working on the task (the job has
// ended); other codes (bad_request, invalid_transition) leave the lease held.
//
// A post whose answer does not come (the connection dropped, a 502, 503 or
// 504, a 429) is sent again, up to PostAttempts times in all, with backoff,
// under the same Idempotency-Key (a new one per Post): the relay commits
// its events once, and a retry gets the first answer. Use PostWithKey to
// choose the key.
func (j *Job) Post(ctx context.Context, events ...any) error {
	return j.PostWithKey(ctx, NewIdempotencyKey(), events...)
}

// PostAttempts is how many times Post and PostWithKey send a post whose
// answer does not come.
const PostAttempts = 5

// NewIdempotencyKey returns a new random idempotency key (26 characters of
// base32, 130 random bits).
func NewIdempotencyKey() string { return rand.Text() }

// PostWithKey is Post under the caller's idempotency key: 1 to 255 visible
// ASCII characters, one per logical post. A worker that retries a post
// itself (after Post gave up, or across its own restarts while it still
// holds the lease) sends it again with the same key and the same events,
// and the relay commits them once; the key with other events is refused
// (422, CodeIdempotencyKeyReused). The relay remembers a task's keys for
// 24 hours after its latest post, 128 keys per task.
func (j *Job) PostWithKey(ctx context.Context, key string, events ...any) error {
	if events == nil {
		events = []any{}
	}
	var r postResponse
	body := postRequest{j.LeaseID, events}
	var err error
	for attempt := 0; ; attempt++ {
		r = postResponse{}
		_, err = j.c.send(ctx, j.path("events"), &exchange{key: key, traceParent: j.TraceParent}, body, requestTimeout, &r)
		if err == nil || attempt+1 >= PostAttempts || ctx.Err() != nil || !retryable(err) {
			break
		}
		d := backoff(attempt)
		var ae *APIError
		if errors.As(err, &ae) {
			d = max(d, ae.RetryAfter)
		}
		j.c.logger().Warn("worker: post failed, sending it again", "task", j.TaskID, "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			break
		}
	}
	if err != nil {
		j.endOn(err)
		return err
	}
	switch {
	case wireState(r.State) == "TASK_STATE_CANCELED":
		j.end(ErrCanceled)
	case r.Released || endsLease(r.State):
		j.end(ErrDone)
	}
	return nil
}

// retryable reports whether a post may be sent again: its answer did not
// come (transport error, an answer cut short) or said to retry.
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.transient()
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, errAnswer)
}

type heartbeatResponse struct {
	Canceled bool   `json:"canceled"`
	State    string `json:"state"`
}

// Heartbeat renews the lease. canceled is true when the client canceled the
// task: the lease is over and the job has ended (Err is ErrCanceled). A lost
// lease is an *APIError matching ErrLeaseLost.
func (j *Job) Heartbeat(ctx context.Context) (canceled bool, err error) {
	var r heartbeatResponse
	_, err = j.c.send(ctx, j.path("heartbeat"), &exchange{traceParent: j.TraceParent}, leaseRequest{j.LeaseID}, requestTimeout, &r)
	switch {
	case errors.Is(err, ErrCanceled):
		j.end(err)
		return true, nil
	case err != nil:
		j.endOn(err)
		return false, err
	case r.Canceled || wireState(r.State) == "TASK_STATE_CANCELED":
		j.end(ErrCanceled)
		return true, nil
	case endsLease(r.State):
		j.end(ErrFinished)
	}
	return false, nil
}

// Release gives the task back unfinished (the worker is shutting down): the
// relay offers it to the next claim at once instead of after the lease
// expires. The job ends.
func (j *Job) Release(ctx context.Context) error {
	_, err := j.c.send(ctx, j.path("release"), &exchange{traceParent: j.TraceParent}, leaseRequest{j.LeaseID}, requestTimeout, nil)
	if err != nil {
		j.endOn(err)
		return err
	}
	j.end(ErrDone)
	return nil
}

// Err returns nil while this worker holds the task's lease, and why the job
// ended afterwards: ErrDone (this worker posted a final or interrupted state,
// or released the task), ErrCanceled, or an *APIError (lease_lost,
// task_canceled, task_finished, not_found).
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// KeepAlive heartbeats the task every third of the lease, in a goroutine,
// until ctx ends or the job ends. It returns a context derived from ctx that
// is canceled when the job ends: when the client cancels the task, when the
// lease is lost, or when this worker ends or releases the task.
// context.Cause of the returned context then says why (the same value as
// Err). Long work should select on its Done channel. Heartbeats that fail
// for other reasons (network, 503) are retried sooner and logged.
func (j *Job) KeepAlive(ctx context.Context) context.Context {
	kctx, cancel := context.WithCancelCause(ctx)
	interval := keepAliveEvery(j.Lease)
	go func() {
		t := time.NewTimer(interval)
		defer t.Stop()
		for {
			select {
			case <-kctx.Done():
				return
			case <-j.done:
				cancel(j.Err())
				return
			case <-t.C:
			}
			if j.Err() != nil {
				continue // the j.done case ends the loop
			}
			next := interval
			if _, err := j.Heartbeat(kctx); err != nil && j.Err() == nil && kctx.Err() == nil {
				j.c.logger().Warn("worker: heartbeat failed", "task", j.TaskID, "err", err)
				next = max(interval/3, 100*time.Millisecond)
			}
			t.Reset(next)
		}
	}()
	return kctx
}

// keepAliveEvery is how often KeepAlive sends a heartbeat under a lease:
// every third of it (at most every 100ms), so that two heartbeats can fail
// before the lease runs out.
func keepAliveEvery(lease time.Duration) time.Duration { return max(lease/3, 100*time.Millisecond) }

func (j *Job) path(op string) string {
	return "/v1/tasks/" + url.PathEscape(j.TaskID) + "/" + op
}

// end records why the job ended (the first reason wins).
func (j *Job) end(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = err
		close(j.done)
	}
}

// endOn ends the job if err says this worker no longer holds the task.
func (j *Job) endOn(err error) {
	var ae *APIError
	if errors.As(err, &ae) && ae.ends() {
		j.end(ae)
	}
}

// wireState spells a state as its v1.0 enum name: "input-required" →
// "TASK_STATE_INPUT_REQUIRED"; TASK_STATE_* names pass unchanged.
func wireState(s string) string {
	s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if s == "CANCELLED" || s == "TASK_STATE_CANCELLED" {
		s = "CANCELED"
	}
	if !strings.HasPrefix(s, "TASK_STATE_") {
		s = "TASK_STATE_" + s
	}
	return s
}

// endsLease reports whether a task in state s no longer has a worker: a
// final or interrupted state.
func endsLease(s string) bool {
	switch wireState(s) {
	case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED",
		"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
		return true
	}
	return false
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("worker: " + err.Error()) // unreachable: only strings, bools and parts
	}
	return b
}
