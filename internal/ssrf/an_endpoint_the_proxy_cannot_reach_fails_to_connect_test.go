package ssrf

import (
	"net"
	"net/netip"
	"testing"

	"github.com/a2arelay/relay/internal/ssrf/proxytest"
)

// A proxy that is up and answers that it could not reach the webhook
// (502 Bad Gateway, 503 as Squid answers a refused connection, 504 Gateway
// Timeout) reports the endpoint's failure, class connect, which counts to
// the endpoint's health as it does without a proxy: else no endpoint behind
// a proxy would ever be disabled. The proxy's own failures (not reached, a
// refusal such as 407 or 403) stay class proxy.
func TestAnEndpointTheProxyCannotReachFailsToConnect(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close() // nothing listens there now: the proxy's dial is refused
	res := &fakeResolver{answers: map[string][]netip.Addr{testHost: {loopback4}}}
	p := proxytest.New(t, "", "")
	_, err = get(proxiedClient(t, res, "http://"+p.Addr(), nil), "http://"+testHost+":"+port+"/")
	if err == nil || Classify(err) != ClassConnect {
		t.Fatalf("a webhook the proxy cannot reach: %v (class %q), want class %q", err, Classify(err), ClassConnect)
	}
	for status, want := range map[int]string{502: ClassConnect, 503: ClassConnect, 504: ClassConnect, 407: ClassProxy, 403: ClassProxy, 500: ClassProxy} {
		if got := Classify(&ProxyError{Proxy: "127.0.0.1:3128", Target: "127.0.0.1:443", Status: status}); got != want {
			t.Errorf("proxy status %d: class %q, want %q", status, got, want)
		}
	}
}
