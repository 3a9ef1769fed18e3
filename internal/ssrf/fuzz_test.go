package ssrf

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL checks that CheckURL never panics, that it only returns nil,
// a *BlockedError or an ErrInvalidURL, that what it lets through as an IP
// literal is allowed, and that the dialer refuses every IP literal CheckURL
// refuses (without dialling anything: the dial hook vetoes every address).
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"https://hooks.example.com/a2a",
		"http://127.0.0.1:8080/",
		"http://2130706433/",
		"http://0x7f000001/",
		"http://0177.0.0.1/",
		"http://127.1/",
		"http://[::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[64:ff9b::7f00:1]/",
		"http://[2002:7f00:1::1]/",
		"http://[fe80::1%25eth0]:80/",
		"http://localhost./",
		"http://a.localhost/",
		"http://169.254.169.254/latest/meta-data/",
		"http://4294967296/",
		"http://example.0x/",
		"ftp://x/",
		"http:opaque",
		"http://[",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		g, err := NewGuard([]string{"10.1.0.0/16"}, WithResolver(&fakeResolver{}),
			withBeforeDial(func(_, address string) error {
				t.Errorf("dialled %s while fuzzing %q", address, raw)
				return errors.New("fuzz: no dialling")
			}))
		if err != nil {
			t.Fatal(err)
		}
		err = g.CheckURL(raw)
		var be *BlockedError
		switch {
		case err == nil:
			u, perr := url.Parse(raw)
			if perr != nil {
				t.Fatalf("CheckURL(%q) = nil but url.Parse fails: %v", raw, perr)
			}
			if ip, _, ok := hostIP(normalizeHost(u.Hostname())); ok && !g.Allowed(ip) {
				t.Fatalf("CheckURL(%q) = nil for refused IP %s", raw, ip)
			}
		case errors.As(err, &be):
			if g.Allowed(be.IP) || be.Reason == "" {
				t.Fatalf("CheckURL(%q) = %v for an allowed IP", raw, err)
			}
			if be.Host == "localhost" || strings.HasSuffix(be.Host, ".localhost") {
				return
			}
			_, derr := g.DialContext(context.Background(), "tcp", net.JoinHostPort(be.Host, "80"))
			if !errors.As(derr, new(*BlockedError)) {
				t.Fatalf("CheckURL(%q) refused %s but DialContext said %v", raw, be.Host, derr)
			}
		case !errors.Is(err, ErrInvalidURL):
			t.Fatalf("CheckURL(%q) = %v; want nil, *BlockedError or ErrInvalidURL", raw, err)
		}
	})
}
