// Package proxytest is an HTTP CONNECT proxy on loopback for tests of
// relay's egress proxy (ssrf.WithProxy, RELAY_WEBHOOK_PROXY). It records
// every CONNECT target, checks Proxy-Authorization when given credentials,
// and only ever connects to 127.0.0.1 or ::1 (anything else is answered
// 403 and recorded).
package proxytest

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
)

// Proxy is a running test proxy.
type Proxy struct {
	ln      net.Listener
	auth    string // the Proxy-Authorization it wants, "" for none
	mu      sync.Mutex
	targets []string
	auths   []string
	open    map[net.Conn]bool // every connection in use, closed at the end
	conns   sync.WaitGroup
}

// New starts a proxy on 127.0.0.1; with user set, it answers 407 to a
// CONNECT without Basic user:pass. It stops when t ends.
func New(t testing.TB, user, pass string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, open: map[net.Conn]bool{}}
	if user != "" {
		p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	p.conns.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Close stops the proxy and closes its connections (also done when the
// test ends).
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		_ = c.Close()
	}
	p.open = nil
	p.mu.Unlock()
	p.conns.Wait()
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Targets are the CONNECT targets asked for so far, in order.
func (p *Proxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// Auths are the Proxy-Authorization headers received, in order.
func (p *Proxy) Auths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auths...)
}

func (p *Proxy) serve() {
	defer p.conns.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		go func() {
			defer p.conns.Done()
			p.handle(c)
		}()
	}
}

// track adds c to the connections closed at the end; false when the
// proxy is stopping (c is closed).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		_ = c.Close()
		return false
	}
	p.open[c] = true
	return true
}

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	if !p.track(c) {
		return
	}
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, req.Host)
	p.auths = append(p.auths, req.Header.Get("Proxy-Authorization"))
	p.mu.Unlock()
	ap, perr := netip.ParseAddrPort(req.Host)
	switch {
	case req.Method != http.MethodConnect:
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	case p.auth != "" && req.Header.Get("Proxy-Authorization") != p.auth:
		_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
		return
	case perr != nil || !ap.Addr().Unmap().IsLoopback():
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", ap.String())
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	if !p.track(up) {
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, br) // what the client sent, buffered or not
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, up)
	_ = c.Close()
	<-done
}
