package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"strconv"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// Every signature verifies as ES256 (golang-jwt's and crypto/ecdsa's own
// check), is the same for the same message, and differs between messages.
// Three thousand signatures make r or s shorter than 32 bytes (a leading
// zero byte, about one in 128) come up, which the padding must handle.
func TestES256SignaturesVerify(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	short := 0
	var prev []byte
	for i := range 3000 {
		msg := "header.claims-" + strconv.Itoa(i)
		sig, err := signingES256.Sign(msg, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(sig) != 64 {
			t.Fatalf("signature of %d bytes, want 64", len(sig))
		}
		if sig[0] == 0 || sig[32] == 0 {
			short++
		}
		if err := jwt.SigningMethodES256.Verify(msg, sig, &key.PublicKey); err != nil {
			t.Fatalf("message %d: golang-jwt refuses the signature: %v", i, err)
		}
		d := sha256.Sum256([]byte(msg))
		if !ecdsa.Verify(&key.PublicKey, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatalf("message %d: crypto/ecdsa refuses the signature", i)
		}
		again, _ := signingES256.Sign(msg, key)
		if !bytes.Equal(sig, again) {
			t.Fatalf("message %d: two signatures differ; RFC 6979 signatures are deterministic", i)
		}
		if bytes.Equal(sig, prev) {
			t.Fatalf("message %d signed as the one before", i)
		}
		prev = sig
	}
	if short == 0 {
		t.Fatal("no short r or s in 3000 signatures: the padding went untested")
	}
	if signingES256.Alg() != "ES256" {
		t.Fatalf("alg %q", signingES256.Alg())
	}
}

func TestES256RefusesOtherKeys(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for _, k := range []any{p384, ed, nil, "key"} {
		if _, err := signingES256.Sign("a.b", k); err == nil {
			t.Fatalf("signed with %T", k)
		}
	}
}

func TestRawSignatureRefusesMalformedDER(t *testing.T) {
	good := []byte{0x30, 6, 0x02, 1, 5, 0x02, 1, 7}
	if out, err := rawSignature(good, 32); err != nil || out[31] != 5 || out[63] != 7 {
		t.Fatalf("good DER: %x %v", out, err)
	}
	for name, der := range map[string][]byte{
		"empty":          {},
		"not a sequence": {0x31, 6, 0x02, 1, 5, 0x02, 1, 7},
		"length":         {0x30, 7, 0x02, 1, 5, 0x02, 1, 7},
		"long form":      {0x30, 0x81, 6, 0x02, 1, 5, 0x02, 1, 7},
		"not integer":    {0x30, 6, 0x04, 1, 5, 0x02, 1, 7},
		"int overruns":   {0x30, 6, 0x02, 4, 5, 0x02, 1, 7},
		"one integer":    {0x30, 3, 0x02, 1, 5},
		"trailing":       {0x30, 8, 0x02, 1, 5, 0x02, 1, 7, 0, 0},
		"too wide":       append([]byte{0x30, 38, 0x02, 33, 1}, append(make([]byte, 32), 0x02, 1, 7)...),
	} {
		if _, err := rawSignature(der, 32); err == nil {
			t.Errorf("%s: accepted % x", name, der)
		}
	}
}
