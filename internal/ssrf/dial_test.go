package ssrf

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Network rule for these tests: they only ever connect to 127.0.0.1 or ::1.
// Every guard built here carries a dial hook that fails the test and vetoes
// any other address, so even a broken guard cannot reach the network.

var (
	loopback4 = netip.MustParseAddr("127.0.0.1")
	loopback6 = netip.MustParseAddr("::1")
	public4   = netip.MustParseAddr("8.8.8.8")      // never dialled
	public6   = netip.MustParseAddr("2606:4700::1") // never dialled
)

const testHost = "hooks.example.test"

func withBeforeDial(f func(network, address string) error) Option {
	return func(g *Guard) { g.beforeDial = f }
}

// dialRecorder records the addresses a guard dials, allowing only loopback.
type dialRecorder struct {
	t     testing.TB
	mu    sync.Mutex
	addrs []string
}

func (d *dialRecorder) before(_, address string) error {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || (ap.Addr() != loopback4 && ap.Addr() != loopback6) {
		d.t.Errorf("guard tried to dial %s: tests may only connect to 127.0.0.1 or ::1", address)
		return errors.New("test: refusing a non-loopback dial")
	}
	return nil
}

func (d *dialRecorder) dialled() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// fakeResolver answers from a fixed table and counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	err     error
	lookups int
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return nil, f.err
	}
	ips, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return ips, nil
}

func (f *fakeResolver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

// testGuard returns a guard with the loopback-only dial hook and, if res is
// nil, a resolver that knows no names.
func testGuard(t *testing.T, res Resolver, allow ...string) (*Guard, *dialRecorder) {
	t.Helper()
	if res == nil {
		res = &fakeResolver{}
	}
	rec := &dialRecorder{t: t}
	g, err := NewGuard(allow, WithResolver(res), withBeforeDial(rec.before))
	if err != nil {
		t.Fatal(err)
	}
	return g, rec
}

func testClient(t *testing.T, g *Guard, timeout time.Duration) *http.Client {
	tr := g.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: timeout}
}

// landingServer serves on loopback (addr "127.0.0.1:0" or "[::1]:0") and
// answers "landed <Host header>".
func landingServer(t *testing.T, addr string, tls bool) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "landed %s", r.Host)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // failed handshakes are expected
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func serverPort(t *testing.T, srv *httptest.Server) string {
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func get(c *http.Client, rawURL string) (string, error) {
	resp, err := c.Get(rawURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestDialLoopbackServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		listen string
		allow  []string
		block  bool
	}{
		{name: "v4 refused", listen: "127.0.0.1:0", block: true},
		{name: "v4 allowlisted", listen: "127.0.0.1:0", allow: []string{"127.0.0.0/8"}},
		{name: "v4 other allowlist", listen: "127.0.0.1:0", allow: []string{"::1/128", "10.0.0.0/8"}, block: true},
		{name: "v6 refused", listen: "[::1]:0", block: true},
		{name: "v6 allowlisted", listen: "[::1]:0", allow: []string{"::1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := landingServer(t, tt.listen, false)
			g, rec := testGuard(t, nil, tt.allow...)
			body, err := get(testClient(t, g, 5*time.Second), srv.URL)
			if !tt.block {
				if err != nil || !strings.HasPrefix(body, "landed ") {
					t.Fatalf("GET %s = %q, %v; want it to land", srv.URL, body, err)
				}
				return
			}
			var be *BlockedError
			if !errors.As(err, &be) || be.Reason != "loopback" {
				t.Fatalf("GET %s error = %v; want a loopback *BlockedError", srv.URL, err)
			}
			if got := Classify(err); got != "blocked" {
				t.Errorf("Classify = %q; want blocked", got)
			}
			if d := rec.dialled(); len(d) != 0 {
				t.Errorf("dialled %v; want no connection attempt", d)
			}
		})
	}
}

func TestDialRebinding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  []netip.Addr
		allow   []string
		blocked netip.Addr // zero: the request must land
	}{
		{name: "public then loopback", answer: []netip.Addr{public4, loopback4}, blocked: loopback4},
		{name: "loopback then public", answer: []netip.Addr{loopback4, public6}, blocked: loopback4},
		{name: "public v6 then mapped loopback", answer: []netip.Addr{public6, netip.MustParseAddr("::ffff:127.0.0.1")},
			blocked: netip.MustParseAddr("::ffff:127.0.0.1")},
		{name: "public then metadata", answer: []netip.Addr{public4, netip.MustParseAddr("169.254.169.254")},
			blocked: netip.MustParseAddr("169.254.169.254")},
		{name: "public then private, loopback allowed", answer: []netip.Addr{public4, netip.MustParseAddr("10.0.0.1")},
			allow: []string{"127.0.0.0/8"}, blocked: netip.MustParseAddr("10.0.0.1")},
		{name: "loopback only", answer: []netip.Addr{loopback4}, blocked: loopback4},
		{name: "nat64 loopback", answer: []netip.Addr{netip.MustParseAddr("64:ff9b::7f00:1")}, allow: []string{"127.0.0.0/8"},
			blocked: netip.MustParseAddr("64:ff9b::7f00:1")},
		{name: "loopback allowlisted", answer: []netip.Addr{loopback4}, allow: []string{"127.0.0.0/8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := landingServer(t, "127.0.0.1:0", false)
			res := &fakeResolver{answers: map[string][]netip.Addr{testHost: tt.answer}}
			g, rec := testGuard(t, res, tt.allow...)
			hostPort := net.JoinHostPort(testHost, serverPort(t, srv))
			body, err := get(testClient(t, g, 5*time.Second), "http://"+hostPort+"/hook")

			if !tt.blocked.IsValid() {
				if want := "landed " + hostPort; err != nil || body != want {
					t.Fatalf("GET = %q, %v; want %q", body, err, want)
				}
				want := net.JoinHostPort("127.0.0.1", serverPort(t, srv))
				if d := rec.dialled(); len(d) != 1 || d[0] != want {
					t.Errorf("dialled %v; want exactly [%s], the checked address", d, want)
				}
				if n := res.count(); n != 1 {
					t.Errorf("%d lookups; want 1 (the checked answer is dialled, never re-resolved)", n)
				}
				return
			}
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("GET error = %v; want a *BlockedError", err)
			}
			if be.Host != testHost || be.IP != tt.blocked {
				t.Errorf("BlockedError = %+v; want host %s, IP %s", be, testHost, tt.blocked)
			}
			if got := Classify(err); got != "blocked" {
				t.Errorf("Classify = %q; want blocked", got)
			}
			if d := rec.dialled(); len(d) != 0 {
				t.Errorf("dialled %v; want no connection attempt", d)
			}
		})
	}
}

func TestDialFallsBackToNextAddress(t *testing.T) {
	t.Parallel()
	srv := landingServer(t, "127.0.0.1:0", false)
	port := serverPort(t, srv)
	res := &fakeResolver{answers: map[string][]netip.Addr{testHost: {loopback6, loopback4}}}
	g, rec := testGuard(t, res, "127.0.0.0/8", "::1/128")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := g.DialContext(ctx, "tcp", net.JoinHostPort(testHost, port))
	if err != nil {
		t.Fatalf("DialContext: %v", err)
	}
	defer conn.Close()
	if got, want := conn.RemoteAddr().String(), net.JoinHostPort("127.0.0.1", port); got != want {
		t.Errorf("connected to %s; want %s", got, want)
	}
	if d := rec.dialled(); len(d) == 0 || d[len(d)-1] != net.JoinHostPort("127.0.0.1", port) {
		t.Errorf("dialled %v; want 127.0.0.1 last", d)
	}
}

func TestDialContextRejectsBadInput(t *testing.T) {
	t.Parallel()
	res := &fakeResolver{answers: map[string][]netip.Addr{testHost: {loopback4}}}
	g, rec := testGuard(t, res, "127.0.0.0/8")
	for _, tt := range []struct{ network, addr string }{
		{"udp", "127.0.0.1:53"},
		{"unix", "/tmp/sock"},
		{"tcp", "127.0.0.1"},
		{"tcp", ":80"},
		{"tcp6", testHost + ":80"}, // only an IPv4 answer
	} {
		conn, err := g.DialContext(context.Background(), tt.network, tt.addr)
		if err == nil {
			conn.Close()
			t.Errorf("DialContext(%s, %s) succeeded; want an error", tt.network, tt.addr)
		}
	}
	if d := rec.dialled(); len(d) != 0 {
		t.Errorf("dialled %v; want nothing", d)
	}
}

func TestControlRechecks(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, "10.1.0.0/16")
	for address, want := range map[string]string{
		"127.0.0.1:80":        "loopback",
		"[::1]:443":           "loopback",
		"[::ffff:10.2.0.1]:1": "private",
		"10.1.2.3:80":         "",
		"8.8.8.8:443":         "",
		"not-an-address":      "invalid",
	} {
		err := g.control("tcp", address, nil)
		var be *BlockedError
		switch {
		case want == "" && err != nil:
			t.Errorf("control(%s) = %v; want nil", address, err)
		case want != "" && (!errors.As(err, &be) || be.Reason != want):
			t.Errorf("control(%s) = %v; want a %s *BlockedError", address, err, want)
		}
	}
}

func TestClassifyLive(t *testing.T) {
	t.Parallel()

	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()
		g, _ := testGuard(t, nil, "127.0.0.0/8")
		_, err = get(testClient(t, g, 5*time.Second), "http://"+closed+"/")
		if got := Classify(err); got != "connect" {
			t.Errorf("Classify(%v) = %q; want connect", err, got)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		g, _ := testGuard(t, nil, "127.0.0.0/8", "::1/128")
		_, err := get(testClient(t, g, 100*time.Millisecond), srv.URL)
		if got := Classify(err); got != "timeout" {
			t.Errorf("Classify(%v) = %q; want timeout", err, got)
		}
	})

	t.Run("dns", func(t *testing.T) {
		t.Parallel()
		g, rec := testGuard(t, &fakeResolver{}, "127.0.0.0/8")
		_, err := get(testClient(t, g, 5*time.Second), "http://nowhere.example.test/")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("error = %v; want a not-found *net.DNSError", err)
		}
		if got := Classify(err); got != "dns" {
			t.Errorf("Classify(%v) = %q; want dns", err, got)
		}
		if d := rec.dialled(); len(d) != 0 {
			t.Errorf("dialled %v; want nothing", d)
		}
	})

	t.Run("dns empty answer", func(t *testing.T) {
		t.Parallel()
		res := &fakeResolver{answers: map[string][]netip.Addr{testHost: nil}}
		g, _ := testGuard(t, res)
		_, err := g.DialContext(context.Background(), "tcp", testHost+":443")
		if got := Classify(err); got != "dns" {
			t.Errorf("Classify(%v) = %q; want dns", err, got)
		}
	})

	t.Run("tls unknown authority", func(t *testing.T) {
		t.Parallel()
		srv := landingServer(t, "127.0.0.1:0", true)
		g, _ := testGuard(t, nil, "127.0.0.0/8")
		_, err := get(testClient(t, g, 5*time.Second), srv.URL)
		if got := Classify(err); got != "tls" {
			t.Errorf("Classify(%v) = %q; want tls", err, got)
		}
	})

	t.Run("tls to plain http", func(t *testing.T) {
		t.Parallel()
		srv := landingServer(t, "127.0.0.1:0", false)
		g, _ := testGuard(t, nil, "127.0.0.0/8")
		_, err := get(testClient(t, g, 5*time.Second), "https://"+srv.Listener.Addr().String()+"/")
		if got := Classify(err); got != "tls" {
			t.Errorf("Classify(%v) = %q; want tls", err, got)
		}
	})
}

func TestTransport(t *testing.T) {
	t.Parallel()
	tr := mustGuard(t).Transport()
	if tr.Proxy != nil {
		t.Error("Proxy is set; environment proxies would bypass the guard")
	}
	//lint:ignore SA1019 the deprecated dial hooks must stay unset: they would bypass the guard
	if tr.DialContext == nil || tr.DialTLSContext != nil || tr.Dial != nil || tr.DialTLS != nil {
		t.Error("transport must dial only through the guard's DialContext")
	}
	if !tr.ForceAttemptHTTP2 || tr.MaxIdleConns != 1024 || tr.MaxIdleConnsPerHost != 256 ||
		tr.IdleConnTimeout != 90*time.Second || tr.TLSHandshakeTimeout != 10*time.Second ||
		tr.ResponseHeaderTimeout != 0 {
		t.Errorf("transport settings = %+v", tr)
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion < tls.VersionTLS12 || tr.TLSClientConfig.InsecureSkipVerify {
		t.Errorf("TLS config = %+v; want TLS 1.2 or later, verified", tr.TLSClientConfig)
	}
}
