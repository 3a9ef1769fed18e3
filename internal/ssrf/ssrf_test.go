package ssrf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

func mustGuard(t testing.TB, allow ...string) *Guard {
	t.Helper()
	g, err := NewGuard(allow)
	if err != nil {
		t.Fatalf("NewGuard(%q): %v", allow, err)
	}
	return g
}

func TestNewGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		allow   []string
		wantErr string // substring; "" means success
	}{
		{name: "nil", allow: nil},
		{name: "prefixes", allow: []string{"127.0.0.0/8", "::1/128", "10.1.0.0/16"}},
		{name: "bare IPs", allow: []string{"127.0.0.1", "::1", " 10.0.0.1 "}},
		{name: "unmasked prefix", allow: []string{"10.1.2.3/8"}},
		{name: "garbage", allow: []string{"127.0.0.0/8", "not-an-ip"}, wantErr: `entry 1 "not-an-ip"`},
		{name: "bad prefix length", allow: []string{"10.0.0.0/33"}, wantErr: `"10.0.0.0/33"`},
		{name: "empty", allow: []string{""}, wantErr: `entry 0 ""`},
		{name: "hostname", allow: []string{"localhost"}, wantErr: `"localhost"`},
		{name: "zone", allow: []string{"fe80::1%eth0"}, wantErr: `"fe80::1%eth0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := NewGuard(tt.allow)
			if tt.wantErr == "" {
				if err != nil || g == nil {
					t.Fatalf("NewGuard(%q) = %v, %v; want a guard", tt.allow, g, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewGuard(%q) error = %v; want it to contain %s", tt.allow, err, tt.wantErr)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip     string
		allow  []string
		reason string // "" means allowed
	}{
		// Public addresses: only ever checked here, never dialled.
		{ip: "8.8.8.8"},
		{ip: "1.1.1.1"},
		{ip: "2606:4700::1"},
		{ip: "2a00:1450:4001::1"},
		{ip: "::ffff:8.8.8.8"},
		{ip: "64:ff9b::808:808"},                 // NAT64 of 8.8.8.8
		{ip: "2002:808:808::1"},                  // 6to4 of 8.8.8.8
		{ip: "172.32.0.1"},                       // just outside 172.16/12
		{ip: "100.128.0.1"},                      // just outside 100.64/10
		{ip: "198.20.0.1"},                       // just outside 198.18/15
		{ip: "192.0.1.1"},                        // just outside 192.0.0/24
		{ip: "223.255.255.255"},                  // just below multicast
		{ip: "2001:1::1"},                        // just outside Teredo 2001::/32
		{ip: "2001:db9::1"},                      // just outside 2001:db8::/32
		{ip: "64:ff9b:2::1", reason: "reserved"}, // outside 2000::/3
		// Loopback.
		{ip: "127.0.0.1", reason: "loopback"},
		{ip: "127.255.255.254", reason: "loopback"},
		{ip: "::1", reason: "loopback"},
		// Private.
		{ip: "10.0.0.1", reason: "private"},
		{ip: "172.16.0.1", reason: "private"},
		{ip: "172.31.255.255", reason: "private"},
		{ip: "192.168.1.1", reason: "private"},
		{ip: "fc00::1", reason: "private"},
		{ip: "fd12:3456::1", reason: "private"},
		// Link-local, including the cloud metadata address.
		{ip: "169.254.169.254", reason: "link-local"},
		{ip: "fe80::1", reason: "link-local"},
		{ip: "fe80::1%eth0", reason: "link-local"},
		{ip: "febf::1", reason: "link-local"},
		// CGNAT.
		{ip: "100.64.0.1", reason: "cgnat"},
		{ip: "100.127.255.255", reason: "cgnat"},
		// Multicast.
		{ip: "224.0.0.1", reason: "multicast"},
		{ip: "239.255.255.250", reason: "multicast"},
		{ip: "ff02::1", reason: "multicast"},
		// Unspecified, this network, broadcast, reserved.
		{ip: "0.0.0.0", reason: "unspecified"},
		{ip: "::", reason: "unspecified"},
		{ip: "0.1.2.3", reason: "this-network"},
		{ip: "255.255.255.255", reason: "broadcast"},
		{ip: "240.0.0.1", reason: "reserved"},
		{ip: "255.255.255.254", reason: "reserved"},
		// Benchmarking, documentation, IETF.
		{ip: "198.18.0.1", reason: "benchmarking"},
		{ip: "198.19.255.255", reason: "benchmarking"},
		{ip: "2001:2::1", reason: "benchmarking"},
		{ip: "192.0.2.1", reason: "documentation"},
		{ip: "198.51.100.1", reason: "documentation"},
		{ip: "203.0.113.1", reason: "documentation"},
		{ip: "2001:db8::1", reason: "documentation"},
		{ip: "3fff::1", reason: "documentation"},
		{ip: "192.0.0.1", reason: "ietf-protocol"},
		// NAT64: judged by the embedded IPv4 address; local-use always refused.
		{ip: "64:ff9b::7f00:1", reason: "loopback via nat64"},
		{ip: "64:ff9b::127.0.0.1", reason: "loopback via nat64"},
		{ip: "64:ff9b::a9fe:a9fe", reason: "link-local via nat64"},
		{ip: "64:ff9b::a00:1", reason: "private via nat64"},
		{ip: "64:ff9b:1::808:808", reason: "nat64-local-use"},
		// 6to4: judged by the embedded IPv4 address.
		{ip: "2002:7f00:1::1", reason: "loopback via 6to4"},
		{ip: "2002:c0a8:101::1", reason: "private via 6to4"},
		// Teredo, discard-only, site-local.
		{ip: "2001::1", reason: "teredo"},
		{ip: "2001:0:4136:e378:8000:63bf:3fff:fdd2", reason: "teredo"},
		{ip: "100::1", reason: "discard-only"},
		{ip: "fec0::1", reason: "site-local"},
		// IPv4-mapped and IPv4-compatible forms are judged as IPv4.
		{ip: "::ffff:127.0.0.1", reason: "loopback"},
		{ip: "::ffff:7f00:1", reason: "loopback"},
		{ip: "::ffff:10.0.0.1", reason: "private"},
		{ip: "::ffff:169.254.169.254", reason: "link-local"},
		{ip: "::127.0.0.1", reason: "loopback"},
		{ip: "::a00:1", reason: "private"},
		{ip: "::8.8.8.8"},
		// The allowlist: raw and unmapped addresses, exact ranges only.
		{ip: "127.0.0.1", allow: []string{"127.0.0.0/8"}},
		{ip: "::ffff:127.0.0.1", allow: []string{"127.0.0.0/8"}},
		{ip: "::127.0.0.1", allow: []string{"127.0.0.0/8"}},
		{ip: "::ffff:127.0.0.1", allow: []string{"::ffff:127.0.0.0/104"}},
		{ip: "::1", allow: []string{"127.0.0.0/8"}, reason: "loopback"},
		{ip: "::1", allow: []string{"::1"}},
		{ip: "127.0.0.1", allow: []string{"::1/128"}, reason: "loopback"},
		{ip: "127.0.0.2", allow: []string{"127.0.0.1"}, reason: "loopback"},
		{ip: "10.1.2.3", allow: []string{"10.1.0.0/16"}},
		{ip: "10.2.0.1", allow: []string{"10.1.0.0/16"}, reason: "private"},
		{ip: "fe80::1%eth0", allow: []string{"fe80::/10"}},
		{ip: "64:ff9b::7f00:1", allow: []string{"127.0.0.0/8"}, reason: "loopback via nat64"},
		{ip: "64:ff9b::7f00:1", allow: []string{"64:ff9b::/96"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s allow %v", tt.ip, tt.allow), func(t *testing.T) {
			t.Parallel()
			g := mustGuard(t, tt.allow...)
			ip := netip.MustParseAddr(tt.ip)
			if got := g.refusal(ip); got != tt.reason {
				t.Errorf("refusal(%s) = %q; want %q", ip, got, tt.reason)
			}
			if got, want := g.Allowed(ip), tt.reason == ""; got != want {
				t.Errorf("Allowed(%s) = %v; want %v", ip, got, want)
			}
		})
	}
}

func TestAllowedInvalidAndZero(t *testing.T) {
	t.Parallel()
	var zero Guard
	if zero.Allowed(netip.Addr{}) {
		t.Error("zero Guard allows the invalid address")
	}
	if zero.Allowed(netip.MustParseAddr("127.0.0.1")) {
		t.Error("zero Guard allows loopback")
	}
	if !zero.Allowed(netip.MustParseAddr("8.8.8.8")) {
		t.Error("zero Guard refuses a public address")
	}
	if g := mustGuard(t, "0.0.0.0/0", "::/0"); g.Allowed(netip.Addr{}) {
		t.Error("allow-all Guard allows the invalid address")
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	const blocked, invalid = "blocked", "invalid"
	tests := []struct {
		url   string
		allow []string
		want  string // "", blocked or invalid
	}{
		{url: "https://hooks.example.com/a2a?x=1"},
		{url: "http://hooks.example.com:8080/"},
		{url: "HTTPS://Hooks.Example.com/"},
		{url: "https://8.8.8.8/"},
		{url: "https://[2606:4700::1]:8443/"},
		{url: "http://0x08080808/"}, // 8.8.8.8
		{url: "https://deadbeef/"},  // hex-ish but not numeric: a name
		{url: "https://1e100.net/"}, // starts with digits, ends with a name
		{url: "https://user:pw@hooks.example.com/"},
		{url: "http://127.0.0.1:9999@hooks.example.com/"}, // userinfo, not the host
		// Every spelling of 127.0.0.1.
		{url: "http://127.0.0.1/", want: blocked},
		{url: "http://127.0.0.1:8080/hook", want: blocked},
		{url: "http://127.0.0.1./", want: blocked},
		{url: "http://2130706433/", want: blocked},
		{url: "http://0x7f000001/", want: blocked},
		{url: "http://0X7F000001/", want: blocked},
		{url: "http://0177.0.0.1/", want: blocked},
		{url: "http://0177.0000.0000.0001/", want: blocked},
		{url: "http://0x7f.0x0.0x0.0x1/", want: blocked},
		{url: "http://127.1/", want: blocked},
		{url: "http://127.0.1/", want: blocked},
		{url: "http://017700000001/", want: blocked},
		{url: "http://%31%32%37.0.0.1/", want: invalid}, // net/url refuses escaped ASCII in hosts
		{url: "http://[::1]/", want: blocked},
		{url: "http://[::ffff:127.0.0.1]/", want: blocked},
		{url: "http://[::ffff:7f00:1]:80/", want: blocked},
		{url: "http://[64:ff9b::7f00:1]/", want: blocked},
		{url: "http://[0:0:0:0:0:0:0:1]/", want: blocked},
		{url: "http://[fe80::1%25eth0]/", want: blocked},
		{url: "http://[127.0.0.1]/", want: invalid}, // net/url refuses v4 in brackets
		{url: "http://0/", want: blocked},
		{url: "http://0.0.0.0/", want: blocked},
		{url: "http://[::]/", want: blocked},
		// Other refused ranges.
		{url: "http://169.254.169.254/latest/meta-data/", want: blocked},
		{url: "http://2852039166/", want: blocked}, // 169.254.169.254
		{url: "https://10.0.0.1/", want: blocked},
		{url: "https://192.168.0.1/", want: blocked},
		{url: "https://100.64.0.1/", want: blocked},
		{url: "https://[fd00::1]/", want: blocked},
		// localhost names.
		{url: "http://localhost/", want: blocked},
		{url: "http://LOCALHOST:8080/", want: blocked},
		{url: "http://localhost./", want: blocked},
		{url: "http://hooks.localhost/", want: blocked},
		{url: "http://localhost/", allow: []string{"127.0.0.0/8"}},
		{url: "http://a.b.localhost/", allow: []string{"127.0.0.1"}},
		{url: "http://localhost/", allow: []string{"::1"}, want: blocked},
		{url: "http://notlocalhost/"},
		{url: "http://localhost.example.com/"},
		// Allowlisted literals.
		{url: "http://127.0.0.1:8080/", allow: []string{"127.0.0.0/8"}},
		{url: "http://0x7f000001/", allow: []string{"127.0.0.0/8"}},
		{url: "http://[::ffff:127.0.0.1]/", allow: []string{"127.0.0.0/8"}},
		{url: "http://[::1]:8080/", allow: []string{"::1/128"}},
		{url: "http://10.1.2.3/", allow: []string{"10.1.0.0/16"}},
		// Not webhook URLs.
		{url: "", want: invalid},
		{url: "hooks.example.com/path", want: invalid},
		{url: "ftp://hooks.example.com/", want: invalid},
		{url: "file:///etc/passwd", want: invalid},
		{url: "gopher://127.0.0.1/", want: invalid},
		{url: "javascript:alert(1)", want: invalid},
		{url: "http:hooks.example.com", want: invalid},
		{url: "http:///path", want: invalid},
		{url: "http://:8080/", want: invalid},
		{url: "http://host:port/", want: invalid},
		{url: "http://exa mple.com/", want: invalid},
		{url: "http://[::1/", want: invalid},
		{url: "http://256.0.0.1/", want: invalid},
		{url: "http://1.2.3.4.5/", want: invalid},
		{url: "http://4294967296/", want: invalid},
		{url: "http://0x100000000/", want: invalid},
		{url: "http://08.0.0.1/", want: invalid},
		{url: "http://1..1/", want: invalid},
		{url: "http://example.0x/", want: invalid},
		{url: "http://127.0.0.1%25eth0/", want: invalid},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s allow %v", tt.url, tt.allow), func(t *testing.T) {
			t.Parallel()
			err := mustGuard(t, tt.allow...).CheckURL(tt.url)
			var be *BlockedError
			switch tt.want {
			case "":
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v; want nil", tt.url, err)
				}
			case blocked:
				if !errors.As(err, &be) {
					t.Fatalf("CheckURL(%q) = %v; want a *BlockedError", tt.url, err)
				}
				if be.Reason == "" || !be.IP.IsValid() || be.Host == "" {
					t.Errorf("CheckURL(%q) BlockedError = %+v; want host, IP and reason", tt.url, be)
				}
			case invalid:
				if !errors.Is(err, ErrInvalidURL) || errors.As(err, &be) {
					t.Fatalf("CheckURL(%q) = %v; want an ErrInvalidURL", tt.url, err)
				}
			}
		})
	}
}

func TestCheckURLBlockedDetails(t *testing.T) {
	t.Parallel()
	g := mustGuard(t)
	for raw, want := range map[string]BlockedError{
		"http://0x7f000001/":        {Host: "0x7f000001", IP: netip.MustParseAddr("127.0.0.1"), Reason: "loopback"},
		"http://[::ffff:10.0.0.1]/": {Host: "::ffff:10.0.0.1", IP: netip.MustParseAddr("::ffff:10.0.0.1"), Reason: "private"},
		"http://Hooks.LocalHost./x": {Host: "hooks.localhost", IP: netip.MustParseAddr("127.0.0.1"), Reason: "loopback"},
		"http://169.254.169.254/":   {Host: "169.254.169.254", IP: netip.MustParseAddr("169.254.169.254"), Reason: "link-local"},
		"https://[64:ff9b::a00:1]/": {Host: "64:ff9b::a00:1", IP: netip.MustParseAddr("64:ff9b::a00:1"), Reason: "private via nat64"},
	} {
		var be *BlockedError
		if err := g.CheckURL(raw); !errors.As(err, &be) || *be != want {
			t.Errorf("CheckURL(%q) = %v; want %+v", raw, err, want)
		}
	}
}

func TestParseInetAton(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1":                  "127.0.0.1",
		"2130706433":                 "127.0.0.1",
		"0x7f000001":                 "127.0.0.1",
		"0177.0.0.1":                 "127.0.0.1",
		"127.1":                      "127.0.0.1",
		"127.0.1":                    "127.0.0.1",
		"1.2.65535":                  "1.2.255.255",
		"1.16777215":                 "1.255.255.255",
		"0":                          "0.0.0.0",
		"00":                         "0.0.0.0",
		"4294967295":                 "255.255.255.255",
		"0xffffffff":                 "255.255.255.255",
		"037777777777":               "255.255.255.255",
		"0xA.0Xb.012.013":            "10.11.10.11",
		"1.2.65536":                  "",
		"1.2.3.256":                  "",
		"256.1":                      "",
		"4294967296":                 "",
		"0x":                         "",
		"09":                         "",
		"1.2.3.4.5":                  "",
		"1..2":                       "",
		".1.2.3":                     "",
		"1.2.3.":                     "",
		"":                           "",
		"0x1g":                       "",
		"-1":                         "",
		"+1":                         "",
		"1 ":                         "",
		"99999999999999999999999999": "",
	} {
		ip, ok := parseInetAton(in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != want {
			t.Errorf("parseInetAton(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	blocked := &BlockedError{Host: "h", IP: netip.MustParseAddr("127.0.0.1"), Reason: "loopback"}
	dnsErr := &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	readReset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "https://h/", Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"blocked", blocked, "blocked"},
		{"blocked wrapped", urlErr(fmt.Errorf("deliver: %w", blocked)), "blocked"},
		{"blocked from control", &net.OpError{Op: "dial", Err: blocked}, "blocked"},
		{"dns", urlErr(fmt.Errorf("ssrf: resolve h: %w", dnsErr)), "dns"},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "h", IsTimeout: true}, "dns"},
		{"deadline", context.DeadlineExceeded, "timeout"},
		{"deadline wrapped", urlErr(fmt.Errorf("x: %w", context.DeadlineExceeded)), "timeout"},
		{"os deadline", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, "timeout"},
		{"timeout hidden by wrapper", urlErr(fmt.Errorf("x: %w", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded})), "timeout"},
		{"timeout in join", errors.Join(errors.New("a"), &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ETIMEDOUT)}), "timeout"},
		{"record header", urlErr(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), "tls"},
		{"alert", urlErr(&net.OpError{Op: "remote error", Err: tls.AlertError(40)}), "tls"},
		{"verification", urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), "tls"},
		{"unknown authority", x509.UnknownAuthorityError{}, "tls"},
		{"hostname", x509.HostnameError{Host: "h"}, "tls"},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired}, "tls"},
		{"refused", urlErr(dialRefused), "connect"},
		{"reset", urlErr(readReset), "connect"},
		{"dial other", &net.OpError{Op: "dial", Err: errors.New("no route")}, "connect"},
		{"unreachable", os.NewSyscallError("connect", syscall.EHOSTUNREACH), "connect"},
		{"canceled", context.Canceled, "http"},
		{"plain", errors.New("server closed connection"), "http"},
		{"status", fmt.Errorf("deliver: status 500"), "http"},
		{"error text is not matched", errors.New("tls: connection refused timeout dns"), "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %q; want %q", tt.err, got, tt.want)
			}
		})
	}
}

// A TLS alert the server sends (here: no protocol version in common) is
// class tls, not http.
func TestClassifyRemoteTLSAlert(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	c, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{MaxVersion: tls.VersionTLS12, InsecureSkipVerify: true})
	if err == nil {
		c.Close()
		t.Fatal("handshake succeeded")
	}
	if got := Classify(err); got != ClassTLS {
		t.Fatalf("Classify(%v) = %q, want %q", err, got, ClassTLS)
	}
}
