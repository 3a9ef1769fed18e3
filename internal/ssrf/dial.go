package ssrf

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

const (
	// maxDialTimeout caps one dial when the context has no earlier deadline.
	maxDialTimeout = 30 * time.Second
	// minAddrTimeout is the least time given to each of several addresses
	// before moving to the next, as net.Dialer does.
	minAddrTimeout = 2 * time.Second
)

// DialContext connects to addr ("host:port") over TCP if the guard allows
// it. It resolves host itself, refuses with a *BlockedError if ANY resolved
// address is refused, and then dials those checked addresses, never the
// name, so a second DNS answer cannot redirect the connection. Addresses are
// tried in the resolver's order. The dialer re-checks the remote address
// just before connecting. DNS failures are returned wrapped (a *net.DNSError
// stays reachable with errors.As).
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var lookupNet string
	switch network {
	case "tcp":
		lookupNet = "ip"
	case "tcp4":
		lookupNet = "ip4"
	case "tcp6":
		lookupNet = "ip6"
	default:
		return nil, fmt.Errorf("ssrf: dial %s %s: network not supported", network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("ssrf: dial %s: %w", addr, err)
	}
	if host == "" {
		return nil, fmt.Errorf("ssrf: dial %s: no host", addr)
	}
	ips, err := g.resolve(ctx, lookupNet, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if reason := g.refusal(ip); reason != "" {
			return nil, &BlockedError{Host: host, IP: ip, Reason: reason}
		}
	}
	ips = filterFamily(ips, network)
	if len(ips) == 0 {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.AddrError{Err: "no suitable address", Addr: host}}
	}
	return g.dialAddrs(ctx, network, port, ips)
}

// resolve returns the addresses of host: itself if it is an IP literal (in
// any inet_aton spelling, as CheckURL reads it), otherwise the resolver's
// answer.
func (g *Guard) resolve(ctx context.Context, lookupNet, host string) ([]netip.Addr, error) {
	if ip, _, ok := hostIP(normalizeHost(host)); ok {
		return []netip.Addr{ip}, nil
	}
	resolver := g.resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ips, err := resolver.LookupNetIP(ctx, lookupNet, host)
	if err != nil {
		return nil, fmt.Errorf("ssrf: resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("ssrf: resolve %s: %w", host,
			&net.DNSError{Err: "no such host", Name: host, IsNotFound: true})
	}
	return ips, nil
}

func filterFamily(ips []netip.Addr, network string) []netip.Addr {
	if network == "tcp" {
		return ips
	}
	var out []netip.Addr
	for _, ip := range ips {
		if ip.Unmap().Is4() == (network == "tcp4") {
			out = append(out, ip)
		}
	}
	return out
}

// dialAddrs dials the checked addresses in order until one connects. With
// several addresses, each gets a share of the remaining time (at least
// minAddrTimeout) so one black hole does not eat the whole deadline.
func (g *Guard) dialAddrs(ctx context.Context, network, port string, ips []netip.Addr) (net.Conn, error) {
	d := &net.Dialer{Timeout: maxDialTimeout, Control: g.control}
	var firstErr error
	for i, ip := range ips {
		address := net.JoinHostPort(ip.String(), port)
		conn, err := g.dialOne(ctx, d, network, address, len(ips)-i)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

func (g *Guard) dialOne(ctx context.Context, d *net.Dialer, network, address string, remaining int) (net.Conn, error) {
	if g.beforeDial != nil {
		if err := g.beforeDial(network, address); err != nil {
			return nil, err
		}
	}
	if deadline, ok := ctx.Deadline(); ok && remaining > 1 {
		share := time.Until(deadline) / time.Duration(remaining)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max(share, minAddrTimeout))
		defer cancel()
	}
	if g.proxy != nil {
		return g.proxy.dial(ctx, address)
	}
	return d.DialContext(ctx, network, address)
}

// control runs after the socket is created and before it connects: it
// re-checks the address actually being dialled.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Host: address, Reason: "invalid"}
	}
	if reason := g.refusal(ap.Addr()); reason != "" {
		return &BlockedError{Host: ap.Addr().String(), IP: ap.Addr(), Reason: reason}
	}
	return nil
}

// Transport returns a new HTTP transport that dials through the guard. It
// never uses an HTTP proxy of its own (an environment proxy would dial for
// us and bypass the guard; the guard's WithProxy tunnels after its checks) and sets no response header timeout: callers bound each request
// with a context or client timeout. Build it once and share it.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  1 * time.Second,
		ResponseHeaderTimeout:  0,
		MaxResponseHeaderBytes: 1 << 20,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
	}
}
