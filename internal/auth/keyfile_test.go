package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

func writePEM(t *testing.T, blockType string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pkcs8(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	wantKid, err := kidOf(ec.Public())
	if err != nil {
		t.Fatal(err)
	}
	// A generated key already in Redis stays published next to the file key.
	generated := newKeys(t, rdb, KeyConfig{Prefix: prefix + "relay"}, nil)

	for name, path := range map[string]string{
		"sec1":  writePEM(t, "EC PRIVATE KEY", sec1),
		"pkcs8": writePEM(t, "PRIVATE KEY", pkcs8(t, ec)),
	} {
		k := newKeys(t, rdb, KeyConfig{KeyFile: path, Prefix: prefix + "relay"}, nil)
		if k.CurrentKID() != wantKid {
			t.Fatalf("%s: kid = %s, want %s", name, k.CurrentKID(), wantKid)
		}
		if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{wantKid, generated.CurrentKID()}) {
			t.Fatalf("%s: JWKS kids = %v, want [%s %s]", name, kids, wantKid, generated.CurrentKID())
		}
		tok, err := k.Sign(sampleClaims())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := verify(t, tok, jwksKeyfunc(t, k.JWKS()), ES256); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := k.Rotate(t.Context()); !errors.Is(err, ErrFileKey) {
			t.Fatalf("%s: Rotate: err = %v, want ErrFileKey", name, err)
		}
	}
	if e := storedEntries(t, rdb, prefix+"relay"); len(e) != 1 {
		t.Fatalf("%d keys in Redis, want only the generated one (the file key is not stored)", len(e))
	}

	// Without Redis, only the file key is published.
	k, err := NewKeys(t.Context(), nil, KeyConfig{KeyFile: writePEM(t, "EC PRIVATE KEY", sec1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, k.JWKS()); !slices.Equal(kids, []string{wantKid}) {
		t.Fatalf("JWKS kids without Redis = %v", kids)
	}
}

func TestKeyFileFormatsAndAlgorithms(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	sec1, _ := x509.MarshalECPrivateKey(ec)
	ecParams := filepath.Join(t.TempDir(), "openssl.pem") // as `openssl ecparam -genkey` writes it
	ecParamsPEM := append(pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})...)
	if err := os.WriteFile(ecParams, ecParamsPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, alg, path string
		wantErr         error // nil: success; errAny: any error
	}{
		{"EC SEC1", ES256, writePEM(t, "EC PRIVATE KEY", sec1), nil},
		{"EC after EC PARAMETERS", "", ecParams, nil},
		{"EC PKCS#8", ES256, writePEM(t, "PRIVATE KEY", pkcs8(t, ec)), nil},
		{"Ed25519 PKCS#8", EdDSA, writePEM(t, "PRIVATE KEY", pkcs8(t, ed)), nil},
		{"RSA PKCS#1", RS256, writePEM(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), nil},
		{"RSA PKCS#8", RS256, writePEM(t, "PRIVATE KEY", pkcs8(t, rsaKey)), nil},
		{"EC for EdDSA", EdDSA, writePEM(t, "EC PRIVATE KEY", sec1), ErrKeyType},
		{"EC for RS256", RS256, writePEM(t, "PRIVATE KEY", pkcs8(t, ec)), ErrKeyType},
		{"Ed25519 for ES256", ES256, writePEM(t, "PRIVATE KEY", pkcs8(t, ed)), ErrKeyType},
		{"RSA by default", "", writePEM(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), ErrKeyType},
		{"P-384", ES256, writePEM(t, "PRIVATE KEY", pkcs8(t, p384)), ErrKeyType},
		{"not a key", ES256, writePEM(t, "CERTIFICATE", []byte{1, 2, 3}), errAny},
		{"missing", ES256, filepath.Join(t.TempDir(), "absent.pem"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := NewKeys(t.Context(), nil, KeyConfig{Algorithm: tt.alg, KeyFile: tt.path}, nil)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatal(err)
			case tt.wantErr == nil:
				if _, err := k.Sign(sampleClaims()); err != nil {
					t.Fatal(err)
				}
			case err == nil:
				t.Fatalf("NewKeys succeeded, want %v", tt.wantErr)
			case tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")
