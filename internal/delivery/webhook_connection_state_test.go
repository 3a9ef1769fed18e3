package delivery

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/ssrf"
)

// acceptLoop accepts connections on a 127.0.0.1 port until the test ends,
// each served by serve on a goroutine of its own (the connection closed
// after), and returns the port's address.
func acceptLoop(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// At the end the listener and every connection it accepted are closed,
	// and their goroutines waited for (the client keeps connections alive).
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				serve(c)
			})
		}
	})
	return ln.Addr().String()
}

// rawServer is a webhook that, for each request read on a connection,
// calls answer with the request's number over the server (from 1). It
// returns the webhook URL and the count of requests read.
func rawServer(t *testing.T, answer func(c net.Conn, n int32)) (string, *atomic.Int32) {
	t.Helper()
	var count atomic.Int32
	addr := acceptLoop(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			answer(c, count.Add(1))
		}
	})
	return "http://" + addr + "/hook", &count
}

// Informational heads after a 100 Continue (a 103, a second 100) fail the
// attempt, and the answer behind them is never taken for the next POST's.
func TestInformationalHeadAfterContinueIsNotTheNextAnswer(t *testing.T) {
	t.Parallel()
	for _, lead := range []string{
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n",
	} {
		url, _ := rawServer(t, func(c net.Conn, n int32) {
			if n == 1 {
				_, _ = c.Write([]byte(lead))
				time.Sleep(50 * time.Millisecond)
				_, _ = c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail"))
		})
		w := clientWorkers(t)
		first, _ := postOnce(t, w, url, 2*time.Second)
		time.Sleep(100 * time.Millisecond)
		second, r := postOnce(t, w, url, 2*time.Second)
		if first.Status == 204 || second.Status != 500 {
			t.Errorf("lead %q: first %d/%s, second %d (%v); want the first failed and the second its own 500",
				lead, first.Status, first.ErrorClass, second.Status, r.err)
		}
	}
}

// A POST the webhook may have received is never sent again by the client
// itself, however the connection ends: that is the attempt's outcome.
func TestPostThatMayHaveArrivedIsSentOnce(t *testing.T) {
	t.Parallel()
	cases := map[string]func(c net.Conn){
		"close, no answer":       func(c net.Conn) { _ = c.(*net.TCPConn).CloseWrite() },
		"status line then close": func(c net.Conn) { _, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n")); _ = c.(*net.TCPConn).CloseWrite() },
		"reset, no answer":       func(c net.Conn) { _ = c.(*net.TCPConn).SetLinger(0); _ = c.Close() },
		"a 103 head in two pieces": func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 103 Early Hints\r\n"))
			time.Sleep(30 * time.Millisecond)
			_, _ = c.Write([]byte("Link: </s.css>; rel=preload\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"))
		},
		"200 head, reset in the body": func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
			time.Sleep(20 * time.Millisecond)
			_ = c.(*net.TCPConn).SetLinger(0)
			_ = c.Close()
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, count := rawServer(t, func(c net.Conn, n int32) { f(c); time.Sleep(10 * time.Millisecond) })
			w := clientWorkers(t)
			a, r := postOnce(t, w, url, 2*time.Second)
			time.Sleep(50 * time.Millisecond)
			if got := count.Load(); got != 1 {
				t.Errorf("the webhook received the POST %d times; attempt %s %q (%v)", got, a.ErrorClass, a.Error, r.err)
			}
			if name == "reset, no answer" && a.ErrorClass != ssrf.ClassConnect {
				t.Errorf("reset: class %q (%s), want connect", a.ErrorClass, a.Error)
			}
		})
	}
}

// An answer a webhook sends on an idle connection (a 408 before closing
// it) is not taken for the next POST's answer, whether the answer before
// it ended its lines with CRLF or, as fasthttp also accepts, bare LF.
func TestAnswerSentWhileIdleIsNotTheNextAnswer(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"HTTP/1.1 204 No Content\r\n\r\n", "HTTP/1.1 204 No Content\n\r\n"} {
		url, count := rawServer(t, func(c net.Conn, n int32) {
			_, _ = c.Write([]byte(first))
			go func() {
				time.Sleep(100 * time.Millisecond)
				_, _ = c.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
				_ = c.(*net.TCPConn).CloseWrite()
			}()
		})
		w := clientWorkers(t)
		if a, _ := postOnce(t, w, url, 2*time.Second); a.Status != 204 {
			t.Fatalf("%q: first POST got %d", first, a.Status)
		}
		time.Sleep(300 * time.Millisecond)
		if a, r := postOnce(t, w, url, 2*time.Second); a.Status != 204 {
			t.Fatalf("%q: second POST: %d %s (%v), webhook got %d POSTs; want its own 204", first, a.Status, a.ErrorClass, r.err, count.Load())
		}
	}
}

// A request that waited for a free connection still gets a dial with time
// to connect (fasthttp gives it none).
func TestRequestThatWaitedForAConnectionConnects(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		rw.Header().Set("Connection", "close")
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	g, err := ssrf.NewGuard([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	w := clientWorkers(t, func(d *Deps) { d.Dial = g.DialContext })
	w.client = newClient(g.DialContext, nil, 1) // one connection for two requests
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if a, r := postOnce(t, w, srv.URL+"/hook", 2*time.Second); r.err != nil || a.Status != 204 {
				t.Errorf("attempt %+v, %v", a, r.err)
			}
		})
	}
	wg.Wait()
}
