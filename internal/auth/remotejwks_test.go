package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestJWKSVerification(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k1 := newIssuerKey(t, "ES256", "k1")
	srv := newJWKSServer(t, k1)
	c := newJWKSClients(t, srv, clk, nil)
	if srv.hits.Load() != 0 {
		t.Fatal("NewClients fetched the JWKS")
	}
	with := func(mod func(jwt.MapClaims)) string {
		cl := clk.claims()
		mod(cl)
		return k1.mint(t, cl)
	}
	now := clk.Now()
	pubPEM := k1.publicPEM(t)
	hs256 := func(secret []byte) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, clk.claims())
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, clk.claims())
	none.Header["kid"] = "k1"
	noneTok, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	impostor := newIssuerKey(t, "ES256", "k1") // same kid, other key

	for _, tc := range []struct {
		name  string
		token string
		want  error // nil: valid; else also ErrBadCredentials
	}{
		{"valid", k1.mint(t, clk.claims()), nil},
		{"audience among several", with(func(c jwt.MapClaims) { c["aud"] = []string{"other", testAudience} }), nil},
		{"expired within leeway", with(func(c jwt.MapClaims) { c["exp"] = now.Add(-20 * time.Second).Unix() }), nil},
		{"wrong issuer", with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), jwt.ErrTokenInvalidIssuer},
		{"no issuer", with(func(c jwt.MapClaims) { delete(c, "iss") }), jwt.ErrTokenRequiredClaimMissing},
		{"wrong audience", with(func(c jwt.MapClaims) { c["aud"] = "https://other.example" }), jwt.ErrTokenInvalidAudience},
		{"expired", with(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), jwt.ErrTokenExpired},
		{"no exp", with(func(c jwt.MapClaims) { delete(c, "exp") }), jwt.ErrTokenRequiredClaimMissing},
		{"not yet valid", with(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), jwt.ErrTokenNotValidYet},
		{"no sub", with(func(c jwt.MapClaims) { delete(c, "sub") }), ErrBadCredentials},
		{"empty sub", with(func(c jwt.MapClaims) { c["sub"] = "" }), ErrBadCredentials},
		{"sub with newline", with(func(c jwt.MapClaims) { c["sub"] = "alice\nadmin" }), ErrBadCredentials},
		{"huge sub", with(func(c jwt.MapClaims) { c["sub"] = strings.Repeat("a", 257) }), ErrBadCredentials},
		{"alg none", noneTok, jwt.ErrTokenSignatureInvalid},
		{"HS256 keyed with the public key PEM", hs256(pubPEM), jwt.ErrTokenSignatureInvalid},
		{"HS256 keyed with the JWK x", hs256([]byte(publicJWK(t, k1)["x"].(string))), jwt.ErrTokenSignatureInvalid},
		{"signed by another key with the same kid", impostor.mint(t, clk.claims()), jwt.ErrTokenSignatureInvalid},
		{"tampered claims", tamper(t, k1.mint(t, clk.claims())), jwt.ErrTokenSignatureInvalid},
		{"kid not a string", func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodES256, clk.claims())
			tok.Header["kid"] = 1
			s, _ := tok.SignedString(k1.priv)
			return s
		}(), jwt.ErrTokenUnverifiable},
		{"malformed", "eyJhbGciOiJFUzI1NiJ9.bm90anNvbg.c2ln", jwt.ErrTokenMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Authenticate(t.Context(), bearer(tc.token))
			if tc.want == nil {
				if err != nil || p != (Principal{ID: "jwt:" + testIssuer + "|alice", Kind: KindJWT}) {
					t.Fatalf("principal %+v, err %v", p, err)
				}
				return
			}
			if !errors.Is(err, ErrBadCredentials) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if sig := tc.token[strings.LastIndex(tc.token, ".")+1:]; len(sig) > 8 && strings.Contains(err.Error(), sig) {
				t.Fatalf("error %q quotes the token", err)
			}
		})
	}
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want once (lazily)", n)
	}
}

func TestJWKSUnknownKidRefetchIsLimited(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k1, k2, k3 := newIssuerKey(t, "ES256", "k1"), newIssuerKey(t, "ES256", "k2"), newIssuerKey(t, "EdDSA", "k3")
	srv := newJWKSServer(t, k1)
	c := newJWKSClients(t, srv, clk, nil)
	auth := func(k *issuerKey) error {
		_, err := c.Authenticate(t.Context(), bearer(k.mint(t, clk.claims())))
		return err
	}
	if err := auth(k1); err != nil || srv.hits.Load() != 1 {
		t.Fatalf("first use: err %v, %d fetches", err, srv.hits.Load())
	}
	clk.Add(jwksMinRefetch + time.Second)
	if err := auth(k2); !errors.Is(err, ErrBadCredentials) || !strings.Contains(err.Error(), `unknown kid "k2"`) {
		t.Fatalf("unknown kid: %v", err)
	}
	if n := srv.hits.Load(); n != 2 {
		t.Fatalf("%d fetches after an unknown kid, want 2", n)
	}
	clk.Add(10 * time.Second)
	for range 50 { // a flood of bogus kids
		if err := auth(k3); !errors.Is(err, ErrBadCredentials) || !strings.Contains(err.Error(), "less than 30s ago") {
			t.Fatalf("second unknown kid: %v", err)
		}
	}
	if n := srv.hits.Load(); n != 2 {
		t.Fatalf("%d fetches after a second unknown kid within 30s, want still 2", n)
	}
	if err := auth(k1); err != nil {
		t.Fatalf("known kid during the flood: %v", err)
	}
	clk.Add(jwksMinRefetch)
	srv.serve(t, k1, k3)
	if err := auth(k3); err != nil || srv.hits.Load() != 3 {
		t.Fatalf("after 30s: err %v, %d fetches", err, srv.hits.Load())
	}
}

func TestJWKSRotation(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	old, next := newIssuerKey(t, "ES256", "2030-01"), newIssuerKey(t, "ES256", "2030-02")
	srv := newJWKSServer(t, old)
	c := newJWKSClients(t, srv, clk, nil)
	if _, err := c.Authenticate(t.Context(), bearer(old.mint(t, clk.claims()))); err != nil {
		t.Fatal(err)
	}
	// The issuer rotates: it publishes the new key and signs with it.
	srv.serve(t, next, old)
	clk.Add(time.Hour)
	p, err := c.Authenticate(t.Context(), bearer(next.mint(t, clk.claims())))
	if err != nil || p.ID != "jwt:"+testIssuer+"|alice" {
		t.Fatalf("new key: %+v, %v", p, err)
	}
	if _, err := c.Authenticate(t.Context(), bearer(old.mint(t, clk.claims()))); err != nil {
		t.Fatalf("old key still published: %v", err)
	}
	// The old key is withdrawn; Run's next round drops it.
	srv.serve(t, next)
	if err := c.jwks.runOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Authenticate(t.Context(), bearer(old.mint(t, clk.claims()))); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("withdrawn key: %v", err)
	}
	if n := srv.hits.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
}

func TestJWKSKeepsLastGoodSet(t *testing.T) {
	t.Parallel()
	weak := map[string]any{"kty": "RSA", "kid": "weak", "n": base64.RawURLEncoding.EncodeToString(big.NewInt(0).Lsh(big.NewInt(1), 1023).Bytes()), "e": "AQAB"}
	good := newIssuerKey(t, "ES256", "good")
	huge, err := json.Marshal(map[string]any{"keys": []any{publicJWK(t, good)}, "pad": strings.Repeat("x", maxJWKSBytes)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"server error", http.StatusInternalServerError, `{"keys":[]}`, "HTTP status 500"},
		{"not found", http.StatusNotFound, "", "HTTP status 404"},
		{"bad JSON", http.StatusOK, `{"keys":[`, "bad JSON"},
		{"no keys member", http.StatusOK, `{}`, `no "keys" array`},
		{"empty set", http.StatusOK, `{"keys":[]}`, "no usable key"},
		{"only unusable keys", http.StatusOK, mustJSON(t, map[string]any{"keys": []any{weak, map[string]any{"kty": "oct", "k": "c2VjcmV0"}}}), "RSA key of 1024 bits"},
		{"too large", http.StatusOK, string(huge), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClientClock()
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			k := newIssuerKey(t, "ES256", "k")
			srv := newJWKSServer(t, k)
			c := newJWKSClients(t, srv, clk, log)
			if err := c.jwks.runOnce(t.Context()); err != nil {
				t.Fatal(err)
			}
			srv.serveRaw(tc.status, []byte(tc.body))
			err := c.jwks.runOnce(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if !strings.Contains(logs.String(), "keeping the last good key set") {
				t.Errorf("no warning logged: %s", logs.String())
			}
			if _, err := c.Authenticate(t.Context(), bearer(k.mint(t, clk.claims()))); err != nil {
				t.Fatalf("last good key set lost: %v", err)
			}
			// A second failure within a minute is not logged again.
			logs.Reset()
			_ = c.jwks.runOnce(t.Context())
			if logs.Len() != 0 {
				t.Errorf("repeated failure logged again at once: %s", logs.String())
			}
			srv.serve(t, k)
			if err := c.jwks.runOnce(t.Context()); err != nil || !strings.Contains(logs.String(), "recovered") {
				t.Fatalf("recovery: %v; logs %s", err, logs.String())
			}
		})
	}
}

func TestJWKSUnavailableAtFirstUse(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k := newIssuerKey(t, "ES256", "k")
	srv := newJWKSServer(t, k)
	srv.serveRaw(http.StatusServiceUnavailable, nil)
	c := newJWKSClients(t, srv, clk, nil)
	tok := k.mint(t, clk.claims())
	for range 3 {
		if _, err := c.Authenticate(t.Context(), bearer(tok)); !errors.Is(err, ErrBadCredentials) || !strings.Contains(err.Error(), "no JWKS from the issuer yet") {
			t.Fatalf("err = %v", err)
		}
	}
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("%d fetches while the issuer is down, want 1", n)
	}
	srv.serve(t, k)
	clk.Add(jwksMinRefetch)
	if _, err := c.Authenticate(t.Context(), bearer(tok)); err != nil {
		t.Fatal(err)
	}
}

func TestJWKSConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k := newIssuerKey(t, "ES256", "k")
	srv := newJWKSServer(t, k)
	c := newJWKSClients(t, srv, clk, nil)
	tok := k.mint(t, clk.claims())
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			_, err := c.Authenticate(t.Context(), bearer(tok))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("%d fetches for 32 concurrent first uses, want 1", n)
	}
}

func TestJWKSCallerGivesUp(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k := newIssuerKey(t, "ES256", "k")
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
		_, _ = w.Write([]byte(mustJSON(t, map[string]any{"keys": []any{publicJWK(t, k)}})))
	}))
	defer srv.Close()
	defer close(release)
	c := newTestClients(t, ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience, JWTJWKSURL: srv.URL,
		Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Authenticate(ctx, bearer(k.mint(t, clk.claims()))); !errors.Is(err, ErrBadCredentials) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	// The fetch goes on for the others.
	release <- struct{}{}
	if _, err := c.Authenticate(t.Context(), bearer(k.mint(t, clk.claims()))); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

func TestClientsRun(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k := newIssuerKey(t, "ES256", "k")
	srv := newJWKSServer(t, k)
	c := newJWKSClients(t, srv, clk, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		c.Run(ctx)
		close(done)
	}()
	select {
	case <-srv.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not fetch the JWKS")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	// Run fetched it, so the first token needs no fetch.
	if _, err := c.Authenticate(t.Context(), bearer(k.mint(t, clk.claims()))); err != nil || srv.hits.Load() != 1 {
		t.Fatalf("err %v, %d fetches", err, srv.hits.Load())
	}
}

func TestJWKSRedirects(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	k := newIssuerKey(t, "ES256", "k")
	srv := newJWKSServer(t, k)
	elsewhere := httptest.NewServer(http.RedirectHandler("http://192.0.2.1/jwks", http.StatusFound))
	defer elsewhere.Close()
	for _, tc := range []struct {
		url, want string
	}{
		{strings.TrimSuffix(srv.URL, "/jwks") + "/old-jwks", ""}, // loopback http redirect: followed
		{elsewhere.URL, "redirect refused"},                      // to non-loopback http: refused before dialing
	} {
		c := newTestClients(t, ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience, JWTJWKSURL: tc.url,
			Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
		err := c.jwks.runOnce(t.Context())
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || !strings.Contains(got, tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.url, err, tc.want)
		}
	}
}
