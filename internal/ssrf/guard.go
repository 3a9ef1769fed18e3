// Package ssrf is the SSRF guard of relay's webhook HTTP client.
//
// Webhook URLs come from clients, so relay must never be talked into
// POSTing to its own loopback, the operator's private network, cloud
// metadata endpoints (169.254.169.254) or any other non-public address.
// The guard refuses such destinations twice:
//
//   - when a push config is saved, [Guard.CheckURL] rejects URLs whose host is
//     a refused IP literal (in any of the spellings resolvers accept) or a
//     localhost name, so clients hear about the mistake at once;
//   - when a webhook is dialled, [Guard.DialContext] resolves the host itself,
//     checks every address and connects to the address it checked, so a DNS
//     answer that changes between the two checks (rebinding) cannot slip
//     through. [Guard.Transport] wires this into an [net/http.Transport].
//
// Operators can allowlist ranges (tests allowlist loopback), and send every
// connection through an HTTP CONNECT egress proxy ([WithProxy]) that is
// asked for the checked addresses only. A Guard is immutable after
// [NewGuard] and safe for concurrent use.
package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Resolver looks up the addresses of a host. *net.Resolver satisfies it;
// tests inject a fake with [WithResolver].
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Option configures a Guard in [NewGuard].
type Option func(*Guard)

// WithResolver makes the guard resolve hostnames with r instead of
// net.DefaultResolver. A nil r keeps the default.
func WithResolver(r Resolver) Option {
	return func(g *Guard) {
		if r != nil {
			g.resolver = r
		}
	}
}

// Guard decides which destinations relay's webhook client may reach. The
// zero value refuses every non-public address and resolves with
// net.DefaultResolver; NewGuard adds an allowlist and options.
type Guard struct {
	allow    []netip.Prefix
	resolver Resolver
	// beforeDial, when set (tests only), sees every address just before it is
	// dialled and can veto it.
	beforeDial func(network, address string) error
	// proxy, when set (WithProxy), opens every connection as a CONNECT
	// tunnel to the checked address (proxy.go).
	proxy *proxy
}

// NewGuard returns a guard that refuses non-public destinations except those
// inside allowCIDRs. Each entry is a prefix ("127.0.0.0/8", "::1/128") or a
// bare IP ("10.1.2.3" is 10.1.2.3/32, "::1" is ::1/128); a malformed entry is
// an error naming it.
func NewGuard(allowCIDRs []string, opts ...Option) (*Guard, error) {
	g := &Guard{}
	for i, s := range allowCIDRs {
		p, err := parseAllow(s)
		if err != nil {
			return nil, fmt.Errorf("ssrf: allowlist entry %d %q: %w", i, s, err)
		}
		g.allow = append(g.allow, p)
	}
	for _, opt := range opts {
		opt(g)
	}
	return g, nil
}

func parseAllow(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Prefix{}, errors.New("empty")
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not an IP prefix: %w", err)
		}
		return p.Masked(), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not an IP or IP prefix: %w", err)
	}
	if ip.Zone() != "" {
		return netip.Prefix{}, errors.New("zoned addresses cannot be allowlisted")
	}
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

// Allowed reports whether the guard lets relay connect to ip. Loopback,
// private, link-local, CGNAT, multicast, unspecified, broadcast, reserved,
// benchmarking, documentation and IETF special-purpose addresses are refused
// unless an allowlisted prefix contains ip or its unmapped IPv4 form.
// IPv4-mapped and IPv4-compatible IPv6 addresses are judged as IPv4; NAT64
// (64:ff9b::/96) and 6to4 (2002::/16) addresses are judged by the IPv4
// address they embed. An invalid ip is refused.
func (g *Guard) Allowed(ip netip.Addr) bool {
	return g.refusal(ip) == ""
}

// refusal returns why ip is refused, or "" if it is allowed.
func (g *Guard) refusal(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("")
	v4 := unmap(ip)
	if g.allowlisted(ip) || g.allowlisted(v4) {
		return ""
	}
	return blockReason(v4)
}

func (g *Guard) allowlisted(ip netip.Addr) bool {
	for _, p := range g.allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// unmap turns IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d)
// IPv6 addresses into IPv4. :: and ::1 stay IPv6: they are the unspecified
// and loopback addresses, not IPv4-compatible ones.
func unmap(ip netip.Addr) netip.Addr {
	if ip.Is4In6() {
		return ip.Unmap()
	}
	if !ip.Is6() {
		return ip
	}
	b := ip.As16()
	for _, x := range b[:12] {
		if x != 0 {
			return ip
		}
	}
	if ip == v6Unspecified || ip == v6Loopback {
		return ip
	}
	return netip.AddrFrom4([4]byte(b[12:]))
}
