package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// DialFunc opens a TCP connection to addr ("host:port"); the SSRF guard's
// DialContext is the one to give: it resolves and checks every address
// before connecting.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// newClient returns the HTTP/1.1 client that POSTs notifications. It is
// fasthttp's: requests run on the caller's goroutine, with no reader and
// writer goroutine per connection and no allocation per request once warm.
// Every connection, TLS ones included, is opened by dial, within the
// attempt's time; redirects are never followed and no proxy is used. The
// response body is streamed: only the excerpt an attempt logs is read (and
// up to 64 KiB more, so that the connection can be reused).
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
		StreamResponseBody:       true,
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
	}
}

// readExcerpt returns the first n bytes of resp's body, and drains up to
// 64 KiB more so that the connection can carry the next request.
func readExcerpt(resp *fasthttp.Response, n int) []byte {
	body := resp.BodyStream()
	if body == nil {
		b := resp.Body()
		return append([]byte(nil), b[:min(n, len(b))]...)
	}
	excerpt, _ := io.ReadAll(io.LimitReader(body, int64(n)))
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	return excerpt
}

// clientError turns fasthttp's timeouts that do not say so into ones the
// error classes (ssrf.Classify) know.
func clientError(err error) error {
	if errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) {
		return fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	return err
}
