package delivery

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/ssrf"
)

// Informational heads are found however fasthttp reads them (after blank
// lines, after a 100 ended by a bare LF, in another protocol): the real
// answer behind them is never taken for the next POST's.
func TestInformationalHeadsAreJudgedAsFasthttpReadsThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lead  string
		delay time.Duration // before POST 1's real answer
		gap   time.Duration // between the POSTs
	}{
		{"HTTP/1.1 100 Continue\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n", 50 * time.Millisecond, 100 * time.Millisecond},
		{"\r\nHTTP/1.1 103 Early Hints\r\n\r\n", 300 * time.Millisecond, 50 * time.Millisecond},
		{"HTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n", 300 * time.Millisecond, 50 * time.Millisecond},
		{"HTTP/2 103 Early Hints\r\n\r\n", 300 * time.Millisecond, 50 * time.Millisecond},
	} {
		url, _ := rawServer(t, func(c net.Conn, n int32) {
			if n == 1 {
				_, _ = c.Write([]byte(tc.lead))
				time.Sleep(tc.delay)
				_, _ = c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail"))
		})
		w := clientWorkers(t)
		first, _ := postOnce(t, w, url, 2*time.Second)
		time.Sleep(tc.gap)
		second, r := postOnce(t, w, url, 2*time.Second)
		if first.Status == 204 || second.Status != 500 {
			t.Errorf("lead %q: first %d, second %d (%v); want the second its own 500", tc.lead, first.Status, second.Status, r.err)
		}
	}
}

// corkConn holds the TLS records written while corked and sends them in
// one TCP write at flush.
type corkConn struct {
	net.Conn
	mu   sync.Mutex
	cork bool
	held []byte
}

func (c *corkConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cork {
		c.held = append(c.held, b...)
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *corkConn) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cork = false
	_, _ = c.Conn.Write(c.held)
	c.held = nil
}

// Over TLS, bytes that came in with an answer (a second, unasked answer in
// a record of its own) wait in the TLS layer, not in the socket: they too
// make the connection stale, and the next POST gets its own answer.
func TestTLSRecordThatCameWithAnAnswerIsNotTheNextAnswer(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	cfg, cert := ts.TLS.Clone(), ts.Certificate()
	ts.Close()
	var count int32
	var mu sync.Mutex
	addr := acceptLoop(t, func(raw net.Conn) {
		cc := &corkConn{Conn: raw}
		c := tls.Server(cc, cfg)
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			mu.Lock()
			count++
			n := count
			mu.Unlock()
			if n == 1 {
				cc.mu.Lock()
				cc.cork = true
				cc.mu.Unlock()
				_, _ = c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"))
				cc.flush()
				continue
			}
			_, _ = c.Write([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail"))
		}
	})
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	guard, err := ssrf.NewGuard([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	w := clientWorkers(t, func(d *Deps) {
		d.TLS, d.Dial = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, guard.DialContext
	})
	url := "https://" + addr + "/hook"
	first, r1 := postOnce(t, w, url, 2*time.Second)
	time.Sleep(100 * time.Millisecond)
	second, r := postOnce(t, w, url, 2*time.Second)
	if first.Status != 204 || second.Status != 500 {
		t.Errorf("first %d (%v), second %d %q (%v); want 204 then the second's own 500", first.Status, r1.err, second.Status, second.Response, r.err)
	}
}

// More kept-alive connections closed by the webhook than fasthttp's
// default retries: the POST passes over all of them (nothing was sent on
// them) and lands.
func TestPostPassesOverMoreDeadIdleConnectionsThanRetries(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		rw.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.IdleTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()
	w := clientWorkers(t)
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() { postOnce(t, w, srv.URL+"/hook", 2*time.Second) })
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	if a, r := postOnce(t, w, srv.URL+"/hook", 2*time.Second); a.Status != 204 {
		t.Fatalf("POST after 12 idle closes: %d %s %q (%v); want 204", a.Status, a.ErrorClass, a.Error, r.err)
	}
}
