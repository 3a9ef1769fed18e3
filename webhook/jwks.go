package webhook

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	webkey "github.com/a2arelay/relay/internal/jwk"
)

// Timing and limits of the JWKS cache.
const (
	// MinRefetch is the least time between two JWKS fetches. A token
	// naming an unknown kid makes the verifier fetch the JWKS again (relay
	// signs with a new key at once after a rotation), but no more often
	// than this, so a flood of bogus kids cannot hammer relay.
	MinRefetch = 30 * time.Second
	// defaultKeysMaxAge is how long a fetched JWKS is used before it is
	// fetched again, when its response has no Cache-Control max-age (relay
	// sends max-age=300). The age is kept within [minKeysMaxAge, maxKeysMaxAge].
	defaultKeysMaxAge = 5 * time.Minute
	minKeysMaxAge     = time.Minute
	maxKeysMaxAge     = 24 * time.Hour
	// fetchTimeout bounds one fetch, whatever the HTTP client.
	fetchTimeout = 10 * time.Second
	// maxJWKSBytes caps the JWKS response body.
	maxJWKSBytes = 1 << 20
	// minRSABits is the smallest RSA key accepted (relay generates 2048-bit
	// keys; internal/jwk bounds the largest).
	minRSABits = 2048
)

// errRefetchLimited: a fetch was wanted less than MinRefetch after the last one.
var errRefetchLimited = errors.New("the JWKS was fetched less than 30s ago")

// pubKey is one usable key of the JWKS, with the algorithm its type allows.
type pubKey struct {
	alg string // ES256, EdDSA or RS256
	pub crypto.PublicKey
}

// keySet is one immutable fetched JWKS.
type keySet struct {
	byKid   map[string]pubKey
	expires time.Time // when to fetch again
}

// keySource fetches relay's JWKS on first use, again when a token names an
// unknown kid or the set's max-age has passed, each at most once per
// MinRefetch. A failed fetch keeps the last good set. At most one fetch is
// in flight; callers that need it wait for it (or for their context).
type keySource struct {
	url    string
	client *http.Client
	now    func() time.Time

	set atomic.Pointer[keySet] // nil until the first good fetch

	mu        sync.Mutex
	inflight  *fetch    // the fetch under way, or nil
	lastStart time.Time // when the last fetch started
	lastErr   error     // how the last fetch failed (nil: it did not)
}

// fetch is one fetch; err is set before done is closed.
type fetch struct {
	done chan struct{}
	err  error
}

// key returns the public key named kid for a token signed with alg.
func (s *keySource) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	set := s.set.Load()
	k, ok := pubKey{}, false
	if set != nil {
		k, ok = set.byKid[kid]
	}
	if !ok || !s.now().Before(set.expires) {
		err := s.refresh(ctx)
		if set = s.set.Load(); set == nil {
			if errors.Is(err, errRefetchLimited) {
				s.mu.Lock()
				err = fmt.Errorf("%w; the last fetch failed: %v", err, s.lastErr)
				s.mu.Unlock()
			}
			return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
		}
		if k, ok = set.byKid[kid]; !ok {
			return nil, fmt.Errorf("%w: kid %.64q is not in relay's JWKS", ErrBadSignature, kid)
		}
	}
	if k.alg != alg {
		return nil, fmt.Errorf("%w: kid %.64q is a key for %s, the JWT says %.16s", ErrBadSignature, kid, k.alg, alg)
	}
	return k.pub, nil
}

// refresh fetches the JWKS, or joins the fetch under way; it refuses
// (errRefetchLimited) when the last fetch started less than MinRefetch ago.
func (s *keySource) refresh(ctx context.Context) error {
	s.mu.Lock()
	f := s.inflight
	if f == nil {
		now := s.now()
		// (A clock that jumped back by more than MinRefetch does not block fetches.)
		if d := now.Sub(s.lastStart); !s.lastStart.IsZero() && d < MinRefetch && d > -MinRefetch {
			s.mu.Unlock()
			return errRefetchLimited
		}
		f = &fetch{done: make(chan struct{})}
		s.inflight, s.lastStart = f, now
		// The fetch does not depend on this caller's context: others may
		// be waiting for it.
		go func() {
			f.err = s.fetch()
			s.mu.Lock()
			s.inflight, s.lastErr = nil, f.err
			s.mu.Unlock()
			close(f.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch GETs the JWKS and installs it when it holds a usable key.
func (s *keySource) fetch() error {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET JWKS: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("GET JWKS: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return errors.New("GET JWKS: more than 1 MiB")
	}
	byKid, err := parseJWKS(body)
	if err != nil {
		return fmt.Errorf("JWKS: %w", err)
	}
	s.set.Store(&keySet{byKid: byKid, expires: s.now().Add(maxAge(resp.Header.Get("Cache-Control")))})
	return nil
}

// maxAge reads max-age from a Cache-Control header, within bounds.
func maxAge(cc string) time.Duration {
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		if strings.EqualFold(name, "max-age") {
			if secs, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil {
				return min(max(time.Duration(secs)*time.Second, minKeysMaxAge), maxKeysMaxAge)
			}
		}
	}
	return defaultKeysMaxAge
}

// parseJWKS decodes a JWK Set and keeps the keys relay can sign with: EC
// P-256 (ES256), OKP Ed25519 (EdDSA) and RSA of 2048 to 8192 bits (RS256),
// each with a kid, for signatures, with an "alg" (when present) that fits
// its type. A kid that more than one key claims is dropped: a token naming
// it would be ambiguous. A set without any usable key is an error.
func parseJWKS(body []byte) (map[string]pubKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	byKid := map[string]pubKey{}
	dup := map[string]bool{}
	for _, raw := range doc.Keys {
		var j webkey.Key
		if json.Unmarshal(raw, &j) != nil || j.Kid == "" {
			continue
		}
		k, err := decodeJWK(j)
		switch {
		case err != nil, dup[j.Kid]:
		case byKid[j.Kid].pub != nil:
			delete(byKid, j.Kid)
			dup[j.Kid] = true
		default:
			byKid[j.Kid] = k
		}
	}
	if len(byKid) == 0 {
		return nil, fmt.Errorf("no usable key among %d", len(doc.Keys))
	}
	return byKid, nil
}

// decodeJWK returns a key relay signs with, and its algorithm: EC P-256
// (ES256), Ed25519 (EdDSA) or RSA of 2048 to 8192 bits (RS256).
func decodeJWK(j webkey.Key) (pubKey, error) {
	pub, err := webkey.Public(j)
	if err != nil {
		return pubKey{}, err
	}
	k := pubKey{pub: pub}
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		if p.Curve != elliptic.P256() {
			return pubKey{}, errors.New("EC curve other than P-256")
		}
		k.alg = "ES256"
	case ed25519.PublicKey:
		k.alg = "EdDSA"
	case *rsa.PublicKey:
		if p.N.BitLen() < minRSABits {
			return pubKey{}, fmt.Errorf("RSA key under %d bits", minRSABits)
		}
		k.alg = "RS256"
	}
	if j.Alg != "" && j.Alg != k.alg {
		return pubKey{}, errors.New("alg does not fit the key")
	}
	return k, nil
}
