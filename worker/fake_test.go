package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake implements the worker API of docs/worker-api.md in memory, strictly:
// it answers malformed requests with 400 and records every request.
type fake struct {
	t            *testing.T
	srv          *httptest.Server
	token        string
	leaseSeconds int

	mu        sync.Mutex
	queues    map[string][]*fakeTask
	tasks     map[string]*fakeTask
	reqs      []fakeReq
	claimErrs []int // statuses to answer the next claims with
	drops     int   // event posts whose answers to drop (after applying them)
	seq       int
}

type fakeTask struct {
	id, contextID, text string
	lease               string // current lease id; "" when no worker holds the task
	state               string // v1.0 state name
	canceled            bool
	attempt             int
	releases            int
	heartbeats          int
	events              []json.RawMessage
	answers             map[string]map[string]any // by idempotency key
	bodies              map[string]string         // the events posted under each key
}

type fakeReq struct {
	path, auth, version, contentType string
	body                             []byte
	key                              string // Idempotency-Key
}

func newFake(t *testing.T) *fake {
	f := &fake{t: t, token: "tok", leaseSeconds: 30, queues: map[string][]*fakeTask{}, tasks: map[string]*fakeTask{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/queues/{queue}/claim", f.claim)
	mux.HandleFunc("POST /v1/tasks/{id}/events", f.events)
	mux.HandleFunc("POST /v1/tasks/{id}/heartbeat", f.heartbeat)
	mux.HandleFunc("POST /v1/tasks/{id}/release", f.release)
	f.srv = httptest.NewServer(f.check(mux))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) client() *Client {
	return &Client{BaseURL: f.srv.URL + "/", Token: f.token, Queue: "jobs", WorkerID: "w-1", HTTP: f.srv.Client(),
		Logger: slog.New(slog.DiscardHandler)}
}

func (f *fake) add(queue, id, text string) *fakeTask {
	f.mu.Lock()
	defer f.mu.Unlock()
	task := &fakeTask{id: id, contextID: "ctx-" + id, text: text, state: "TASK_STATE_SUBMITTED"}
	f.tasks[id] = task
	f.queues[queue] = append(f.queues[queue], task)
	return task
}

// with runs fn under the fake's lock, for reading or changing its state.
func (f *fake) with(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fake) requests(path string) []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeReq
	for _, r := range f.reqs {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiErr(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": msg, "code": code})
}

// check records the request and enforces what every request must carry.
func (f *fake) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		r.Body.Close()
		f.with(func() {
			f.reqs = append(f.reqs, fakeReq{r.URL.EscapedPath(), r.Header.Get("Authorization"),
				r.Header.Get("A2A-Version"), r.Header.Get("Content-Type"), buf.Bytes(), r.Header.Get("Idempotency-Key")})
		})
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			apiErr(w, 401, "unauthorized", "unknown worker token")
			return
		}
		if v := r.Header.Get("A2A-Version"); v != "" && v != "1.0" {
			f.t.Errorf("%s: A2A-Version %q", r.URL.Path, v)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			f.t.Errorf("%s: Content-Type %q", r.URL.Path, ct)
		}
		r.Body = http.NoBody
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, buf.Bytes()))
		next.ServeHTTP(w, r)
	})
}

type bodyKey struct{}

// decode decodes the request body strictly into v; on error it answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(r.Context().Value(bodyKey{}).([]byte)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		apiErr(w, 400, "bad_request", err.Error())
		return false
	}
	return true
}

func (f *fake) claim(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WorkerID    string `json:"workerId"`
		WaitSeconds *int   `json:"waitSeconds"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.WaitSeconds != nil && (*req.WaitSeconds < 0 || *req.WaitSeconds > 60) {
		apiErr(w, 400, "bad_request", "waitSeconds out of range")
		return
	}
	wait := 30
	if req.WaitSeconds != nil {
		wait = *req.WaitSeconds
	}
	f.mu.Lock()
	if len(f.claimErrs) > 0 {
		status := f.claimErrs[0]
		f.claimErrs = f.claimErrs[1:]
		f.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		apiErr(w, status, "unavailable", "try again")
		return
	}
	f.mu.Unlock()
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	queue := r.PathValue("queue")
	for {
		f.mu.Lock()
		if q := f.queues[queue]; len(q) > 0 {
			task := q[0]
			f.queues[queue] = q[1:]
			f.seq++
			task.lease = fmt.Sprintf("lease-%d", f.seq)
			task.attempt++
			task.state = "TASK_STATE_WORKING"
			msg := map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{
				map[string]any{"text": task.text}, map[string]any{"data": map[string]any{"k": 1}},
				map[string]any{"text": "second"}}}
			resp := map[string]any{"taskId": task.id, "contextId": task.contextID, "owner": "key:owner-of-" + task.id, "leaseId": task.lease,
				"leaseExpiresAt": "2030-01-02T03:04:05Z", "leaseSeconds": f.leaseSeconds, "attempt": task.attempt,
				"task": map[string]any{"id": task.id, "contextId": task.contextID,
					"status": map[string]any{"state": "TASK_STATE_SUBMITTED"}, "history": []any{msg}},
				"message": msg}
			f.mu.Unlock()
			writeJSON(w, 200, resp)
			return
		}
		f.mu.Unlock()
		if !time.Now().Before(deadline) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// leased finds the task and checks the lease (and cancellation) like the
// relay does; on failure it has answered.
func (f *fake) leased(w http.ResponseWriter, r *http.Request, lease string) *fakeTask {
	task := f.tasks[r.PathValue("id")]
	switch {
	case task == nil:
		apiErr(w, 404, "not_found", "no such task")
	case task.canceled && task.lease != "":
		task.lease = ""
		apiErr(w, 409, "task_canceled", "the client canceled the task")
	case final(task.state):
		apiErr(w, 409, "task_finished", "the task is "+task.state)
	case lease == "" || task.lease != lease:
		apiErr(w, 409, "lease_lost", "lease lost")
	default:
		return task
	}
	return nil
}

func final(state string) bool {
	switch state {
	case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED":
		return true
	}
	return false
}

type wirePart struct {
	Text *string `json:"text"`
}

type wireEvent struct {
	StatusUpdate *struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
		Status    struct {
			State   string `json:"state"`
			Message *struct {
				MessageID string     `json:"messageId"`
				Role      string     `json:"role"`
				Parts     []wirePart `json:"parts"`
			} `json:"message"`
		} `json:"status"`
	} `json:"statusUpdate"`
	ArtifactUpdate *struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
		Artifact  struct {
			ArtifactID string     `json:"artifactId"`
			Parts      []wirePart `json:"parts"`
		} `json:"artifact"`
		Append    *bool `json:"append"`
		LastChunk *bool `json:"lastChunk"`
	} `json:"artifactUpdate"`
}

var workerStates = regexp.MustCompile(`^TASK_STATE_(WORKING|COMPLETED|FAILED|REJECTED|INPUT_REQUIRED|AUTH_REQUIRED)$`)

// validEvent checks one event against the v1.0 shape; it returns the new
// state ("" for an artifact) or an error message.
func validEvent(raw json.RawMessage, task *fakeTask) (string, string) {
	var e wireEvent
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return "", err.Error()
	}
	parts := func(ps []wirePart) string {
		if len(ps) == 0 {
			return "no parts"
		}
		for _, p := range ps {
			if p.Text == nil {
				return "part without text"
			}
		}
		return ""
	}
	switch {
	case (e.StatusUpdate == nil) == (e.ArtifactUpdate == nil):
		return "", "want exactly one of statusUpdate, artifactUpdate"
	case e.StatusUpdate != nil:
		s := e.StatusUpdate
		if (s.TaskID != "" && s.TaskID != task.id) || (s.ContextID != "" && s.ContextID != task.contextID) {
			return "", "taskId/contextId of another task"
		}
		if !workerStates.MatchString(s.Status.State) {
			return "", "bad state " + s.Status.State
		}
		if m := s.Status.Message; m != nil {
			if m.MessageID == "" || m.Role != "ROLE_AGENT" {
				return "", "status message needs messageId and role ROLE_AGENT"
			}
			if msg := parts(m.Parts); msg != "" {
				return "", msg
			}
		}
		return s.Status.State, ""
	default:
		a := e.ArtifactUpdate
		if (a.TaskID != "" && a.TaskID != task.id) || a.Artifact.ArtifactID == "" || a.Append == nil || a.LastChunk == nil {
			return "", "artifactUpdate needs artifactId, append, lastChunk"
		}
		return "", parts(a.Artifact.Parts)
	}
}

func (f *fake) events(w http.ResponseWriter, r *http.Request) {
	var req struct {
		LeaseID string            `json:"leaseId"`
		Events  []json.RawMessage `json:"events"`
	}
	if !decode(w, r, &req) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := r.Header.Get("Idempotency-Key")
	if task := f.tasks[r.PathValue("id")]; task != nil && key != "" && task.answers[key] != nil {
		if task.bodies[key] != string(r.Context().Value(bodyKey{}).([]byte)) {
			apiErr(w, 422, CodeIdempotencyKeyReused, "key reused")
			return
		}
		f.answer(w, task.answers[key])
		return
	}
	task := f.leased(w, r, req.LeaseID)
	if task == nil {
		return
	}
	state := task.state
	for i, e := range req.Events {
		next, msg := validEvent(e, task)
		if msg != "" {
			apiErr(w, 400, "bad_request", fmt.Sprintf("events[%d]: %s", i, msg))
			return
		}
		state = firstOf(next, state)
	}
	task.events = append(task.events, req.Events...)
	task.state = state
	released := !strings.HasSuffix(state, "WORKING")
	if released {
		task.lease = ""
	}
	answer := map[string]any{"state": state, "leaseExpiresAt": "2030-01-02T03:04:35Z", "released": released}
	if key != "" {
		if task.answers == nil {
			task.answers, task.bodies = map[string]map[string]any{}, map[string]string{}
		}
		task.answers[key], task.bodies[key] = answer, string(r.Context().Value(bodyKey{}).([]byte))
	}
	f.answer(w, answer)
}

// answer writes an events answer, or drops it (closes the connection
// without a word) while f.drops says so.
func (f *fake) answer(w http.ResponseWriter, answer map[string]any) {
	if f.drops > 0 {
		f.drops--
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("dropping an answer: %v", err)
			return
		}
		conn.Close()
		return
	}
	writeJSON(w, 200, answer)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (f *fake) heartbeat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		LeaseID string `json:"leaseId"`
	}
	if !decode(w, r, &req) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if task := f.tasks[r.PathValue("id")]; task != nil && task.canceled && task.lease == req.LeaseID && req.LeaseID != "" {
		task.heartbeats++
		task.lease = ""
		writeJSON(w, 200, map[string]any{"canceled": true, "state": "TASK_STATE_CANCELED"})
		return
	}
	task := f.leased(w, r, req.LeaseID)
	if task == nil {
		return
	}
	task.heartbeats++
	writeJSON(w, 200, map[string]any{"leaseExpiresAt": "2030-01-02T03:04:35Z", "canceled": false, "state": task.state})
}

func (f *fake) release(w http.ResponseWriter, r *http.Request) {
	var req struct {
		LeaseID string `json:"leaseId"`
	}
	if !decode(w, r, &req) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	task := f.leased(w, r, req.LeaseID)
	if task == nil {
		return
	}
	task.lease = ""
	task.releases++
	task.state = "TASK_STATE_SUBMITTED"
	f.queues["jobs"] = append(f.queues["jobs"], task)
	writeJSON(w, 200, map[string]any{})
}
