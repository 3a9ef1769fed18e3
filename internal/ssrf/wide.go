package ssrf

import "net/netip"

// The widest non-public ranges the guard refuses: 10.0.0.0/8 (and the
// other /8s) in IPv4, fc00::/7 in IPv6. An allowlisted range wider than
// these reaches beyond what an operator could mean by "a private network".
const (
	widestPrivate4 = 8
	widestPrivate6 = 7
)

// v4Embedding is an IPv6 range whose addresses the guard can judge, or
// that a network routes, as the IPv4 address they carry from bit at on.
type v4Embedding struct {
	prefix netip.Prefix
	at     int
}

// v4Embeddings are the IPv6 ranges that carry IPv4 addresses: allowing one
// of them whole allows every IPv4 address in another spelling.
var v4Embeddings = []v4Embedding{
	{netip.MustParsePrefix("::ffff:0:0/96"), 96}, // IPv4-mapped
	{netip.MustParsePrefix("::/96"), 96},         // IPv4-compatible
	{nat64WKP, 96},
	{sixToFour, 16},
}

// Wide returns the allowlisted ranges that are wider than a private range
// (10.0.0.0/8, fc00::/7): 0.0.0.0/0 and ::/0, but also 8.0.0.0/7, ::/8 or
// ::ffff:0:0/96, which cover all of IPv4 through its IPv6 spellings. Such
// a range lets webhooks reach public and private destinations alike, so
// the SSRF guard no longer protects much; callers should make an operator
// ask for it explicitly.
func (g *Guard) Wide() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range g.allow {
		if wide(p) {
			out = append(out, p)
		}
	}
	return out
}

// wide reports whether p is wider than the widest private range of its
// family, directly or through an IPv6 range that carries IPv4 addresses.
func wide(p netip.Prefix) bool {
	if p.Addr().Is4() {
		return p.Bits() < widestPrivate4
	}
	if p.Bits() < widestPrivate6 {
		return true
	}
	for _, e := range v4Embeddings {
		if p.Overlaps(e.prefix) && min(max(p.Bits()-e.at, 0), 32) < widestPrivate4 {
			return true
		}
	}
	return false
}
