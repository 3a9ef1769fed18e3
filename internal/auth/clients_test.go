package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestHashAPIKey(t *testing.T) {
	t.Parallel()
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := HashAPIKey("abc"); got != want {
		t.Fatalf("HashAPIKey(abc) = %s, want %s", got, want)
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	c := newTestClients(t, ClientConfig{APIKeys: []string{
		"alice:" + HashAPIKey("alice-key-0123456789"),
		"bob.ci_2:" + HashAPIKey("bob-key-0123456789"),
	}})
	for _, tc := range []struct {
		name    string
		hdr     func(string) string
		want    string
		wantErr error
	}{
		{"bearer", headers("Authorization", "Bearer alice-key-0123456789"), "key:alice", nil},
		{"bearer second key", headers("Authorization", "Bearer bob-key-0123456789"), "key:bob.ci_2", nil},
		{"bearer scheme case and spaces", headers("Authorization", " bearer   alice-key-0123456789 "), "key:alice", nil},
		{"header", headers("X-API-Key", "bob-key-0123456789"), "key:bob.ci_2", nil},
		{"header any case", headers("x-api-key", " alice-key-0123456789\t"), "key:alice", nil},
		{"header beside Basic", headers("X-API-Key", "alice-key-0123456789", "Authorization", "Basic YTpi"), "key:alice", nil},
		{"wrong key bearer", headers("Authorization", "Bearer alice-key-012345678"), "", ErrBadCredentials},
		{"wrong key header", headers("X-API-Key", "nope"), "", ErrBadCredentials},
		{"hash instead of key", headers("X-API-Key", HashAPIKey("alice-key-0123456789")), "", ErrBadCredentials},
		{"jwt-looking key, JWT off", headers("Authorization", "Bearer a.b.c"), "", ErrBadCredentials},
		{"both", headers("Authorization", "Bearer alice-key-0123456789", "X-API-Key", "alice-key-0123456789"), "", ErrBadCredentials},
		{"empty bearer", headers("Authorization", "Bearer "), "", ErrBadCredentials},
		{"too long", headers("Authorization", "Bearer "+strings.Repeat("k", maxCredentialLen+1)), "", ErrBadCredentials},
		{"too long header", headers("X-API-Key", strings.Repeat("k", maxCredentialLen+1)), "", ErrBadCredentials},
		{"none", headers(), "", ErrNoCredentials},
		{"basic only", headers("Authorization", "Basic YWxpY2Uta2V5"), "", ErrNoCredentials},
		{"blank header", headers("X-API-Key", "  "), "", ErrNoCredentials},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := c.Authenticate(t.Context(), tc.hdr)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "key-0123") {
					t.Fatalf("error %q quotes the presented key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p != (Principal{ID: tc.want, Kind: KindAPIKey}) {
				t.Fatalf("principal = %+v, want %s", p, tc.want)
			}
		})
	}
}

func TestAPIKeyCustomHeader(t *testing.T) {
	t.Parallel()
	c := newTestClients(t, ClientConfig{APIKeys: []string{"a:" + HashAPIKey("k")}, APIKeyHeader: "X-Relay-Key"})
	if p, err := c.Authenticate(t.Context(), headers("X-Relay-Key", "k")); err != nil || p.ID != "key:a" {
		t.Fatalf("custom header: %+v, %v", p, err)
	}
	if _, err := c.Authenticate(t.Context(), headers("X-API-Key", "k")); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("default header with a custom one configured: %v, want ErrNoCredentials", err)
	}
}

func TestClientsDisabled(t *testing.T) {
	t.Parallel()
	c := newTestClients(t, ClientConfig{})
	if c.Enabled() || c.Schemes() != nil {
		t.Fatalf("Enabled = %v, Schemes = %v with no credentials", c.Enabled(), c.Schemes())
	}
	if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer x")); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("err = %v, want ErrNoCredentials", err)
	}
	c.Run(t.Context()) // returns at once
}

func TestNewClientsErrors(t *testing.T) {
	t.Parallel()
	good := HashAPIKey("k")
	ec := newIssuerKey(t, "ES256", "")
	pubFile := writeClientFile(t, ec.publicPEM(t))
	der, err := x509.MarshalPKCS8PrivateKey(ec.priv)
	if err != nil {
		t.Fatal(err)
	}
	privFile := writeClientFile(t, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p521File := writeClientFile(t, (&issuerKey{priv: p521}).publicPEM(t))
	jwtOn := func(c ClientConfig) ClientConfig {
		c.JWTIssuer, c.JWTAudience = cmpStr(c.JWTIssuer, testIssuer), cmpStr(c.JWTAudience, testAudience)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  ClientConfig
		want string // in the error
	}{
		{"plain key", ClientConfig{APIKeys: []string{"alice:s3cret-key-value"}}, "APIKeys[0]: the hash does not start with"},
		{"key without name", ClientConfig{APIKeys: []string{"s3cret-key-value"}}, "APIKeys[0]: no ':'"},
		{"short hash", ClientConfig{APIKeys: []string{"a:" + good[:len(good)-1]}}, "APIKeys[0]: the hash has 63 characters, not 64"},
		{"long hash", ClientConfig{APIKeys: []string{"a:" + good + "0"}}, "has 65 characters"},
		{"uppercase hex", ClientConfig{APIKeys: []string{"a:sha256:" + strings.ToUpper(good[7:])}}, "not lowercase hex"},
		{"not hex", ClientConfig{APIKeys: []string{"a:sha256:" + strings.Repeat("g", 64)}}, "not lowercase hex"},
		{"other hash", ClientConfig{APIKeys: []string{"a:sha512:" + good[7:]}}, `does not start with "sha256:"`},
		{"bad name", ClientConfig{APIKeys: []string{"a b:" + good}}, "APIKeys[0]: the name must be"},
		{"empty name", ClientConfig{APIKeys: []string{":" + good}}, "the name must be"},
		{"long name", ClientConfig{APIKeys: []string{strings.Repeat("n", 65) + ":" + good}}, "the name must be"},
		{"duplicate name", ClientConfig{APIKeys: []string{"a:" + good, "a:" + HashAPIKey("other")}}, `APIKeys[1]: name "a" is also APIKeys[0]'s`},
		{"duplicate hash", ClientConfig{APIKeys: []string{"a:" + good, "b:" + good}}, `APIKeys[1] ("b"): same key hash as APIKeys[0] ("a")`},
		{"bad header", ClientConfig{APIKeyHeader: "X API"}, "APIKeyHeader"},
		{"authorization header", ClientConfig{APIKeyHeader: "authorization"}, "APIKeyHeader"},
		{"url without issuer", ClientConfig{JWTJWKSURL: "https://issuer.example/jwks", JWTAudience: testAudience}, "JWTIssuer is required"},
		{"url without audience", ClientConfig{JWTJWKSURL: "https://issuer.example/jwks", JWTIssuer: testIssuer}, "JWTAudience is required"},
		{"file without issuer", ClientConfig{JWTKeyFile: pubFile}, "JWTIssuer is required"},
		{"issuer without key", ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience}, "neither JWTJWKSURL nor JWTKeyFile"},
		{"url and file", jwtOn(ClientConfig{JWTJWKSURL: "https://issuer.example/jwks", JWTKeyFile: pubFile}), "both set"},
		{"http url", jwtOn(ClientConfig{JWTJWKSURL: "http://issuer.example/jwks"}), "JWTJWKSURL: want an https URL"},
		{"http url with password", jwtOn(ClientConfig{JWTJWKSURL: "http://u:hunter2@issuer.example/jwks"}), "JWTJWKSURL: want an https URL"},
		{"ftp url", jwtOn(ClientConfig{JWTJWKSURL: "ftp://issuer.example/jwks"}), "JWTJWKSURL: want an https URL"},
		{"relative url", jwtOn(ClientConfig{JWTJWKSURL: "/jwks"}), "JWTJWKSURL: not an absolute URL"},
		{"unparsable url", jwtOn(ClientConfig{JWTJWKSURL: "https://hunter2@[::1"}), "JWTJWKSURL: not a valid URL"},
		{"missing key file", jwtOn(ClientConfig{JWTKeyFile: filepath.Join(t.TempDir(), "none.pem")}), "no such file"},
		{"private key file", jwtOn(ClientConfig{JWTKeyFile: privFile}), "holds a private key"},
		{"P-521 key file", jwtOn(ClientConfig{JWTKeyFile: p521File}), "EC key on P-521"},
		{"not PEM", jwtOn(ClientConfig{JWTKeyFile: writeClientFile(t, []byte("hunter2"))}), "no PEM PUBLIC KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewClients(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			for _, secret := range []string{"s3cret", "hunter2"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q echoes a secret", err)
				}
			}
		})
	}
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestSchemes(t *testing.T) {
	t.Parallel()
	keys := []string{"a:" + HashAPIKey("k")}
	pubFile := writeClientFile(t, newIssuerKey(t, "ES256", "").publicPEM(t))
	jwtCfg := ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience, JWTKeyFile: pubFile}

	got := newTestClients(t, ClientConfig{APIKeys: keys}).Schemes()
	if len(got) != 2 || got[0].Name != "apiKey" || got[0].Type != "apiKey" || got[0].In != "header" ||
		got[0].HeaderName != "X-API-Key" || !strings.Contains(got[0].Description, "Bearer") ||
		got[1].Name != "bearer" || got[1].Type != "http" || got[1].Scheme != "bearer" || got[1].BearerFormat != "" {
		t.Errorf("API keys only: %+v", got)
	}
	got = newTestClients(t, jwtCfg).Schemes()
	if len(got) != 1 || got[0].Name != "bearer" || got[0].BearerFormat != "JWT" || !strings.Contains(got[0].Description, testIssuer) {
		t.Errorf("JWT only: %+v", got)
	}
	jwtCfg.APIKeys, jwtCfg.APIKeyHeader = keys, "X-Key"
	got = newTestClients(t, jwtCfg).Schemes()
	if len(got) != 2 || got[0].HeaderName != "X-Key" || got[1].BearerFormat != "JWT" || !strings.Contains(got[1].Description, "API key") {
		t.Errorf("both: %+v", got)
	}
}

func TestLooksLikeJWT(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"eyJh.eyJz.c2ln": true, "a.b.": true, "a-_.b.c": true,
		"a.b": false, "a.b.c.d": false, ".b.c": false, "a..c": false, "a.b.c=": false,
		"a+b.c.d": false, "": false, "sk_live_abc": false, "a.b c.d": false,
	} {
		if got := looksLikeJWT(s); got != want {
			t.Errorf("looksLikeJWT(%q) = %v, want %v", s, got, want)
		}
	}
}

// selfSignedCert returns a CERTIFICATE PEM for k.
func selfSignedCert(t *testing.T, k *issuerKey) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "issuer"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1, 0)} // expired: validity is not checked
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.priv.Public(), k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestJWTKeyFile(t *testing.T) {
	t.Parallel()
	clk := newClientClock()
	newFor := func(t *testing.T, file []byte) *Clients {
		return newTestClients(t, ClientConfig{JWTIssuer: testIssuer, JWTAudience: testAudience,
			JWTKeyFile: writeClientFile(t, file), Now: clk.Now})
	}
	for _, alg := range []string{"ES256", "ES384", "RS256", "PS256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			k := newIssuerKey(t, alg, "any-kid")
			c := newFor(t, k.publicPEM(t))
			p, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+k.mint(t, clk.claims())))
			if err != nil || p != (Principal{ID: "jwt:" + testIssuer + "|alice", Kind: KindJWT}) {
				t.Fatalf("principal %+v, err %v", p, err)
			}
			k.kid = "" // the file's key verifies tokens with or without kid
			if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+k.mint(t, clk.claims()))); err != nil {
				t.Fatalf("without kid: %v", err)
			}
			// The classic confusion: HS256 keyed with the public key's PEM.
			hs := jwt.NewWithClaims(jwt.SigningMethodHS256, clk.claims())
			forged, err := hs.SignedString(k.publicPEM(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Authenticate(t.Context(), headers("Authorization", "Bearer "+forged))
			if !errors.Is(err, ErrBadCredentials) || !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
				t.Fatalf("HS256 with the public key as secret: %v", err)
			}
			other := newIssuerKey(t, alg, "")
			if alg == "RS256" || alg == "PS256" {
				return // the RSA test key is shared
			}
			if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+other.mint(t, clk.claims()))); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
				t.Fatalf("token of another key: %v", err)
			}
		})
	}
	t.Run("certificate", func(t *testing.T) {
		t.Parallel()
		k := newIssuerKey(t, "ES256", "")
		c := newFor(t, selfSignedCert(t, k))
		if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+k.mint(t, clk.claims()))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("PKCS1 RSA public key, other algs refused", func(t *testing.T) {
		t.Parallel()
		k := newIssuerKey(t, "RS256", "")
		c := newFor(t, pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(k.priv.Public().(*rsa.PublicKey))}))
		if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+k.mint(t, clk.claims()))); err != nil {
			t.Fatal(err)
		}
		es := newIssuerKey(t, "ES256", "")
		if _, err := c.Authenticate(t.Context(), headers("Authorization", "Bearer "+es.mint(t, clk.claims()))); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
			t.Fatalf("ES256 token against an RSA key: %v", err)
		}
	})
}
