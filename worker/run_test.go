package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// run starts c.Run and returns a function that stops it and returns its result.
func run(t *testing.T, c *Client, handle func(context.Context, *Job) error) (stop func() error) {
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, handle) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its context ended")
			return nil
		}
	}
}

func (f *fake) state(id string) (state string, lease string, events int) {
	f.with(func() { state, lease, events = f.tasks[id].state, f.tasks[id].lease, len(f.tasks[id].events) })
	return
}

func TestRunReleasesOnShutdown(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.add("jobs", "t1", "x")
	started := make(chan struct{})
	var handlerCause error
	stop := run(t, f.client(), func(ctx context.Context, j *Job) error {
		if err := j.Status(ctx, StateWorking, "working"); err != nil {
			return err
		}
		close(started)
		<-ctx.Done()
		handlerCause = context.Cause(ctx)
		return ctx.Err()
	})
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("handler not called")
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v, want nil on shutdown", err)
	}
	if !errors.Is(handlerCause, context.Canceled) {
		t.Errorf("handler's cause = %v", handlerCause)
	}
	var releases int
	f.with(func() { releases = f.tasks["t1"].releases })
	state, lease, events := f.state("t1")
	if releases != 1 || lease != "" || state != "TASK_STATE_SUBMITTED" || events != 1 {
		t.Errorf("after shutdown: releases %d, lease %q, state %s, %d events", releases, lease, state, events)
	}
	r := f.requests("/v1/tasks/t1/release")
	if len(r) != 1 || normalized(t, r[0].body) != `{"leaseId":"lease-1"}` {
		t.Errorf("release requests %+v", r)
	}
}

func TestRunFailsTheTask(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.add("jobs", "t1", "x")
	f.add("jobs", "t2", "x")
	f.add("jobs", "t3", "x")
	f.add("jobs", "t4", "x")
	stop := run(t, f.client(), func(ctx context.Context, j *Job) error {
		switch j.TaskID {
		case "t1":
			return errors.New("boom")
		case "t2":
			return nil // without a final state
		case "t3":
			panic("oops")
		}
		return j.Complete(ctx, "ok")
	})
	eventually(t, "t4 completed", func() bool { s, _, _ := f.state("t4"); return s == "TASK_STATE_COMPLETED" })
	if err := stop(); err != nil {
		t.Error(err)
	}
	for id, text := range map[string]string{"t1": "boom", "t2": "worker returned without ending the task", "t3": "worker panicked: oops"} {
		var last string
		f.with(func() { ev := f.tasks[id].events; last = normalized(t, ev[len(ev)-1]) })
		want := fmt.Sprintf(`{"statusUpdate":{"contextId":"ctx-%s","status":{"message":{"messageId":"*","parts":[{"text":%q}],"role":"ROLE_AGENT"},"state":"TASK_STATE_FAILED"},"taskId":"%s"}}`, id, text, id)
		if last != want {
			t.Errorf("%s: last event %s, want %s", id, last, want)
		}
	}
}

func TestRunCanceledTask(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.leaseSeconds = 1
	f.add("jobs", "t1", "x")
	f.add("jobs", "t2", "x")
	causes := make(chan error, 1)
	stop := run(t, f.client(), func(ctx context.Context, j *Job) error {
		if j.TaskID == "t2" {
			return j.Complete(ctx, "")
		}
		f.with(func() { f.tasks[j.TaskID].canceled = true })
		<-ctx.Done() // the next heartbeat reports the cancellation
		causes <- context.Cause(ctx)
		return ctx.Err()
	})
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrCanceled) {
			t.Errorf("cause = %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler's context not canceled")
	}
	eventually(t, "t2 completed", func() bool { s, _, _ := f.state("t2"); return s == "TASK_STATE_COMPLETED" })
	if err := stop(); err != nil {
		t.Error(err)
	}
	if n := len(f.requests("/v1/tasks/t1/events")) + len(f.requests("/v1/tasks/t1/release")); n != 0 {
		t.Errorf("%d posts/releases for the canceled task", n)
	}
}

// Not parallel: it shortens the package's backoff.
func TestRunRetriesClaims(t *testing.T) {
	defer func(lo, hi time.Duration) { backoffMin, backoffMax = lo, hi }(backoffMin, backoffMax)
	backoffMin, backoffMax = time.Millisecond, 4*time.Millisecond
	f := newFake(t)
	f.claimErrs = []int{503, 503, 500}
	f.add("jobs", "t1", "x")
	stop := run(t, f.client(), func(ctx context.Context, j *Job) error { return j.Complete(ctx, "") })
	eventually(t, "t1 completed", func() bool { s, _, _ := f.state("t1"); return s == "TASK_STATE_COMPLETED" })
	if err := stop(); err != nil {
		t.Error(err)
	}
	if n := len(f.requests("/v1/queues/jobs/claim")); n < 4 {
		t.Errorf("%d claims, want at least 4", n)
	}

	// A transport error (nothing listens) is retried until ctx ends.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c := &Client{BaseURL: dead.URL, Token: "tok", Queue: "jobs"}
	stop = run(t, c, func(context.Context, *Job) error { return nil })
	time.Sleep(50 * time.Millisecond)
	if err := stop(); err != nil {
		t.Errorf("Run with a dead relay = %v, want nil after ctx ends", err)
	}
}

func TestRunStopsOnUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c := f.client()
	c.Token = "wrong"
	done := make(chan error, 1)
	go func() { done <- c.Run(ctxT(t), func(context.Context, *Job) error { return nil }) }()
	select {
	case err := <-done:
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 401 {
			t.Errorf("Run = %v, want the 401", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run retried a 401")
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for n, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second} {
		for range 20 {
			if d := backoff(n); d < want/2 || d > want {
				t.Errorf("backoff(%d) = %v, want in [%v, %v]", n, d, want/2, want)
			}
		}
	}
	for _, n := range []int{6, 10, 62, 1000} {
		if d := backoff(n); d < 15*time.Second || d > 30*time.Second {
			t.Errorf("backoff(%d) = %v, want capped at 30s", n, d)
		}
	}
}
