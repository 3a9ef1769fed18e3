package ssrf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
)

// BlockedError reports a destination the guard refused.
type BlockedError struct {
	// Host is the host as written in the URL or dial address (for refusals
	// by the dialer's last-moment check, the address dialled).
	Host string
	// IP is the refused address (127.0.0.1 for "localhost" names).
	IP netip.Addr
	// Reason names the refused range: "loopback", "private", "link-local",
	// "cgnat", "multicast", "unspecified", "this-network", "broadcast",
	// "reserved", "benchmarking", "documentation", "ietf-protocol",
	// "nat64-local-use", "teredo", "discard-only", "site-local", "invalid";
	// suffixed " via nat64" or " via 6to4" when the refused IPv4 address is
	// embedded in an IPv6 one.
	Reason string
}

func (e *BlockedError) Error() string {
	if e.Host == "" || e.Host == e.IP.String() {
		return fmt.Sprintf("ssrf: destination %s refused: %s address", e.IP, e.Reason)
	}
	return fmt.Sprintf("ssrf: destination %s (%s) refused: %s address", e.Host, e.IP, e.Reason)
}

// Error classes returned by Classify, as recorded in the attempt log.
const (
	ClassBlocked = "blocked"
	ClassDNS     = "dns"
	ClassTimeout = "timeout"
	ClassTLS     = "tls"
	ClassConnect = "connect"
	ClassHTTP    = "http"
	ClassProxy   = "proxy"
)

// Classify names the class of a failed delivery attempt's error: "blocked"
// (refused by the guard), "dns", "proxy" (the egress proxy could not be
// reached or did not open the tunnel, WithProxy; but a proxy answering
// 502, 503 or 504, that it could not reach the webhook, is "connect"),
// "timeout", "tls", "connect" (refused, reset
// or unreachable), "http" for anything else, and "" for a nil error. The
// first matching class in that order wins, so a DNS timeout is "dns".
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		blocked *BlockedError
		dnsErr  *net.DNSError
		opErr   *net.OpError
		proxy   *ProxyError
	)
	switch {
	case errors.As(err, &blocked):
		return ClassBlocked
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &proxy) && proxy.upstream():
		return ClassConnect // the proxy is up and could not reach the webhook
	case errors.As(err, &proxy):
		return ClassProxy
	case errors.Is(err, context.DeadlineExceeded), anyInChain(err, isTimeout):
		return ClassTimeout
	case isTLS(err):
		return ClassTLS
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return ClassConnect
	}
	return ClassHTTP
}

func isTLS(err error) bool {
	var (
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
		verifyErr   *tls.CertificateVerificationError
		unknownCA   x509.UnknownAuthorityError
		hostnameErr x509.HostnameError
		invalidErr  x509.CertificateInvalidError
		rootsErr    x509.SystemRootsError
		critErr     x509.UnhandledCriticalExtension
		algErr      x509.InsecureAlgorithmError
		opErr       *net.OpError
	)
	return errors.Is(err, http.ErrSchemeMismatch) || // a TLS record that is plain HTTP
		errors.As(err, &opErr) && opErr.Op == "remote error" || // an alert the server sent (crypto/tls's shape)
		errors.As(err, &recordErr) ||
		errors.As(err, &alertErr) ||
		errors.As(err, &verifyErr) ||
		errors.As(err, &unknownCA) ||
		errors.As(err, &hostnameErr) ||
		errors.As(err, &invalidErr) ||
		errors.As(err, &rootsErr) ||
		errors.As(err, &critErr) ||
		errors.As(err, &algErr)
}

// isTimeout reports whether err itself (not its chain) says it is a timeout,
// as net.Error and os.SyscallError do.
func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

// anyInChain reports whether f holds for err or any error it wraps. Unlike
// errors.As, it does not stop at the first error of a matching type: an
// outer *url.Error may say "no timeout" about a wrapper that hides one.
func anyInChain(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if anyInChain(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
