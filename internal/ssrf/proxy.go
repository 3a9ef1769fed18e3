package ssrf

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// An egress proxy (WithProxy) makes every connection the guard dials an
// HTTP CONNECT tunnel through one operator-run proxy, so that webhooks
// leave from the proxy's fixed addresses. The guard's checks do not move
// to the proxy: DialContext still resolves the webhook host itself and
// checks every address first (a refused one means no CONNECT at all), and
// then asks the proxy for a checked IP and port, never the name, so the
// proxy has nothing to resolve and cannot be steered elsewhere by DNS.
// TLS runs inside the tunnel, end to end with the webhook, verified
// against the webhook's host name (the caller's, as without a proxy).
// Plain-http webhooks go through CONNECT too: one path for both.
//
// The proxy itself is trusted configuration: it is dialled without the
// guard's checks (it usually sits on a private address).

// maxProxyAnswer caps the head of a proxy's answer to CONNECT.
const maxProxyAnswer = 16 << 10

// ProxyError reports a failure of the egress proxy: it could not be
// reached, or it did not open the tunnel (its status, when it answered).
type ProxyError struct {
	Proxy  string // the proxy's host:port (never its credentials)
	Target string // the IP:port asked for
	Status int    // the proxy's status, 0 if it gave none
	Err    error  // the cause, when not a status
}

func (e *ProxyError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("ssrf: proxy %s refused CONNECT %s: status %d", e.Proxy, e.Target, e.Status)
	}
	return fmt.Sprintf("ssrf: proxy %s, CONNECT %s: %v", e.Proxy, e.Target, e.Err)
}

func (e *ProxyError) Unwrap() error { return e.Err }

// upstream reports whether the proxy answered that it could not reach the
// target (502, 503 as Squid answers a refused connection, 504): the
// webhook's failure, not the proxy's.
func (e *ProxyError) upstream() bool {
	switch e.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// proxy is a parsed egress proxy.
type proxy struct {
	addr string // host:port
	auth string // the Proxy-Authorization value, "" for none
}

// ParseProxy checks an egress proxy URL: http://[user:password@]host:port.
// Its error never quotes the password.
func ParseProxy(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	switch {
	case u.Scheme != "http":
		return nil, fmt.Errorf("scheme %q: want http (relay speaks plain HTTP to the proxy and TLS through it)", u.Scheme)
	case u.Hostname() == "" || u.Port() == "":
		return nil, errors.New("want http://host:port")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("want no path, query or fragment")
	}
	return u, nil
}

// WithProxy makes the guard dial every checked address through the HTTP
// CONNECT proxy u (from ParseProxy; nil: no proxy). Credentials in u are
// sent as Proxy-Authorization: Basic.
func WithProxy(u *url.URL) Option {
	return func(g *Guard) {
		if u == nil {
			return
		}
		p := &proxy{addr: u.Host}
		if u.User != nil {
			pass, _ := u.User.Password()
			p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
		}
		g.proxy = p
	}
}

// dial opens a tunnel to target (a checked IP:port) through the proxy.
func (p *proxy) dial(ctx context.Context, target string) (net.Conn, error) {
	d := &net.Dialer{Timeout: maxDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, &ProxyError{Proxy: p.addr, Target: target, Err: err}
	}
	if err := p.connect(ctx, conn, target); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// connect asks the proxy on conn for a tunnel to target and reads its
// answer, all before ctx's deadline.
func (p *proxy) connect(ctx context.Context, conn net.Conn, target string) error {
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	} else {
		_ = conn.SetDeadline(time.Now().Add(maxDialTimeout))
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if p.auth != "" {
		req += "Proxy-Authorization: " + p.auth + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		return &ProxyError{Proxy: p.addr, Target: target, Err: err}
	}
	// One byte at a time up to the head's end: nothing of the tunnel's own
	// bytes is taken from the connection.
	br := bufio.NewReaderSize(&headReader{r: conn, left: maxProxyAnswer}, 1)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return &ProxyError{Proxy: p.addr, Target: target, Err: fmt.Errorf("reading its answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		return &ProxyError{Proxy: p.addr, Target: target, Status: resp.StatusCode}
	}
	_ = conn.SetDeadline(time.Time{})
	return nil
}

// headReader reads one byte per call, at most left in all: the reader of a
// proxy's answer head, which must not read past it.
type headReader struct {
	r    net.Conn
	left int
}

func (h *headReader) Read(b []byte) (int, error) {
	if h.left <= 0 {
		return 0, errors.New("answer head too long")
	}
	h.left--
	return h.r.Read(b[:1])
}
