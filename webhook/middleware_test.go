package webhook_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/webhook"
)

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	var (
		runs   atomic.Int32
		status atomic.Int32 // what the handler answers
	)
	status.Store(http.StatusInternalServerError)
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		n, ok := webhook.FromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		if !ok || n.TaskID != "task-1" || !bytes.Equal(body, n.Body) {
			t.Errorf("handler got %+v, %v, body %q", n, ok, body)
		}
		w.WriteHeader(int(status.Load()))
	}))
	nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))

	// The handler fails: not processed, so relay's retry runs it again.
	if rec := serve(h, nt.request(t)); rec.Code != 500 || runs.Load() != 1 {
		t.Fatalf("failing handler: %d, runs %d", rec.Code, runs.Load())
	}
	status.Store(http.StatusNoContent)
	if rec := serve(h, nt.request(t)); rec.Code != 204 || runs.Load() != 2 {
		t.Fatalf("retry: %d, runs %d", rec.Code, runs.Load())
	}
	// Processed: a later copy is acknowledged without running the handler.
	tr.clock.Advance(time.Minute)
	again := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	again.id, again.claims["jti"] = nt.id, nt.id
	rec := serve(h, again.request(t))
	if rec.Code != 200 || runs.Load() != 2 || !strings.Contains(rec.Body.String(), "already processed") {
		t.Fatalf("replay: %d %q, runs %d", rec.Code, rec.Body, runs.Load())
	}

	// Failures: 401 with the reason, in plain text; the handler never runs.
	bad := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	bad.claims["aud"] = "https://elsewhere.example.test/"
	rec = serve(h, bad.request(t))
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "wrong audience") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") || runs.Load() != 2 {
		t.Fatalf("bad aud: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	big := tr.verifier(func(c *webhook.Config) { c.MaxBody = 10 })
	if rec := serve(big.Middleware(h), tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking)).request(t)); rec.Code != 413 {
		t.Fatalf("large body: %d", rec.Code)
	}

	// Methods.
	if rec := serve(h, httptest.NewRequest(http.MethodPut, testHook, nil)); rec.Code != 405 || rec.Header().Get("Allow") != "POST" {
		t.Fatalf("PUT: %d %v", rec.Code, rec.Header())
	}
	if rec := serve(h, httptest.NewRequest(http.MethodGet, testHook, nil)); rec.Code != 405 {
		t.Fatalf("GET: %d", rec.Code)
	}
}

func TestMiddlewareHandlerWritesNothing(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	var runs atomic.Int32
	h := v.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runs.Add(1) }))
	nt := tr.note(a2a.V01, statusEvent(a2a.StateCompleted), sampleTask(a2a.StateCompleted))
	for range 2 {
		if rec := serve(h, nt.request(t)); rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("a handler that wrote nothing answered 200, so the second copy is a replay: runs %d", runs.Load())
	}
}

func TestMiddlewarePanicIsNotDone(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	var runs atomic.Int32
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if runs.Add(1) == 1 {
			panic("boom")
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	nt := tr.note(a2a.V03, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	func() {
		defer func() { _ = recover() }()
		serve(h, nt.request(t))
	}()
	if rec := serve(h, nt.request(t)); rec.Code != 202 || runs.Load() != 2 {
		t.Fatalf("retry after a panic: %d, runs %d", rec.Code, runs.Load())
	}
}

func TestMiddlewareConcurrentDuplicate(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if runs.Add(1) == 1 {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}))
	nt := tr.note(a2a.V10, artifactEvent(), sampleTask(a2a.StateWorking))
	first, second := nt.request(t), nt.request(t)
	var wg sync.WaitGroup
	var firstCode int
	wg.Go(func() { firstCode = serve(h, first).Code })
	<-entered
	// relay gave up waiting and retried while the first is still handled.
	if rec := serve(h, second); rec.Code != http.StatusConflict {
		t.Fatalf("duplicate in flight: %d, want 409", rec.Code)
	}
	close(release)
	wg.Wait()
	if firstCode != 200 || runs.Load() != 1 {
		t.Fatalf("first: %d, runs %d", firstCode, runs.Load())
	}
	if rec := serve(h, nt.request(t)); rec.Code != 200 || runs.Load() != 1 {
		t.Fatalf("later retry: %d, runs %d", rec.Code, runs.Load())
	}
}

func TestMiddlewareValidationEcho(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	h := tr.verifier(nil).Middleware(http.NotFoundHandler())
	rec := serve(h, httptest.NewRequest(http.MethodGet, testHook+"?validationToken=0123abcdef", nil))
	if rec.Code != 200 || rec.Body.String() != "0123abcdef" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("echo: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	if rec := serve(h, httptest.NewRequest(http.MethodGet, testHook+"?validationToken=%3Cscript%3E", nil)); rec.Code != 400 {
		t.Fatalf("markup token: %d", rec.Code)
	}
	off := tr.verifier(func(c *webhook.Config) { c.DisableValidationEcho = true }).Middleware(http.NotFoundHandler())
	if rec := serve(off, httptest.NewRequest(http.MethodGet, testHook+"?validationToken=abc", nil)); rec.Code != 405 {
		t.Fatalf("echo disabled: %d", rec.Code)
	}
}

func TestMiddlewareKeysUnavailable(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	nt := tr.note(a2a.V10, statusEvent(a2a.StateWorking), sampleTask(a2a.StateWorking))
	tr.srv.Close()
	for range 2 { // the second within MinRefetch: no fetch, the same answer
		if _, err := v.Verify(nt.request(t)); !errors.Is(err, webhook.ErrKeysUnavailable) || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("Verify: %v", err)
		}
		rec := serve(v.Middleware(http.NotFoundHandler()), nt.request(t))
		if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || rec.Body.String() != "webhook: relay's JWKS is unavailable\n" {
			t.Fatalf("JWKS down: %d %v %q", rec.Code, rec.Header(), rec.Body)
		}
	}
}

func TestFromContextEmpty(t *testing.T) {
	t.Parallel()
	if n, ok := webhook.FromContext(t.Context()); ok || n != nil {
		t.Fatal("FromContext of a bare context")
	}
	if n, ok := webhook.FromContext(webhook.NewContext(t.Context(), nil)); ok || n != nil {
		t.Fatal("FromContext of a nil notification")
	}
}

func TestMiddlewareFlush(t *testing.T) {
	t.Parallel()
	tr := newTestRelay(t, auth.ES256)
	v := tr.verifier(nil)
	var runs atomic.Int32
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		runs.Add(1)
		if err := http.NewResponseController(w).Flush(); err != nil { // through Unwrap
			t.Error(err)
		}
		w.(http.Flusher).Flush()
	}))
	nt := tr.note(a2a.V10, artifactEvent(), sampleTask(a2a.StateWorking))
	if rec := serve(h, nt.request(t)); rec.Code != 200 || !rec.Flushed {
		t.Fatalf("flushed: %d %v", rec.Code, rec.Flushed)
	}
	if rec := serve(h, nt.request(t)); rec.Code != 200 || runs.Load() != 1 {
		t.Fatalf("a flushed answer is a 200: runs %d", runs.Load())
	}
}
