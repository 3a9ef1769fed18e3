// Package jwk decodes RFC 7517 JSON Web Keys into Go public keys, with the
// bounds relay trusts: EC on P-256 or P-384 (the point on the curve), RSA
// of at most MaxRSABits with an odd exponent that fits an int32, Ed25519.
// Client JWT verification (internal/auth) and the receiver package
// (webhook) share it; each then decides which algorithms a key may sign.
package jwk

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
)

// MaxRSABits bounds RSA keys (a larger modulus is a cheap way to make a
// verifier spend CPU).
const MaxRSABits = 8192

// Key is the part of a JSON Web Key that verification reads.
type Key struct {
	Kty    string   `json:"kty"`
	Crv    string   `json:"crv"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
}

// Public returns k's public key, or why it cannot verify signatures: a
// "use" other than "sig", "key_ops" without "verify", another key type or
// curve, or malformed or out-of-bounds key material.
func Public(k Key) (crypto.PublicKey, error) {
	if k.Use != "" && k.Use != "sig" {
		return nil, fmt.Errorf("use %.16q, not sig", k.Use)
	}
	if k.KeyOps != nil && !slices.Contains(k.KeyOps, "verify") {
		return nil, errors.New(`key_ops without "verify"`)
	}
	switch k.Kty {
	case "EC":
		return decodeEC(k)
	case "RSA":
		return decodeRSA(k)
	case "OKP":
		return decodeOKP(k)
	}
	return nil, fmt.Errorf("kty %.16q (want EC, RSA or OKP)", k.Kty)
}

// decodeEC decodes an EC key on P-256 or P-384; the point must be on the curve.
func decodeEC(k Key) (crypto.PublicKey, error) {
	var (
		curve elliptic.Curve
		size  int
	)
	switch k.Crv {
	case "P-256":
		curve, size = elliptic.P256(), 32
	case "P-384":
		curve, size = elliptic.P384(), 48
	default:
		return nil, fmt.Errorf("EC curve %.16q (want P-256 or P-384)", k.Crv)
	}
	x, errX := field(k.X)
	y, errY := field(k.Y)
	if errX != nil || errY != nil || len(x) != size || len(y) != size {
		return nil, fmt.Errorf("EC %s: x and y must be %d bytes of base64url", k.Crv, size)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, slices.Concat([]byte{4}, x, y))
	if err != nil {
		return nil, fmt.Errorf("EC %s: %w", k.Crv, err)
	}
	return pub, nil
}

// decodeRSA decodes an RSA key of at most MaxRSABits (callers check their
// lower bound) with an odd exponent that fits an int32.
func decodeRSA(k Key) (crypto.PublicKey, error) {
	n, errN := field(k.N)
	e, errE := field(k.E)
	if errN != nil || errE != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("RSA: n and e must be base64url, e at most 4 bytes")
	}
	if len(n) > MaxRSABits/8+1 {
		return nil, fmt.Errorf("RSA key of more than %d bits", MaxRSABits)
	}
	exp := new(big.Int).SetBytes(e).Int64()
	if exp < 3 || exp%2 == 0 || exp > math.MaxInt32 {
		return nil, fmt.Errorf("RSA exponent %d", exp)
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}
	if pub.N.BitLen() > MaxRSABits {
		return nil, fmt.Errorf("RSA key of more than %d bits", MaxRSABits)
	}
	return pub, nil
}

// decodeOKP decodes an Ed25519 key.
func decodeOKP(k Key) (crypto.PublicKey, error) {
	if k.Crv != "Ed25519" {
		return nil, fmt.Errorf("OKP curve %.16q (want Ed25519)", k.Crv)
	}
	x, err := field(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("Ed25519: x must be %d bytes of base64url", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// field decodes a base64url JWK member, tolerating padding.
func field(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
