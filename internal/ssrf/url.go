package ssrf

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// ErrInvalidURL is wrapped by CheckURL's errors for URLs that are not usable
// webhook URLs at all (as opposed to a refused destination, a *BlockedError).
var ErrInvalidURL = errors.New("invalid webhook URL")

var localhostIP = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// CheckURL vets a webhook URL when a push config is saved. It accepts only
// http and https URLs with a host. A host that is an IP literal — bracketed
// IPv6, dotted-quad IPv4, or any spelling inet_aton accepts ("2130706433",
// "0x7f000001", "0177.0.0.1", "127.1") — must be allowed by the guard, and so
// must 127.0.0.1 for "localhost" and "*.localhost"; otherwise CheckURL
// returns a *BlockedError. Other hostnames pass: their addresses are checked
// when they are dialled. Malformed URLs yield an error wrapping ErrInvalidURL.
func (g *Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("ssrf: check url: %w: %w", ErrInvalidURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("ssrf: check url: %w: scheme %q is not http or https", ErrInvalidURL, u.Scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("ssrf: check url: %w: missing // after the scheme", ErrInvalidURL)
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return fmt.Errorf("ssrf: check url: %w: no host", ErrInvalidURL)
	}
	ip, numeric, ok := hostIP(host)
	switch {
	case ok:
		if reason := g.refusal(ip); reason != "" {
			return &BlockedError{Host: host, IP: ip, Reason: reason}
		}
		return nil
	case numeric:
		return fmt.Errorf("ssrf: check url: %w: host %q looks numeric but is not an IPv4 address", ErrInvalidURL, host)
	case strings.ContainsAny(host, "% \t\r\n"):
		// A zone or whitespace after something that is not an IPv6 literal
		// ("127.0.0.1%25eth0"): no hostname looks like that.
		return fmt.Errorf("ssrf: check url: %w: malformed host %q", ErrInvalidURL, host)
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		if reason := g.refusal(localhostIP); reason != "" {
			return &BlockedError{Host: host, IP: localhostIP, Reason: reason}
		}
	}
	return nil
}

// normalizeHost lower-cases a host and drops one trailing dot, so that
// "LOCALHOST." and "127.0.0.1." are judged like "localhost" and "127.0.0.1".
func normalizeHost(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// hostIP interprets host as an IP address: an IPv6 or IPv4 literal, or an
// IPv4 address in any form inet_aton accepts. numeric reports whether the
// host's last label is a number, which (as in the WHATWG URL standard) makes
// it an IPv4 address or nothing.
func hostIP(host string) (ip netip.Addr, numeric, ok bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true, true
	}
	if ip, ok := parseInetAton(host); ok {
		return ip, true, true
	}
	return netip.Addr{}, endsInNumber(host), false
}

// endsInNumber reports whether the last dot-separated label of host is all
// decimal digits or 0x followed by hex digits.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last, 10) {
		return true
	}
	return len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') && allDigits(last[2:], 16)
}

// parseInetAton parses s the way BSD/glibc inet_aton does: one to four
// dot-separated parts, each decimal, octal (leading 0) or hex (leading 0x);
// the last part fills all remaining bytes ("127.1" is 127.0.0.1,
// "2130706433" is 127.0.0.1). Unlike inet_aton it accepts no trailing junk.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// Every part but the last is one byte; the last fills the rest.
	last := len(vals) - 1
	var n uint64
	for _, v := range vals[:last] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n = n<<8 | v
	}
	restBits := uint(8 * (4 - last))
	if vals[last] >= 1<<restBits {
		return netip.Addr{}, false
	}
	n = n<<restBits | vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// parseAtonPart parses one inet_aton part, refusing values above 2³²-1.
func parseAtonPart(p string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		d, ok := digitValue(p[i])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

func allDigits(s string, base uint64) bool {
	for i := 0; i < len(s); i++ {
		if d, ok := digitValue(s[i]); !ok || d >= base {
			return false
		}
	}
	return true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// CanonicalHost is host (a URL's host name, without brackets or port) as
// relay dials it, in one spelling: lower case, without a trailing dot, and
// an IP address (any literal or inet_aton form, IPv4-mapped IPv6) in its
// standard form. Keys kept per host (the webhook limits) use it, so that
// spellings of one host share them.
func CanonicalHost(host string) string {
	host = normalizeHost(host)
	if ip, _, ok := hostIP(host); ok {
		return unmap(ip).String() // (an IPv4-mapped IPv6 address is the IPv4 one relay dials)
	}
	return host
}
