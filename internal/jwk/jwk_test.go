package jwk

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"testing"
)

// Whatever a JWKS holds, Public answers a key of a supported type within
// bounds, or an error; it never panics.
func FuzzPublic(f *testing.F) {
	f.Add(`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`)
	f.Add(`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}`)
	f.Add(`{"kty":"RSA","n":"AQAB","e":"AQAB"}`)
	f.Add(`{"kty":"EC","crv":"P-384","x":"","y":"","use":"enc"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var k Key
		if json.Unmarshal([]byte(doc), &k) != nil {
			return
		}
		pub, err := Public(k)
		if err != nil {
			return
		}
		switch p := pub.(type) {
		case *ecdsa.PublicKey, ed25519.PublicKey:
		case *rsa.PublicKey:
			if p.N.BitLen() > MaxRSABits || p.E < 3 || p.E%2 == 0 {
				t.Fatalf("RSA key out of bounds: %d bits, e=%d", p.N.BitLen(), p.E)
			}
		default:
			t.Fatalf("unexpected key type %T", pub)
		}
		if k.Use != "" && k.Use != "sig" {
			t.Fatalf("a key for %q accepted", k.Use)
		}
	})
}

func TestPublic(t *testing.T) {
	ok := Key{Kty: "OKP", Crv: "Ed25519", X: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
	if pub, err := Public(ok); err != nil || len(pub.(ed25519.PublicKey)) != ed25519.PublicKeySize {
		t.Fatalf("Ed25519 key: %v, %v", pub, err)
	}
	for name, k := range map[string]Key{
		"use enc":     {Kty: "OKP", Crv: "Ed25519", X: ok.X, Use: "enc"},
		"no verify":   {Kty: "OKP", Crv: "Ed25519", X: ok.X, KeyOps: []string{"sign"}},
		"short x":     {Kty: "OKP", Crv: "Ed25519", X: "AQAB"},
		"P-521":       {Kty: "EC", Crv: "P-521"},
		"not a point": {Kty: "EC", Crv: "P-256", X: ok.X, Y: ok.X},
		"even e":      {Kty: "RSA", N: ok.X, E: "AAAC"},
		"oct":         {Kty: "oct"},
	} {
		if _, err := Public(k); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
