package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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
// Every connection, TLS ones included, is opened by dial, within the
// attempt's time; redirects are never followed and no proxy is used.
func newClient(dial DialFunc, tlsConfig *tls.Config, maxConns int) *fasthttp.Client {
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &fasthttp.Client{
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return dial(ctx, "tcp", addr)
		},
		TLSConfig:                tlsConfig,
		MaxConnsPerHost:          maxConns,
		MaxConnWaitTimeout:       time.Minute, // bounded by each attempt's deadline
		MaxIdleConnDuration:      90 * time.Second,
		ReadBufferSize:           64 << 10, // the largest response head accepted
		MaxResponseBodySize:      maxResponseBody,
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
	}
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
