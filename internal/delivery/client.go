package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
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

// newClient returns the HTTP/1.1 client that POSTs notifications. It is
// fasthttp's: requests run on the caller's goroutine, with no reader and
// writer goroutine per connection and no allocation per request once warm.
// Redirects are never followed and no proxy is used. Every connection is
// opened by dial and, for https, given its TLS handshake here, both within
// the attempt's remaining time (fasthttp would leave the handshake to the
// first write, with no read deadline).
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
		RetryIfErr:               retryOnceIfClosed,
		MaxConnsPerHost:          maxConns,
		MaxConnWaitTimeout:       time.Minute, // bounded by each attempt's deadline
		MaxIdleConnDuration:      30 * time.Second,
		ReadBufferSize:           64 << 10, // the largest response head accepted
		MaxResponseBodySize:      maxResponseBody,
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
	}
}

// dialConn connects to addr through dial, and for https completes the TLS
// handshake, all before the deadline timeout from now.
func dialConn(dial DialFunc, tlsConfig *tls.Config, isTLS bool, addr string, timeout time.Duration) (net.Conn, error) {
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
	return &finalOnly{Conn: c}, nil
}

// finalOnly is a client connection that is closed as soon as a response
// starts with an informational status (101-199; fasthttp reads past 100
// Continue itself). fasthttp takes such a response for the answer (the
// attempt then fails with that status) and would leave the real answer on
// the connection, for the next request to read as its own. Its Handshake
// tells fasthttp that TLS, when wanted, is done already.
type finalOnly struct {
	net.Conn
	head    [12]byte // the start of the current response: "HTTP/1.1 103"
	n       int
	checked bool
}

func (c *finalOnly) Handshake() error { return nil }

func (c *finalOnly) Write(b []byte) (int, error) {
	c.n, c.checked = 0, false // a request: the next bytes read start its answer
	return c.Conn.Write(b)
}

func (c *finalOnly) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.checked && n > 0 {
		c.n += copy(c.head[c.n:], b[:n])
		if c.n == len(c.head) {
			c.checked = true
			if h := c.head; string(h[:5]) == "HTTP/" && h[8] == ' ' && h[9] == '1' && string(h[9:12]) != "100" {
				_ = c.Conn.Close()
			}
		}
	}
	return n, err
}

// retryOnceIfClosed sends a POST again, once, on a new connection when the
// one it went out on turned out closed: by the server (an idle keep-alive
// connection it dropped as the request left; fasthttp, unlike net/http,
// does not notice that while the connection is idle), or by finalOnly.
// The same notification id goes again, as with any redelivery.
func retryOnceIfClosed(_ *fasthttp.Request, attempts int, err error) (bool, bool) {
	closed := errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
	return false, attempts == 1 && closed
}

// doPost sends req and reads the answer into resp. An answer whose body is
// over maxResponseBody is still an answer: its status counts, its body is
// not read (and its connection is not reused).
func doPost(c *fasthttp.Client, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	err := c.DoDeadline(req, resp, deadline)
	if errors.Is(err, fasthttp.ErrBodyTooLarge) && resp.StatusCode() != 0 {
		return nil // the body holds what was read of it, if anything
	}
	if errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) {
		// Timeouts fasthttp does not mark as such, for the error classes.
		return fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	return err
}
