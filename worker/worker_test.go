package worker

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// normalized decodes JSON, replaces non-empty messageId values with "*", and
// encodes it again (map keys sorted) for comparisons.
func normalized(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "messageId" && s != "" {
					v[k] = "*"
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	out, _ := json.Marshal(v)
	return string(out)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func claimOne(t *testing.T, c *Client) *Job {
	t.Helper()
	j, err := c.Claim(ctxT(t), time.Second)
	if err != nil || j == nil {
		t.Fatalf("Claim = %v, %v; want a job", j, err)
	}
	return j
}

// eventually polls cond for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestClaim(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.leaseSeconds = 9
	f.add("team/jobs 1", "t1", "hello")
	c := f.client()
	c.Queue = "team/jobs 1"
	j, err := c.Claim(ctxT(t), 1500*time.Millisecond)
	if err != nil || j == nil {
		t.Fatalf("Claim = %v, %v", j, err)
	}
	if j.TaskID != "t1" || j.ContextID != "ctx-t1" || j.Owner != "key:owner-of-t1" || j.LeaseID != "lease-1" || j.Attempt != 1 ||
		j.Lease != 9*time.Second || !j.LeaseExpiresAt.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("job = %+v", j)
	}
	if j.Message.MessageID != "m-1" || j.Message.Role != "ROLE_USER" || len(j.Message.Parts) != 3 {
		t.Errorf("message = %+v", j.Message)
	}
	if got := j.Message.Text(); got != "hello\nsecond" {
		t.Errorf("Message.Text() = %q", got)
	}
	var task struct{ ID string }
	if json.Unmarshal(j.Task, &task) != nil || task.ID != "t1" {
		t.Errorf("Task = %s", j.Task)
	}
	if j.Err() != nil {
		t.Errorf("Err() = %v on a fresh job", j.Err())
	}
	reqs := f.requests("/v1/queues/team%2Fjobs%201/claim")
	if len(reqs) != 1 {
		t.Fatalf("claim requests: %+v", f.reqs)
	}
	if reqs[0].auth != "Bearer tok" || reqs[0].version != "1.0" {
		t.Errorf("headers: %+v", reqs[0])
	}
	if got := normalized(t, reqs[0].body); got != `{"waitSeconds":2,"workerId":"w-1"}` {
		t.Errorf("claim body = %s", got)
	}

	// Nothing queued and no wait: 204 → (nil, nil), waitSeconds 0 (the
	// request asks for no wait: checked with the bodies below).
	j, err = c.Claim(ctxT(t), 0)
	if j != nil || err != nil {
		t.Errorf("empty Claim = %v, %v", j, err)
	}
	// Waits beyond the API's maximum are clamped; no WorkerID means a default one.
	f.add("team/jobs 1", "t2", "x")
	c.WorkerID = ""
	if j, err = c.Claim(ctxT(t), 5*time.Minute); err != nil || j == nil || j.TaskID != "t2" {
		t.Fatalf("Claim = %v, %v", j, err)
	}
	reqs = f.requests("/v1/queues/team%2Fjobs%201/claim")
	var bodies []map[string]any
	for _, r := range reqs[1:] {
		var b map[string]any
		_ = json.Unmarshal(r.body, &b)
		bodies = append(bodies, b)
	}
	if bodies[0]["waitSeconds"] != 0.0 || bodies[1]["waitSeconds"] != 60.0 || bodies[1]["workerId"] == "" {
		t.Errorf("claim bodies = %v", bodies)
	}
}

func TestEventsOnTheWire(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.add("jobs", "t1", "hi")
	j := claimOne(t, f.client())
	ctx := ctxT(t)
	steps := []func() error{
		func() error { return j.Status(ctx, StateWorking, "step 1") },
		func() error { return j.Status(ctx, "TASK_STATE_WORKING", "") },
		func() error { return j.Artifact(ctx, "a1", "HI", false, false) },
		func() error { return j.Artifact(ctx, "a1", "!", true, false) },
		func() error { return j.Artifact(ctx, "a1", "", true, true) },
		func() error {
			return j.Post(ctx, map[string]any{"statusUpdate": map[string]any{"status": map[string]any{"state": "TASK_STATE_WORKING"}}},
				j.StatusEvent("working", "two at once"))
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if j.Err() != nil {
			t.Fatalf("step %d ended the job: %v", i, j.Err())
		}
	}
	if err := j.Post(ctx); err != nil { // no events: renews the lease
		t.Fatal(err)
	}
	if got := normalized(t, f.requests("/v1/tasks/t1/events")[6].body); got != `{"events":[],"leaseId":"lease-1"}` {
		t.Errorf("empty post = %s", got)
	}
	if err := j.Complete(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(j.Err(), ErrDone) {
		t.Errorf("Err() after Complete = %v, want ErrDone", j.Err())
	}
	want := []string{
		`{"statusUpdate":{"contextId":"ctx-t1","status":{"message":{"messageId":"*","parts":[{"text":"step 1"}],"role":"ROLE_AGENT"},"state":"TASK_STATE_WORKING"},"taskId":"t1"}}`,
		`{"statusUpdate":{"contextId":"ctx-t1","status":{"state":"TASK_STATE_WORKING"},"taskId":"t1"}}`,
		`{"artifactUpdate":{"append":false,"artifact":{"artifactId":"a1","parts":[{"text":"HI"}]},"contextId":"ctx-t1","lastChunk":false,"taskId":"t1"}}`,
		`{"artifactUpdate":{"append":true,"artifact":{"artifactId":"a1","parts":[{"text":"!"}]},"contextId":"ctx-t1","lastChunk":false,"taskId":"t1"}}`,
		`{"artifactUpdate":{"append":true,"artifact":{"artifactId":"a1","parts":[{"text":""}]},"contextId":"ctx-t1","lastChunk":true,"taskId":"t1"}}`,
		`{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"statusUpdate":{"contextId":"ctx-t1","status":{"message":{"messageId":"*","parts":[{"text":"two at once"}],"role":"ROLE_AGENT"},"state":"TASK_STATE_WORKING"},"taskId":"t1"}}`,
		`{"statusUpdate":{"contextId":"ctx-t1","status":{"message":{"messageId":"*","parts":[{"text":"done"}],"role":"ROLE_AGENT"},"state":"TASK_STATE_COMPLETED"},"taskId":"t1"}}`,
	}
	var got []string
	f.with(func() {
		for _, e := range f.tasks["t1"].events {
			got = append(got, normalized(t, e))
		}
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
	}
	reqs := f.requests("/v1/tasks/t1/events")
	if len(reqs) != 8 {
		t.Fatalf("%d event posts, want 8", len(reqs))
	}
	for _, r := range reqs {
		var body struct {
			LeaseID string            `json:"leaseId"`
			Events  []json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || body.LeaseID != "lease-1" {
			t.Errorf("post body %s", r.body)
		}
		if r.auth != "Bearer tok" || (r.version != "" && r.version != "1.0") {
			t.Errorf("post headers %+v", r)
		}
	}
	// After the final state the relay answers task_finished.
	err := j.Status(ctx, StateWorking, "late")
	if !errors.Is(err, ErrFinished) || errors.Is(err, ErrLeaseLost) {
		t.Errorf("post after completion = %v, want task_finished", err)
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	ctx := ctxT(t)
	c := f.client()
	c.Token = "wrong"
	_, err := c.Claim(ctx, 0)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Code != CodeUnauthorized || ae.Message != "unknown worker token" {
		t.Errorf("bad token: %v", err)
	}
	if errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrCanceled) || errors.Is(err, ErrFinished) {
		t.Errorf("401 matches a sentinel: %v", err)
	}

	// task_canceled on a post ends the job.
	f.add("jobs", "t1", "x")
	j := claimOne(t, f.client())
	f.with(func() { f.tasks["t1"].canceled = true })
	err = j.Status(ctx, StateWorking, "still here")
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != CodeTaskCanceled || !errors.Is(err, ErrCanceled) {
		t.Errorf("post to a canceled task = %v", err)
	}
	if !errors.Is(j.Err(), ErrCanceled) {
		t.Errorf("Err() = %v, want canceled", j.Err())
	}

	// lease_lost on a post and on a heartbeat.
	f.add("jobs", "t2", "x")
	j = claimOne(t, f.client())
	if err := j.Status(ctx, StateWorking, ""); err != nil {
		t.Fatal(err)
	}
	f.with(func() { f.tasks["t2"].lease = "someone-else" })
	if _, err := j.Heartbeat(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("heartbeat after lease loss = %v", err)
	}
	if err := j.Artifact(ctx, "a", "x", false, true); !errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrCanceled) {
		t.Errorf("post after lease loss = %v", err)
	}
	if !errors.Is(j.Err(), ErrLeaseLost) {
		t.Errorf("Err() = %v, want lease lost", j.Err())
	}

	// A malformed event is a 400 that leaves the lease held.
	f.add("jobs", "t3", "x")
	j = claimOne(t, f.client())
	if err := j.Status(ctx, "bogus", ""); !errors.As(err, &ae) || ae.Code != CodeBadRequest || ae.Status != 400 {
		t.Errorf("bogus state = %v", err)
	}
	if j.Err() != nil {
		t.Errorf("400 ended the job: %v", j.Err())
	}

	// Retry-After and non-JSON error bodies.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/claim") {
			w.Header().Set("Retry-After", "3")
			apiErr(w, 503, CodeUnavailable, "busy")
			return
		}
		http.Error(w, "bad gateway from a proxy", http.StatusBadGateway)
	}))
	defer srv.Close()
	c = &Client{BaseURL: srv.URL, Token: "tok", Queue: "q"}
	if _, err := c.Claim(ctx, 0); !errors.As(err, &ae) || ae.Status != 503 || ae.RetryAfter != 3*time.Second {
		t.Errorf("503 = %#v", err)
	}
	j.c = c
	if err := j.Release(ctx); !errors.As(err, &ae) || ae.Status != 502 || ae.Code != "" ||
		!strings.Contains(ae.Error(), "bad gateway from a proxy") {
		t.Errorf("502 = %v", err)
	}
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.add("jobs", "t1", "x")
	j := claimOne(t, f.client())
	ctx := ctxT(t)
	if canceled, err := j.Heartbeat(ctx); canceled || err != nil {
		t.Fatalf("Heartbeat = %v, %v", canceled, err)
	}
	f.with(func() { f.tasks["t1"].canceled = true })
	if canceled, err := j.Heartbeat(ctx); !canceled || err != nil {
		t.Fatalf("Heartbeat of a canceled task = %v, %v", canceled, err)
	}
	if !errors.Is(j.Err(), ErrCanceled) {
		t.Errorf("Err() = %v", j.Err())
	}
	r := f.requests("/v1/tasks/t1/heartbeat")
	if len(r) != 2 || normalized(t, r[0].body) != `{"leaseId":"lease-1"}` || r[0].auth != "Bearer tok" {
		t.Errorf("heartbeat requests %+v", r)
	}
}

// KeepAlive sends a heartbeat every third of the lease, so that two can
// fail before the lease runs out; never more often than every 100ms.
func TestKeepAliveBeatsEveryThirdOfTheLease(t *testing.T) {
	t.Parallel()
	for lease, want := range map[time.Duration]time.Duration{
		time.Second: time.Second / 3, 30 * time.Second: 10 * time.Second, 150 * time.Millisecond: 100 * time.Millisecond, 0: 100 * time.Millisecond,
	} {
		if got := keepAliveEvery(lease); got != want {
			t.Errorf("keepAliveEvery(%v) = %v, want %v", lease, got, want)
		}
	}
}

func TestKeepAlive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(f *fake, j *Job) // what happens to the task
		want error
	}{
		{"canceled", func(f *fake, j *Job) { f.with(func() { f.tasks[j.TaskID].canceled = true }) }, ErrCanceled},
		{"lease lost", func(f *fake, j *Job) { f.with(func() { f.tasks[j.TaskID].lease = "other" }) }, ErrLeaseLost},
		{"completed", func(f *fake, j *Job) {
			if err := j.Complete(context.Background(), ""); err != nil {
				t.Error(err)
			}
		}, ErrDone},
		{"released", func(f *fake, j *Job) {
			if err := j.Release(context.Background()); err != nil {
				t.Error(err)
			}
		}, ErrDone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.leaseSeconds = 1 // heartbeats every 333ms
			f.add("jobs", "t1", "x")
			j := claimOne(t, f.client())
			kctx := j.KeepAlive(ctxT(t))
			beats := func() (n int) {
				f.with(func() { n = f.tasks["t1"].heartbeats })
				return n
			}
			eventually(t, "two heartbeats", func() bool { return beats() >= 2 }) // (how often: TestKeepAliveBeatsEveryThirdOfTheLease)
			if kctx.Err() != nil {
				t.Fatalf("context ended while the lease is held: %v", context.Cause(kctx))
			}
			tc.end(f, j)
			select {
			case <-kctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("KeepAlive's context did not end")
			}
			if cause := context.Cause(kctx); !errors.Is(cause, tc.want) {
				t.Errorf("cause = %v, want %v", cause, tc.want)
			}
			n := beats()
			time.Sleep(800 * time.Millisecond)
			if beats() != n {
				t.Errorf("heartbeats went on after the job ended")
			}
		})
	}
}

func TestKeepAliveStopsWithContext(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.leaseSeconds = 1
	f.add("jobs", "t1", "x")
	j := claimOne(t, f.client())
	ctx, cancel := context.WithCancel(ctxT(t))
	kctx := j.KeepAlive(ctx)
	cancel()
	<-kctx.Done()
	time.Sleep(600 * time.Millisecond)
	if n := len(f.requests("/v1/tasks/t1/heartbeat")); n != 0 {
		t.Errorf("%d heartbeats after ctx ended", n)
	}
	if j.Err() != nil {
		t.Errorf("Err() = %v; the lease is still held", j.Err())
	}
}

func TestWireState(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED",
		"auth-required": "TASK_STATE_AUTH_REQUIRED", "completed": "TASK_STATE_COMPLETED", "failed": "TASK_STATE_FAILED",
		"rejected": "TASK_STATE_REJECTED", "TASK_STATE_WORKING": "TASK_STATE_WORKING", "Input_Required": "TASK_STATE_INPUT_REQUIRED",
		"cancelled": "TASK_STATE_CANCELED", "TASK_STATE_CANCELLED": "TASK_STATE_CANCELED",
	} {
		if got := wireState(in); got != want {
			t.Errorf("wireState(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPartJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    Part
		want string
	}{
		{Part{}, `{"text":""}`},
		{Part{Text: "a", MediaType: "text/plain"}, `{"text":"a","mediaType":"text/plain"}`},
		{Part{Data: json.RawMessage(`{"k":1}`)}, `{"data":{"k":1}}`},
		{Part{URL: "https://x/y", Filename: "y"}, `{"url":"https://x/y","filename":"y"}`},
		{Part{Raw: []byte("hi")}, `{"raw":"aGk="}`},
	} {
		b, err := json.Marshal(tc.p)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.p, b, err, tc.want)
		}
	}
	m := Message{Parts: []Part{{Text: "a"}, {URL: "u"}, {Text: "b"}}}
	if m.Text() != "a\nb" {
		t.Errorf("Text() = %q", m.Text())
	}
}
