package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// notification is the shape of the claims relay signs (PROTOCOL.md §4).
type notification struct {
	jwt.RegisteredClaims
	TaskID  string `json:"taskId"`
	BodySHA string `json:"request_body_sha256"`
}

func sampleClaims() notification {
	now := time.Now()
	return notification{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    "https://relay.example",
			Audience:  jwt.ClaimStrings{"https://client.example/hook"},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)),
			ID:        "0d9b3c0e-5f7a-4b9c-9a51-6f1f0c3e9b21",
		},
		TaskID:  "task-123",
		BodySHA: strings.Repeat("ab", 32),
	}
}

// jwksKeyfunc is what a receiver does: it knows nothing but the JWKS JSON,
// decodes each JWK by hand and picks the key by the token's kid.
func jwksKeyfunc(t *testing.T, raw []byte) jwt.Keyfunc {
	t.Helper()
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("JWKS %s: %v", raw, err)
	}
	keys := map[string]crypto.PublicKey{}
	algs := map[string]string{}
	for _, j := range set.Keys {
		pub, err := parseJWK(j)
		if err != nil {
			t.Fatalf("JWK %v: %v", j, err)
		}
		if j["use"] != "sig" || j["kid"] == "" || j["alg"] == "" {
			t.Fatalf("JWK %v: want use sig, a kid and an alg", j)
		}
		keys[j["kid"]], algs[j["kid"]] = pub, j["alg"]
	}
	return func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		if keys[kid] == nil || algs[kid] != tok.Method.Alg() {
			return nil, fmt.Errorf("kid %q (alg %s) not in JWKS", kid, tok.Method.Alg())
		}
		return keys[kid], nil
	}
}

func parseJWK(j map[string]string) (crypto.PublicKey, error) {
	b := func(name string) []byte {
		v, err := base64.RawURLEncoding.DecodeString(j[name])
		if err != nil || len(v) == 0 {
			panic(fmt.Sprintf("JWK field %s = %q: %v", name, j[name], err))
		}
		return v
	}
	switch {
	case j["kty"] == "EC" && j["crv"] == "P-256":
		x, y := b("x"), b("y")
		if len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("coordinates of %d and %d bytes, want 32", len(x), len(y))
		}
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, x, y))
	case j["kty"] == "OKP" && j["crv"] == "Ed25519":
		return ed25519.PublicKey(b("x")), nil
	case j["kty"] == "RSA":
		return &rsa.PublicKey{N: new(big.Int).SetBytes(b("n")), E: int(new(big.Int).SetBytes(b("e")).Int64())}, nil
	}
	return nil, fmt.Errorf("unsupported JWK %v", j)
}

// verify parses tok with keyfunc, insisting on alg, and returns its claims.
func verify(t *testing.T, tok string, keyfunc jwt.Keyfunc, alg string) (*notification, error) {
	t.Helper()
	var c notification
	parsed, err := jwt.ParseWithClaims(tok, &c, keyfunc, jwt.WithValidMethods([]string{alg}))
	if err != nil {
		return nil, err
	}
	if parsed.Header["typ"] != "JWT" {
		t.Errorf("typ = %v, want JWT", parsed.Header["typ"])
	}
	return &c, nil
}

func jwksKids(t *testing.T, raw []byte) []string {
	t.Helper()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

func TestSignVerifiesAgainstJWKS(t *testing.T) {
	t.Parallel()
	for _, alg := range []string{ES256, EdDSA, RS256} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			k, err := NewKeys(t.Context(), rdb, KeyConfig{Algorithm: alg, Prefix: prefix + "relay"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := k.Sign(sampleClaims())
			if err != nil {
				t.Fatal(err)
			}
			c, err := verify(t, tok, jwksKeyfunc(t, k.JWKS()), alg)
			if err != nil {
				t.Fatalf("verify with the JWKS: %v\nJWKS: %s", err, k.JWKS())
			}
			if c.TaskID != "task-123" || c.Issuer != "https://relay.example" {
				t.Errorf("claims = %+v", c)
			}
			if _, err := verify(t, tok, k.VerifyKeyFunc(), alg); err != nil {
				t.Errorf("verify with VerifyKeyFunc: %v", err)
			}
			if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{k.CurrentKID()}) {
				t.Errorf("JWKS kids = %v, want [%s]", kids, k.CurrentKID())
			}
			// A token whose signature is tampered with fails.
			if _, err := verify(t, tok[:len(tok)-4]+"AAAA", jwksKeyfunc(t, k.JWKS()), alg); err == nil {
				t.Error("tampered token verified")
			}
		})
	}
}

// TestVerifyKeyFuncRefusesOtherAlg: a token naming a published kid but
// another algorithm (e.g. HS256 with the public key as secret) is refused.
func TestVerifyKeyFuncRefusesOtherAlg(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k, err := NewKeys(t.Context(), rdb, KeyConfig{Prefix: prefix + "relay"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, sampleClaims())
	forged.Header["kid"] = k.CurrentKID()
	tok, err := forged.SignedString([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwt.Parse(tok, k.VerifyKeyFunc()); err == nil {
		t.Fatal("HS256 token with an ES256 kid verified")
	}
	unknown := jwt.NewWithClaims(jwt.SigningMethodES256, sampleClaims())
	unknown.Header["kid"] = "nope"
	if _, err := k.VerifyKeyFunc()(unknown); err == nil || !strings.Contains(err.Error(), ErrUnknownKey.Error()) {
		t.Fatalf("unknown kid: err = %v, want ErrUnknownKey", err)
	}
}

func TestServeJWKS(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k, err := NewKeys(t.Context(), rdb, KeyConfig{Algorithm: EdDSA, Prefix: prefix + "relay"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Get("/.well-known/jwks.json", k.ServeJWKS)
	resp, err := app.Test(httptest.NewRequest("GET", "/.well-known/jwks.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != string(k.JWKS()) {
		t.Fatalf("status %d, body %s; want 200 and %s", resp.StatusCode, body, k.JWKS())
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control = %q", cc)
	}
}

// BenchmarkSign signs the claims of one notification.
func BenchmarkSign(b *testing.B) {
	for _, alg := range []string{ES256, EdDSA} {
		rdb, prefix := redistest.New(b)
		k, err := NewKeys(b.Context(), rdb, KeyConfig{Algorithm: alg, Prefix: prefix + "relay"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		claims := sampleClaims()
		b.Run(alg, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Sign(claims); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(alg+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := k.Sign(claims); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
