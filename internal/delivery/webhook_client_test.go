package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ssrf"
	"github.com/a2arelay/relay/webhook"
)

// postOnce makes one POST of a small v1.0 notification to url with the
// workers w, bounded by timeout, and returns the attempt it logged.
func postOnce(t *testing.T, w *Workers, url string, timeout time.Duration) (Attempt, result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var a Attempt
	n := a2a.Notification{Body: []byte(`{"statusUpdate":{}}`), ContentType: "application/a2a+json", Version: "1.0"}
	r := w.post(ctx, a2a.PushConfig{ID: "c", TaskID: "t", URL: url, Token: "tok"}, n, "0.abc", &a)
	return a, r
}

func clientWorkers(t testing.TB, set ...func(*Deps)) *Workers {
	t.Helper()
	fx := newFixture(t, 1, "client", http.NotFoundHandler())
	return mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}), set...), Config{ExcerptBytes: 16})
}

// An HTTPS webhook is reached through the dialer, with the configured
// roots, and gets every header of the wire contract.
func TestPostOverTLS(t *testing.T) {
	t.Parallel()
	var got http.Header
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	var dials atomic.Int32
	guard, err := ssrf.NewGuard([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	w := clientWorkers(t, func(d *Deps) {
		d.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		d.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return guard.DialContext(ctx, network, addr)
		}
	})
	a, r := postOnce(t, w, srv.URL+"/hook", 5*time.Second)
	if r.err != nil || a.Status != http.StatusNoContent {
		t.Fatalf("attempt %+v, %v; want 204", a, r.err)
	}
	if dials.Load() != 1 {
		t.Fatalf("%d dials through the guard, want 1", dials.Load())
	}
	for _, h := range []string{webhook.HeaderID, webhook.HeaderJWT, webhook.HeaderVersion, webhook.HeaderToken, "Authorization", "User-Agent"} {
		if got.Get(h) == "" {
			t.Errorf("header %s missing (got %v)", h, got)
		}
	}
	if ct := got.Get("Content-Type"); ct != "application/a2a+json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// A webhook whose certificate is not trusted fails with error class tls.
func TestPostUntrustedCertificateIsClassTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	w := clientWorkers(t)
	if a, r := postOnce(t, w, srv.URL, 5*time.Second); r.err == nil || a.ErrorClass != ssrf.ClassTLS {
		t.Fatalf("attempt %+v, %v; want error class tls", a, r.err)
	}
}

// A webhook slower than the attempt's time fails with class timeout when
// the time is up, not when the webhook answers: this webhook answers only
// once the attempt has ended (an attempt that waited for it would never
// end), so the test asserts no duration.
func TestPostTimesOutWithTheAttempt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	w := clientWorkers(t)
	a, r := postOnce(t, w, srv.URL, 300*time.Millisecond)
	if r.err == nil || a.ErrorClass != ssrf.ClassTimeout {
		t.Fatalf("attempt %+v, %v; want error class timeout", a, r.err)
	}
}

// A large answer still counts by its status; only its start is kept, its
// connection is let go (not left half read), and the next POST gets its
// own answer whole.
func TestPostLargeAnswerCountsAndIsLetGo(t *testing.T) {
	t.Parallel()
	for _, sized := range []bool{false, true} {
		done := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/small" {
				_, _ = rw.Write([]byte("small answer"))
				return
			}
			defer func() { done <- struct{}{} }()
			if sized {
				rw.Header().Set("Content-Length", strconv.Itoa(4<<20))
			}
			_, _ = rw.Write([]byte(strings.Repeat("x", 4<<20)))
		}))
		w := clientWorkers(t)
		a, r := postOnce(t, w, srv.URL+"/large", 5*time.Second)
		if r.err != nil || a.Status != 200 || strings.Trim(a.Response, "x") != "" || len(a.Response) > 16 {
			t.Fatalf("sized %v: attempt %+v, %v; want 200 with at most a 16-byte excerpt", sized, a, r.err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("sized %v: the webhook is still writing its answer: the connection was kept half read", sized)
		}
		if a, r := postOnce(t, w, srv.URL+"/small", 5*time.Second); r.err != nil || a.Status != 200 || a.Response != "small answer" {
			t.Fatalf("sized %v: the next POST got %+v, %v", sized, a, r.err)
		}
		srv.Close()
	}
}

// A redirect is an answer, never followed.
func TestPostDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(rw http.ResponseWriter, r *http.Request) { http.Redirect(rw, r, "/elsewhere", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(rw http.ResponseWriter, r *http.Request) { followed.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	w := clientWorkers(t)
	a, _ := postOnce(t, w, srv.URL+"/hook", 5*time.Second)
	if a.Status != http.StatusFound || a.ErrorClass != ssrf.ClassHTTP || followed.Load() != 0 {
		t.Fatalf("attempt %+v, followed %d times; want the 302 itself", a, followed.Load())
	}
}

// A refused connection is class connect; an address the guard refuses is
// class blocked, and nothing is dialled.
func TestPostErrorClasses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hook"
	ln.Close()
	w := clientWorkers(t)
	if a, _ := postOnce(t, w, closed, 5*time.Second); a.ErrorClass != ssrf.ClassConnect {
		t.Errorf("refused connection: attempt %+v, want class connect", a)
	}
	strict, err := ssrf.NewGuard(nil)
	if err != nil {
		t.Fatal(err)
	}
	w = clientWorkers(t, func(d *Deps) { d.Dial = strict.DialContext })
	if a, _ := postOnce(t, w, closed, 5*time.Second); a.ErrorClass != ssrf.ClassBlocked {
		t.Errorf("loopback without an allowlist: attempt %+v, want class blocked", a)
	}
	if a, r := postOnce(t, w, "ftp://127.0.0.1/x", 5*time.Second); r.err == nil || a.Error != "bad webhook URL" {
		t.Errorf("ftp URL: attempt %+v, %v", a, r.err)
	}
}

// An informational (1xx) response before the answer fails the attempt with
// its status, and its connection is closed: the answer behind it is never
// taken for the next POST's.
func TestPostInformationalResponseIsNotTakenForTheNextAnswer(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			rw.WriteHeader(http.StatusEarlyHints)
			rw.WriteHeader(http.StatusNoContent)
			return
		}
		rw.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	w := clientWorkers(t)
	first, _ := postOnce(t, w, srv.URL+"/hook", 5*time.Second)
	if first.Status == 204 || first.ErrorClass == "" {
		t.Fatalf("first POST: %+v; want a failed attempt (the 103, or the connection closed under it)", first)
	}
	for i := range 3 {
		if a, r := postOnce(t, w, srv.URL+"/hook", 5*time.Second); r.err != nil || a.Status != http.StatusAccepted {
			t.Fatalf("POST %d after it: %+v, %v; want its own 202", i+2, a, r.err)
		}
	}
}

// A keep-alive connection the webhook closed while it sat idle costs no
// failed attempt: the POST goes again, once, on a new connection.
func TestPostAfterTheServerClosedAnIdleConnection(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.Start()
	defer srv.Close()
	w := clientWorkers(t)
	for i := range 3 {
		if a, r := postOnce(t, w, srv.URL+"/hook", 5*time.Second); r.err != nil || a.Status != 204 {
			t.Fatalf("POST %d: %+v, %v; want 204", i+1, a, r.err)
		}
		time.Sleep(200 * time.Millisecond) // the server closes the idle connection
	}
}

// Credentials in a webhook URL are not sent; the Authorization header
// stays relay's (the JWT, or the config's credentials).
func TestPostURLCredentialsDoNotReplaceAuthorization(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	w := clientWorkers(t)
	u := strings.Replace(srv.URL, "http://", "http://user:pw@", 1) + "/hook"
	if a, r := postOnce(t, w, u, 5*time.Second); r.err != nil || a.Status != 200 {
		t.Fatalf("attempt %+v, %v", a, r.err)
	}
	if auth, _ := got.Load().(string); !strings.HasPrefix(auth, "Bearer ") {
		t.Fatalf("Authorization %q, want relay's Bearer JWT", auth)
	}
}

// An HTTPS webhook that accepts the connection and never answers the TLS
// handshake ends with the attempt's deadline, class timeout.
func TestPostStalledTLSHandshakeEndsWithTheAttempt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	addr := acceptLoop(t, func(c net.Conn) { <-release }) // held open, never answered
	w := clientWorkers(t)
	done := make(chan Attempt, 1)
	go func() {
		a, _ := postOnce(t, w, "https://"+addr+"/hook", 300*time.Millisecond)
		done <- a
	}()
	select {
	case a := <-done:
		if a.ErrorClass != ssrf.ClassTimeout {
			t.Fatalf("attempt %+v, want class timeout", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt outlived its deadline: the TLS handshake has none")
	}
}

// An error text that quotes what the webhook sent is cut.
func TestErrorTextIsCapped(t *testing.T) {
	t.Parallel()
	long := errors.New(strings.Repeat("é", 2000))
	if s := errorText(long); len(s) > maxErrorText+len("…") || !utf8.ValidString(s) {
		t.Fatalf("errorText kept %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
	}
}

// An answer announcing an absurd length is not read (nor allocated): its
// status counts.
func TestPostHugeContentLengthIsNotRead(t *testing.T) {
	t.Parallel()
	url, _ := rawServer(t, func(c net.Conn, n int32) {
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nxx"))
		time.Sleep(time.Second)
	})
	w := clientWorkers(t)
	if a, r := postOnce(t, w, url, 5*time.Second); r.err != nil || a.Status != 200 {
		t.Fatalf("attempt %+v, %v; want the 200 counted", a, r.err)
	}
}
