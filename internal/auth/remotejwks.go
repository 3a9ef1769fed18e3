package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Timing and limits of the client JWT issuer's JWKS.
const (
	// jwksRefreshEvery is Run's interval while fetches succeed.
	jwksRefreshEvery = 10 * time.Minute
	// jwksMinRefetch is the least time between two fetches that tokens
	// cause (an unknown kid, or no key set yet), so a flood of bogus kids
	// cannot hammer the issuer; it is also Run's retry delay after a
	// failure.
	jwksMinRefetch = 30 * time.Second
	// jwksFetchTimeout bounds one fetch, whatever the HTTP client.
	jwksFetchTimeout = 5 * time.Second
	// maxJWKSBytes caps the JWKS response body.
	maxJWKSBytes = 1 << 20
	// maxJWKSRedirects bounds the default client's redirects.
	maxJWKSRedirects = 3
	// jwksLogEvery spaces out the logs of a failure that lasts.
	jwksLogEvery = time.Minute
	// maxSkippedLogged bounds the skipped keys one log line lists.
	maxSkippedLogged = 10
)

// errRefetchLimited: a token asked for a fetch too soon after the last one.
var errRefetchLimited = errors.New("JWKS fetched less than 30s ago")

// remoteJWKS is the key source of client JWTs when the issuer publishes a
// JWKS. It fetches the set on first use, when a token names an unknown kid
// (at most once per jwksMinRefetch), and in run. A failed fetch (network,
// non-200, oversized or bad JSON, no usable key) keeps the last good set.
// At most one fetch is in flight; callers that need one wait for it, or
// for their own context.
type remoteJWKS struct {
	url    string
	logURL string // url without its password, for logs
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	set atomic.Pointer[jwkSet] // nil until the first good fetch

	mu        sync.Mutex
	inflight  *jwksFetch // the fetch under way, or nil
	lastStart time.Time  // when the last fetch started (by r.now)
	failing   bool       // the last fetch failed
	lastLog   time.Time  // when a failure was last logged
}

// jwksFetch is one fetch; err is set before done is closed.
type jwksFetch struct {
	done chan struct{}
	err  error
}

// jwkSet is one immutable fetched key set.
type jwkSet struct {
	byKid map[string]*verifyKey
	only  *verifyKey // the set's key when it has exactly one, with or without kid
	sum   [sha256.Size]byte
	size  int // usable keys
}

// newRemoteJWKS checks rawURL and returns the source; it fetches nothing.
// client nil means a client with a 5 s timeout whose redirects must also
// be https (or loopback http). Errors never quote the URL, which may hold
// credentials.
func newRemoteJWKS(rawURL string, client *http.Client, now func() time.Time, log *slog.Logger) (*remoteJWKS, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("not a valid URL")
	}
	if err := checkJWKSURL(u); err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{Timeout: defaultClientHTTPTimeout, CheckRedirect: checkJWKSRedirect}
	}
	return &remoteJWKS{url: rawURL, logURL: u.Redacted(), client: client, now: now, log: log}, nil
}

// checkJWKSURL admits https URLs, and http ones to a loopback host.
func checkJWKSURL(u *url.URL) error {
	switch {
	case u.Host == "":
		return errors.New("not an absolute URL (want https://host/path)")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	}
	return errors.New("want an https URL (http only to a loopback host)")
}

// checkJWKSRedirect is the default client's CheckRedirect.
func checkJWKSRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxJWKSRedirects {
		return fmt.Errorf("more than %d redirects", maxJWKSRedirects)
	}
	if err := checkJWKSURL(req.URL); err != nil {
		return fmt.Errorf("redirect refused: %w", err)
	}
	return nil
}

// isLoopbackHost reports whether host is localhost or a loopback address.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// find returns the key for a token's kid, or when it has none the set's
// only key; nil if there is none (or s is nil).
func (s *jwkSet) find(kid string, hasKid bool) *verifyKey {
	switch {
	case s == nil:
		return nil
	case hasKid:
		return s.byKid[kid]
	default:
		return s.only
	}
}

// key implements keySource. A key it does not hold leads to a refetch,
// unless the last fetch started less than jwksMinRefetch ago.
func (r *remoteJWKS) key(ctx context.Context, kid string, hasKid bool) (*verifyKey, error) {
	if k := r.set.Load().find(kid, hasKid); k != nil {
		return k, nil
	}
	err := r.refetch(ctx, false)
	set := r.set.Load()
	if k := set.find(kid, hasKid); k != nil {
		return k, nil
	}
	var detail error
	switch {
	case set == nil:
		detail = errors.New("no JWKS from the issuer yet")
	case !hasKid:
		detail = fmt.Errorf("token has no kid and the JWKS has %d keys, not one", set.size)
	default:
		detail = fmt.Errorf("unknown kid %.64q", kid)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", detail, err)
	}
	return nil, detail
}

// run refreshes the set until ctx is done: at once, then every
// jwksRefreshEvery, or jwksMinRefetch after a failure.
func (r *remoteJWKS) run(ctx context.Context) {
	for {
		delay := jwksRefreshEvery
		if err := r.runOnce(ctx); err != nil {
			delay = jwksMinRefetch
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runOnce is one round of run: a fetch, whenever the last one was.
func (r *remoteJWKS) runOnce(ctx context.Context) error { return r.refetch(ctx, true) }

// refetch starts a fetch, or joins the one in flight, and waits for it or
// for ctx. Unless force, it returns errRefetchLimited without fetching
// when the last fetch started less than jwksMinRefetch ago. The fetch
// itself does not end with ctx (a client that hangs up must not cancel the
// fetch everyone waits for); it is bounded by jwksFetchTimeout.
func (r *remoteJWKS) refetch(ctx context.Context, force bool) error {
	r.mu.Lock()
	f := r.inflight
	if f == nil {
		now := r.now()
		if !force && !r.lastStart.IsZero() && now.Sub(r.lastStart) < jwksMinRefetch {
			r.mu.Unlock()
			return errRefetchLimited
		}
		f = &jwksFetch{done: make(chan struct{})}
		r.inflight, r.lastStart = f, now
		go r.do(context.WithoutCancel(ctx), f)
	}
	r.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do runs fetch f, logs its outcome (failures at most once per
// jwksLogEvery while they last) and wakes its waiters.
func (r *remoteJWKS) do(ctx context.Context, f *jwksFetch) {
	defer close(f.done)
	fctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	f.err = r.fetch(fctx)

	r.mu.Lock()
	now := r.now()
	r.inflight = nil
	logFailure := f.err != nil && (!r.failing || now.Sub(r.lastLog) >= jwksLogEvery)
	recovered := f.err == nil && r.failing
	r.failing = f.err != nil
	if logFailure {
		r.lastLog = now
	}
	r.mu.Unlock()

	switch {
	case logFailure:
		r.log.WarnContext(ctx, "client JWKS fetch failed; keeping the last good key set",
			"jwks_url", r.logURL, "have_keys", r.set.Load() != nil, "error", f.err)
	case recovered:
		r.log.InfoContext(ctx, "client JWKS fetch recovered", "jwks_url", r.logURL)
	}
}

// fetch GETs the JWKS and installs it if it changed and has a usable key.
func (r *remoteJWKS) fetch(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err) // *url.Error, password stripped
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("fetch JWKS: HTTP status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("fetch JWKS: read body: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("fetch JWKS: body larger than %d bytes", maxJWKSBytes)
	}
	sum := sha256.Sum256(body)
	if cur := r.set.Load(); cur != nil && cur.sum == sum {
		return nil // unchanged: nothing to parse or log again
	}
	set, skipped, err := parseJWKSet(body)
	if err != nil {
		return fmt.Errorf("JWKS: %w", err)
	}
	set.sum = sum
	r.set.Store(set)
	args := []any{"jwks_url", r.logURL, "keys", set.size}
	if len(skipped) > 0 {
		r.log.WarnContext(ctx, "client JWKS has keys relay cannot use; skipped them",
			append(args, "skipped", len(skipped), "reasons", skipped[:min(len(skipped), maxSkippedLogged)])...)
	} else {
		r.log.InfoContext(ctx, "client JWKS loaded", args...)
	}
	return nil
}
