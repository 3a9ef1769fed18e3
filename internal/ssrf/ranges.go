package ssrf

import "net/netip"

// Refusal reasons, as they appear in BlockedError.Reason. Addresses judged by
// an embedded IPv4 address get a suffix: "loopback via nat64",
// "private via 6to4".
const (
	reasonUnspecified   = "unspecified"
	reasonBroadcast     = "broadcast"
	reasonThisNetwork   = "this-network"
	reasonLoopback      = "loopback"
	reasonPrivate       = "private"
	reasonLinkLocal     = "link-local"
	reasonCGNAT         = "cgnat"
	reasonMulticast     = "multicast"
	reasonReserved      = "reserved"
	reasonBenchmarking  = "benchmarking"
	reasonDocumentation = "documentation"
	reasonIETF          = "ietf-protocol"
	reasonNAT64Local    = "nat64-local-use"
	reasonTeredo        = "teredo"
	reasonDiscard       = "discard-only"
	reasonSiteLocal     = "site-local"
)

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

func mustRange(cidr, reason string) blockedRange {
	return blockedRange{netip.MustParsePrefix(cidr), reason}
}

// blocked4 lists the refused IPv4 ranges; the first match names the reason,
// so narrower ranges come before the ones containing them.
var blocked4 = []blockedRange{
	mustRange("0.0.0.0/32", reasonUnspecified),
	mustRange("255.255.255.255/32", reasonBroadcast),
	mustRange("0.0.0.0/8", reasonThisNetwork),
	mustRange("127.0.0.0/8", reasonLoopback),
	mustRange("10.0.0.0/8", reasonPrivate),
	mustRange("172.16.0.0/12", reasonPrivate),
	mustRange("192.168.0.0/16", reasonPrivate),
	mustRange("169.254.0.0/16", reasonLinkLocal),
	mustRange("100.64.0.0/10", reasonCGNAT),
	mustRange("224.0.0.0/4", reasonMulticast),
	mustRange("240.0.0.0/4", reasonReserved),
	mustRange("198.18.0.0/15", reasonBenchmarking),
	mustRange("192.0.2.0/24", reasonDocumentation),
	mustRange("198.51.100.0/24", reasonDocumentation),
	mustRange("203.0.113.0/24", reasonDocumentation),
	mustRange("192.0.0.0/24", reasonIETF),
}

// blocked6 lists the refused IPv6 ranges checked after the special cases in
// blockReason6 (::, ::1, NAT64, 6to4).
var blocked6 = []blockedRange{
	mustRange("64:ff9b:1::/48", reasonNAT64Local),
	mustRange("2001::/32", reasonTeredo),
	mustRange("2001:2::/48", reasonBenchmarking),
	mustRange("2001:db8::/32", reasonDocumentation),
	mustRange("3fff::/20", reasonDocumentation),
	mustRange("100::/64", reasonDiscard),
	mustRange("fc00::/7", reasonPrivate),
	mustRange("fe80::/10", reasonLinkLocal),
	mustRange("fec0::/10", reasonSiteLocal),
	mustRange("ff00::/8", reasonMulticast),
}

var (
	v6Unspecified = netip.IPv6Unspecified()
	v6Loopback    = netip.IPv6Loopback()
	nat64WKP      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// blockReason returns why ip (already unmapped, without zone) is refused,
// or "" if it is a public address.
func blockReason(ip netip.Addr) string {
	if ip.Is4() {
		return match(blocked4, ip)
	}
	return blockReason6(ip)
}

func blockReason6(ip netip.Addr) string {
	switch {
	case ip == v6Unspecified:
		return reasonUnspecified
	case ip == v6Loopback:
		return reasonLoopback
	case nat64WKP.Contains(ip):
		// RFC 6052: the well-known prefix embeds the IPv4 address in the
		// last 32 bits and must only carry global IPv4 addresses.
		b := ip.As16()
		return via(netip.AddrFrom4([4]byte(b[12:16])), "nat64")
	case sixToFour.Contains(ip):
		// RFC 3056: 2002:AABB:CCDD::/48 routes to IPv4 AA.BB.CC.DD.
		b := ip.As16()
		return via(netip.AddrFrom4([4]byte(b[2:6])), "6to4")
	}
	if reason := match(blocked6, ip); reason != "" {
		return reason
	}
	// Everything outside 2000::/3 that is not handled above is unassigned
	// or reserved by IANA: there is no public host to reach there.
	if !globalUnicast.Contains(ip) {
		return reasonReserved
	}
	return ""
}

// via judges an IPv4 address embedded in an IPv6 one. The allowlist does not
// apply to it: allowing 127.0.0.0/8 allows relay's loopback, not a NAT64
// gateway's.
func via(v4 netip.Addr, mechanism string) string {
	if reason := match(blocked4, v4); reason != "" {
		return reason + " via " + mechanism
	}
	return ""
}

func match(ranges []blockedRange, ip netip.Addr) string {
	for _, b := range ranges {
		if b.prefix.Contains(ip) {
			return b.reason
		}
	}
	return ""
}
