package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// DialFunc opens a TCP connection to addr ("host:port"); the SSRF guard's
// DialContext is the one to give: it resolves and checks every address
// before connecting.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// maxResponseBody is the most of a webhook's answer read: the excerpt an
// attempt logs is its start; an answer longer than this is not read at all
// (the attempt keeps its status), and its connection is closed.
const maxResponseBody = 64 << 10

// errStaleConn: a kept-alive connection turned out closed (or holding
// bytes nobody asked for) before a request was written on it. Nothing was
// sent, so the request goes again on another connection.
var errStaleConn = errors.New("kept-alive connection closed by the webhook")

// newClient returns the HTTP/1.1 client that POSTs notifications. It is
// fasthttp's: requests run on the caller's goroutine, with no reader and
// writer goroutine per connection and no allocation per request once warm.
// Redirects are never followed and no proxy is used. Every connection is
// opened by dial and, for https, given its TLS handshake here, both within
// the attempt's remaining time (fasthttp would leave the handshake to the
// first write, with no read deadline). Connections are wrapped in
// checkedConn, which does what net/http's connection reader does and
// fasthttp does not (see there).
func newClient(dial DialFunc, tlsConfig *tls.Config, maxConns int) *fasthttp.Client {
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &fasthttp.Client{
		ConfigureClient: func(hc *fasthttp.HostClient) error {
			isTLS := hc.IsTLS
			hc.DialTimeout = func(addr string, timeout time.Duration) (net.Conn, error) {
				return dialConn(dial, tlsConfig, isTLS, addr, timeout)
			}
			return nil
		},
		// Only a request that was not sent at all goes again (errStaleConn):
		// one that may have reached the webhook is the attempt's failure,
		// retried with backoff like any other.
		RetryIfErr: func(_ *fasthttp.Request, _ int, err error) (bool, bool) {
			return false, errors.Is(err, errStaleConn)
		},
		// Stale kept-alive connections are passed over (a peek each), up to
		// every connection the pool may hold.
		MaxIdemponentCallAttempts: maxConns + 2,
		MaxConnsPerHost:           maxConns,
		MaxConnWaitTimeout:        time.Minute, // bounded by each attempt's deadline
		MaxIdleConnDuration:       30 * time.Second,
		ReadBufferSize:            64 << 10, // the largest response head accepted
		MaxResponseBodySize:       maxResponseBody,
		NoDefaultUserAgentHeader:  true,
		DisablePathNormalizing:    true,
	}
}

// dialConn connects to addr through dial, and for https completes the TLS
// handshake, all before the deadline timeout from now.
func dialConn(dial DialFunc, tlsConfig *tls.Config, isTLS bool, addr string, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second // a request that waited for a connection: fasthttp gives none
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	var c net.Conn = raw
	if isTLS {
		cfg := tlsConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		c = tc
	}
	return &checkedConn{Conn: c, raw: raw}, nil
}

// checkedConn is a client connection that keeps fasthttp from taking the
// bytes of one exchange for another's. net/http keeps a reader on every
// idle connection for this; fasthttp reads only when it expects an answer.
//   - Before a request goes out on a connection that carried one before,
//     it looks, without waiting, for what arrived meanwhile: in the TLS
//     layer's buffer (a record that came in with the last answer) and in
//     the socket (one peek). The webhook having closed the connection, or
//     sent anything unasked (a 408, a second answer), means the request
//     is not written (errStaleConn) and the connection is dropped.
//   - It follows the heads of each answer as fasthttp reads them (blank
//     lines before a status line skipped, lines ended by LF or CRLF).
//     fasthttp reads one head past a first 100 Continue and takes any
//     other head for the answer; an informational head other than that
//     one 100 (a 103, a second 100) would leave the real answer on the
//     connection for the next request. Then the connection is closed: the
//     attempt fails, and the connection carries no other request.
//
// Its Handshake tells fasthttp that TLS, when wanted, is done already.
type checkedConn struct {
	net.Conn
	raw  net.Conn // the TCP connection (under TLS, when https)
	used bool     // an answer was read on it: a later request checks it first
	bad  bool     // closed by the checks above

	writing bool     // a request is being written
	state   int      // where in the answer it is: one of the conn* states
	line    [16]byte // the start of a head's status line: "HTTP/1.1 103 Ear"
	lineN   int      // bytes of it held
	inLine  int      // bytes of the current head line (CR not counted)
	first   bool     // reading a head's status line
	heads   int      // heads of this answer seen
	final   bool     // the current head is the answer's own
}

const (
	connHeadStart = iota // before a head: blank lines are skipped
	connHead             // in a head
	connBody             // past the answer's head
)

func (c *checkedConn) Handshake() error { return nil }

func (c *checkedConn) Write(b []byte) (int, error) {
	if c.bad {
		return 0, errStaleConn
	}
	if !c.writing {
		if c.used && !c.stillOpen() {
			c.bad = true
			_ = c.Conn.Close()
			return 0, errStaleConn
		}
		c.writing, c.state, c.heads = true, connHeadStart, 0
	}
	return c.Conn.Write(b)
}

// stillOpen tells, without waiting, whether nothing arrived on the idle
// connection: no bytes in the TLS layer (a read that may not wait), and
// none in the socket, nor its end (idleOpen).
func (c *checkedConn) stillOpen() bool {
	if c.Conn != c.raw {
		_ = c.Conn.SetReadDeadline(time.Now())
		var one [1]byte
		n, err := c.Conn.Read(one[:])
		_ = c.Conn.SetReadDeadline(time.Time{})
		var ne net.Error
		if n > 0 || !errors.As(err, &ne) || !ne.Timeout() {
			return false
		}
	}
	return idleOpen(c.raw)
}

// SetWriteDeadline is fasthttp's first call on a pooled connection before
// a request: a connection closed by the checks fails there, as stale, so
// that the request goes on another.
func (c *checkedConn) SetWriteDeadline(t time.Time) error {
	if c.bad {
		return errStaleConn
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *checkedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.writing = false
	for _, x := range b[:n] {
		if c.state == connBody {
			break
		}
		c.scan(x)
	}
	if c.state == connBody || err != nil {
		c.used = true
	}
	if c.bad {
		_ = c.Conn.Close()
	}
	return n, err
}

// scan follows the heads of an answer one byte at a time.
func (c *checkedConn) scan(x byte) {
	if c.state == connHeadStart {
		if x == '\r' || x == '\n' {
			return // fasthttp skips blank lines before a status line
		}
		c.state, c.first, c.lineN, c.inLine = connHead, true, 0, 0
	}
	switch x {
	case '\r':
	case '\n':
		switch {
		case c.first:
			c.first = false
			c.heads++
			c.status()
		case c.inLine == 0: // an empty line: the head ends
			if c.final {
				c.state = connBody
			} else {
				c.state = connHeadStart
			}
		}
		c.inLine = 0
	default:
		c.inLine++
		if c.first && c.lineN < len(c.line) {
			c.line[c.lineN] = x
			c.lineN++
		}
	}
}

// status judges the status line just read: the code is the token after
// its first space, as fasthttp reads it.
func (c *checkedConn) status() {
	line := c.line[:c.lineN]
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 || len(line) < sp+4 || line[sp+1] != '1' {
		c.final = true // a final answer, or one fasthttp refuses
		return
	}
	if string(line[sp+1:sp+4]) == "100" && c.heads == 1 {
		c.final = false // fasthttp reads the head after it
		return
	}
	c.bad = true // an informational head fasthttp would take for the answer
}

// doPost sends req and reads the answer into resp. An answer whose body is
// over maxResponseBody is still an answer: its status counts, its body is
// not read (and its connection is not reused).
func doPost(c *fasthttp.Client, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	err := c.DoDeadline(req, resp, deadline)
	if errors.Is(err, fasthttp.ErrBodyTooLarge) && resp.StatusCode() != 0 {
		return nil // the body holds what was read of it, if anything
	}
	switch {
	case errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout):
		// Timeouts fasthttp does not mark as such, for the error classes.
		return fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		// Closed or reset before the answer's first byte: a connection
		// failure, as net/http's error said.
		return fmt.Errorf("%w (%w)", err, syscall.ECONNRESET)
	}
	return err
}
