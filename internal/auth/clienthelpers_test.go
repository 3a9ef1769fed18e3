package auth

// Helpers of the client authentication tests: a settable clock, the test
// issuer's keys and its JWKS server on 127.0.0.1.

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	testIssuer   = "https://issuer.example"
	testAudience = "https://relay.example/a2a"
)

// clientClock is a settable clock for Clients.
type clientClock struct{ ns atomic.Int64 }

func newClientClock() *clientClock {
	c := &clientClock{}
	c.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clientClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clientClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// issuerKey is a signing key of the test JWT issuer.
type issuerKey struct {
	kid  string
	alg  string
	priv crypto.Signer
}

// rsaTestKey is generated once: RSA key generation is slow.
var rsaTestKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// newIssuerKey makes a key for alg (ES256, ES384, RS256, PS256, EdDSA).
// RSA keys are all the same key.
func newIssuerKey(t testing.TB, alg, kid string) *issuerKey {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "RS256", "PS256":
		priv, err = rsaTestKey()
	case "EdDSA":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no test key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &issuerKey{kid: kid, alg: alg, priv: priv}
}

// claims are valid claims at now, for sub alice.
func (c *clientClock) claims() jwt.MapClaims {
	now := c.Now()
	return jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "sub": "alice",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

// mint signs claims with k, naming k.kid in the header when it has one.
func (k *issuerKey) mint(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(k.alg), claims)
	if k.kid != "" {
		tok.Header["kid"] = k.kid
	}
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// publicPEM is k's public key as a PKIX "PUBLIC KEY" PEM block.
func (k *issuerKey) publicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// writeClientFile writes data to a new file and returns its path.
func writeClientFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// headers returns an Authenticate header func over a map (names as given).
func headers(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[strings.ToLower(kv[i])] = kv[i+1]
	}
	return func(name string) string { return m[strings.ToLower(name)] }
}

func newTestClients(t testing.TB, cfg ClientConfig) *Clients {
	t.Helper()
	c, err := NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// jwksServer is a test issuer's JWKS endpoint on 127.0.0.1 that counts
// its hits.
type jwksServer struct {
	URL  string
	hits atomic.Int64
	hit  chan struct{} // one value per hit, while there is room

	mu     sync.Mutex
	status int
	body   []byte
}

func newJWKSServer(t testing.TB, keys ...*issuerKey) *jwksServer {
	t.Helper()
	s := &jwksServer{hit: make(chan struct{}, 64)}
	s.serve(t, keys...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks" {
			http.Redirect(w, r, "/jwks", http.StatusFound)
			return
		}
		s.hits.Add(1)
		s.mu.Lock()
		status, body := s.status, s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
		select {
		case s.hit <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/jwks"
	return s
}

// serve makes the server publish the public JWKs of keys.
func (s *jwksServer) serve(t testing.TB, keys ...*issuerKey) {
	t.Helper()
	jwks := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		jwks = append(jwks, publicJWK(t, k))
	}
	s.serveJWKs(t, jwks...)
}

// serveJWKs makes the server publish the given JWKs.
func (s *jwksServer) serveJWKs(t testing.TB, jwks ...map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"keys": jwks})
	if err != nil {
		t.Fatal(err)
	}
	s.serveRaw(http.StatusOK, body)
}

func (s *jwksServer) serveRaw(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// publicJWK is k's public JWK, with its kid (when it has one), alg and use.
func publicJWK(t testing.TB, k *issuerKey) map[string]any {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	j := map[string]any{"alg": k.alg, "use": "sig"}
	if k.kid != "" {
		j["kid"] = k.kid
	}
	switch pub := k.priv.Public().(type) {
	case *ecdsa.PublicKey:
		pt, err := pub.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		n := (len(pt) - 1) / 2
		j["kty"], j["crv"], j["x"], j["y"] = "EC", pub.Curve.Params().Name, b64(pt[1:1+n]), b64(pt[1+n:])
	case *rsa.PublicKey:
		j["kty"], j["n"], j["e"] = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case ed25519.PublicKey:
		j["kty"], j["crv"], j["x"] = "OKP", "Ed25519", b64(pub)
	}
	return j
}

// newJWKSClients returns Clients verifying JWTs against s, on clock clk.
func newJWKSClients(t *testing.T, s *jwksServer, clk *clientClock, log *slog.Logger) *Clients {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return newTestClients(t, ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience,
		JWTJWKSURL: s.URL, Now: clk.Now, Logger: log})
}

func bearer(tok string) func(string) string { return headers("Authorization", "Bearer "+tok) }

// tamper changes the sub of a signed token, keeping its signature.
func tamper(t testing.TB, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(bytes.Replace(claims, []byte(`"alice"`), []byte(`"admin"`), 1))
	return strings.Join(parts, ".")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
