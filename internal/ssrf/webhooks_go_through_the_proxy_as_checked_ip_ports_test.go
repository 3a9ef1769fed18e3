package ssrf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/ssrf/proxytest"
)

// proxiedClient is an HTTP client on a guard that resolves with res,
// allowlists 127.0.0.1 only, and tunnels through proxyURL; roots, when
// set, are the TLS roots.
func proxiedClient(t *testing.T, res Resolver, proxyURL string, roots *x509.CertPool) *http.Client {
	t.Helper()
	u, err := ParseProxy(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	rec := &dialRecorder{t: t}
	g, err := NewGuard([]string{"127.0.0.1/32"}, WithResolver(res), withBeforeDial(rec.before), WithProxy(u))
	if err != nil {
		t.Fatal(err)
	}
	tr := g.Transport()
	tr.ForceAttemptHTTP2 = false
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestWebhooksGoThroughTheProxyAsCheckedIPPorts(t *testing.T) {
	t.Parallel()
	res := &fakeResolver{answers: map[string][]netip.Addr{
		testHost:               {loopback4},
		"example.com":          {loopback4},                        // the name in httptest's certificate
		"blocked.example.test": {netip.MustParseAddr("127.0.0.2")}, // loopback, not allowlisted: never dialled
	}}
	plain := landingServer(t, "127.0.0.1:0", false)
	secure := landingServer(t, "127.0.0.1:0", true)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	p := proxytest.New(t, "", "")
	c := proxiedClient(t, res, "http://"+p.Addr(), roots)

	body, err := get(c, "http://"+testHost+":"+serverPort(t, plain)+"/")
	if err != nil || body != "landed "+testHost+":"+serverPort(t, plain) {
		t.Fatalf("http through the proxy: %q, %v", body, err)
	}
	body, err = get(c, "https://example.com:"+serverPort(t, secure)+"/")
	if err != nil || body != "landed example.com:"+serverPort(t, secure) {
		t.Fatalf("https through the proxy: %q, %v", body, err)
	}
	// TLS is verified against the webhook's name, not the IP the proxy got.
	if _, err := get(c, "https://"+testHost+":"+serverPort(t, secure)+"/"); Classify(err) != ClassTLS {
		t.Fatalf("a certificate for another name: %v (class %q)", err, Classify(err))
	}
	want := []string{"127.0.0.1:" + serverPort(t, plain), "127.0.0.1:" + serverPort(t, secure), "127.0.0.1:" + serverPort(t, secure)}
	if got := p.Targets(); !slices.Equal(got, want) {
		t.Fatalf("CONNECT targets %v, want %v", got, want)
	}
	_, err = get(c, "http://blocked.example.test:"+serverPort(t, plain)+"/")
	var blocked *BlockedError
	if !errors.As(err, &blocked) || Classify(err) != ClassBlocked {
		t.Fatalf("a host resolving to a refused address: %v", err)
	}
	if got := p.Targets(); len(got) != len(want) {
		t.Fatalf("the proxy was asked for a refused address: %v", got)
	}
}

func TestProxyCredentialsAndRefusalsAreProxyErrors(t *testing.T) {
	t.Parallel()
	res := &fakeResolver{answers: map[string][]netip.Addr{testHost: {loopback4}}}
	plain := landingServer(t, "127.0.0.1:0", false)
	p := proxytest.New(t, "relay", "s3cret-pass")
	hook := "http://" + testHost + ":" + serverPort(t, plain) + "/"

	_, err := get(proxiedClient(t, res, "http://"+p.Addr(), nil), hook)
	var pe *ProxyError
	if !errors.As(err, &pe) || pe.Status != http.StatusProxyAuthRequired || Classify(err) != ClassProxy {
		t.Fatalf("without credentials: %v (class %q)", err, Classify(err))
	}
	_, err = get(proxiedClient(t, res, "http://relay:wrong@"+p.Addr(), nil), hook)
	if Classify(err) != ClassProxy || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong credentials: %v", err)
	}
	if body, err := get(proxiedClient(t, res, "http://relay:s3cret-pass@"+p.Addr(), nil), hook); err != nil || !strings.HasPrefix(body, "landed") {
		t.Fatalf("with credentials: %q, %v", body, err)
	}
	if auths := p.Auths(); len(auths) != 3 || auths[0] != "" || auths[2] != "Basic cmVsYXk6czNjcmV0LXBhc3M=" {
		t.Fatalf("Proxy-Authorization sent: %q", auths)
	}
	// No proxy listening: a proxy error too, not the webhook's.
	closed := proxytest.New(t, "", "")
	addr := closed.Addr()
	closed.Close()
	if _, err := get(proxiedClient(t, res, "http://"+addr, nil), hook); Classify(err) != ClassProxy {
		t.Fatalf("proxy down: %v (class %q)", err, Classify(err))
	}
	for _, raw := range []string{"https://" + p.Addr(), "http://" + testHost, "socks5://" + p.Addr(), "http://" + p.Addr() + "/x"} {
		if _, err := ParseProxy(raw); err == nil {
			t.Errorf("ParseProxy(%q) accepted", raw)
		}
	}
}
