package worker

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// A post whose answer is lost (the connection drops after the relay
// applied it) is sent again with the same Idempotency-Key and body, and the
// events are applied once; each logical post has a key of its own; a
// final post whose answer is lost still ends the job. Not parallel: it
// shortens the package's backoff.
func TestPostsSentAgainCarryTheirKey(t *testing.T) {
	defer func(lo, hi time.Duration) { backoffMin, backoffMax = lo, hi }(backoffMin, backoffMax)
	backoffMin, backoffMax = time.Millisecond, 4*time.Millisecond
	f := newFake(t)
	ctx := ctxT(t)
	f.add("jobs", "t1", "x")
	c := f.client()
	// Without keep-alive: net/http sends a request that carries an
	// Idempotency-Key again by itself when a reused connection closes, and
	// would absorb a lost answer before the worker's own retry is tested.
	c.HTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	j := claimOne(t, c)

	f.with(func() { f.drops = 1 })
	if err := j.Artifact(ctx, "out", "chunk", false, false); err != nil {
		t.Fatalf("post whose first answer was lost: %v", err)
	}
	f.with(func() { f.drops = 2 })
	if err := j.Complete(ctx, "done"); err != nil {
		t.Fatalf("final post whose first two answers were lost: %v", err)
	}
	if !errors.Is(j.Err(), ErrDone) {
		t.Fatalf("Err() = %v after the final post, want ErrDone", j.Err())
	}
	reqs := f.requests("/v1/tasks/t1/events")
	if len(reqs) != 5 {
		t.Fatalf("%d event posts sent, want 2 + 3", len(reqs))
	}
	for _, r := range reqs {
		if r.key == "" || len(r.key) > 255 {
			t.Fatalf("post without a valid Idempotency-Key: %q", r.key)
		}
	}
	if reqs[0].key != reqs[1].key || string(reqs[0].body) != string(reqs[1].body) {
		t.Errorf("the artifact's retry: key %q body %s, first key %q body %s", reqs[1].key, reqs[1].body, reqs[0].key, reqs[0].body)
	}
	if reqs[2].key != reqs[3].key || reqs[3].key != reqs[4].key || string(reqs[2].body) != string(reqs[4].body) {
		t.Errorf("the final post's retries changed key or body: %q %q %q", reqs[2].key, reqs[3].key, reqs[4].key)
	}
	if reqs[0].key == reqs[2].key {
		t.Errorf("two posts share the key %q", reqs[0].key)
	}
	f.with(func() {
		if n := len(f.tasks["t1"].events); n != 2 {
			t.Errorf("the task got %d events, want 2", n)
		}
	})
}

// PostWithKey sends the caller's key; the key sent again with other events
// is refused and not retried; a post whose answers never come gives up
// after PostAttempts tries. Not parallel: it shortens the package's backoff.
func TestPostWithKey(t *testing.T) {
	defer func(lo, hi time.Duration) { backoffMin, backoffMax = lo, hi }(backoffMin, backoffMax)
	backoffMin, backoffMax = time.Millisecond, 4*time.Millisecond
	f := newFake(t)
	ctx := ctxT(t)
	f.add("jobs", "t1", "x")
	c := f.client()
	// Without keep-alive: net/http sends a request that carries an
	// Idempotency-Key again by itself when a reused connection closes, and
	// would absorb a lost answer before the worker's own retry is tested.
	c.HTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	j := claimOne(t, c)
	if err := j.PostWithKey(ctx, "my-key-1", j.StatusEvent(StateWorking, "")); err != nil {
		t.Fatal(err)
	}
	err := j.PostWithKey(ctx, "my-key-1", j.ArtifactEvent("a", "other", false, true))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Code != CodeIdempotencyKeyReused {
		t.Fatalf("the key with other events: %v, want 422 %s", err, CodeIdempotencyKeyReused)
	}
	if j.Err() != nil {
		t.Fatalf("a reused key ended the job: %v", j.Err())
	}
	f.with(func() { f.drops = 1000 })
	if err := j.PostWithKey(ctx, "my-key-2", j.StatusEvent(StateWorking, "")); err == nil {
		t.Fatal("a post whose answers never came succeeded")
	}
	// (net/http may send a request with an Idempotency-Key again by itself,
	// on a kept-alive connection that closed: more sends, never fewer.)
	reqs := f.requests("/v1/tasks/t1/events")
	if len(reqs) < 2+PostAttempts || len(reqs) > 2+2*PostAttempts || reqs[0].key != "my-key-1" || reqs[1].key != "my-key-1" {
		t.Fatalf("%d posts (want %d to %d), keys %q %q", len(reqs), 2+PostAttempts, 2+2*PostAttempts, reqs[0].key, reqs[1].key)
	}
	for _, r := range reqs[2:] {
		if r.key != "my-key-2" {
			t.Fatalf("a retry of my-key-2 carried %q", r.key)
		}
	}
}
