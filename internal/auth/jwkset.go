package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
)

// remoteJWK is the part of an RFC 7517 JSON Web Key that client JWT
// verification reads.
type remoteJWK struct {
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

// parseJWKSet decodes a JWK Set ({"keys":[...]}). Keys relay cannot use
// (other types or curves, RSA under 2048 bits, "use" other than "sig", an
// "alg" their type does not allow, malformed) are skipped with a reason; a
// kid that more than one key claims is dropped altogether, since a token
// naming it is ambiguous. A set without any usable key is an error.
func parseJWKSet(body []byte) (*jwkSet, []string, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, nil, fmt.Errorf("bad JSON: %w", err)
	}
	if doc.Keys == nil {
		return nil, nil, errors.New(`no "keys" array`)
	}
	set := &jwkSet{byKid: map[string]*verifyKey{}}
	var (
		skipped []string
		noKid   []*verifyKey
		dup     = map[string]bool{}
	)
	for i, raw := range doc.Keys {
		k, err := decodeJWK(raw)
		switch {
		case err != nil:
			skipped = append(skipped, fmt.Sprintf("keys[%d]: %v", i, err))
		case k.kid == "":
			noKid = append(noKid, k)
		case dup[k.kid]:
		case set.byKid[k.kid] != nil:
			delete(set.byKid, k.kid)
			dup[k.kid] = true
			skipped = append(skipped, fmt.Sprintf("kid %.64q: more than one key has it", k.kid))
		default:
			set.byKid[k.kid] = k
		}
	}
	set.size = len(set.byKid) + len(noKid)
	switch {
	case set.size == 0:
		return nil, skipped, fmt.Errorf("no usable key among %d (%s)", len(doc.Keys), strings.Join(skipped[:min(len(skipped), maxSkippedLogged)], "; "))
	case len(noKid) == 1 && set.size == 1:
		set.only = noKid[0]
	case set.size == 1:
		for _, k := range set.byKid {
			set.only = k
		}
	}
	return set, skipped, nil
}

// decodeJWK returns the verification key of one JWK: EC P-256 or P-384,
// RSA of 2048 to 8192 bits, or OKP Ed25519, for signatures.
func decodeJWK(raw json.RawMessage) (*verifyKey, error) {
	var j remoteJWK
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if j.Use != "" && j.Use != "sig" {
		return nil, fmt.Errorf("use %.16q, not sig", j.Use)
	}
	if j.KeyOps != nil && !slices.Contains(j.KeyOps, "verify") {
		return nil, errors.New(`key_ops without "verify"`)
	}
	var (
		pub crypto.PublicKey
		err error
	)
	switch j.Kty {
	case "EC":
		pub, err = decodeECJWK(j)
	case "RSA":
		pub, err = decodeRSAJWK(j)
	case "OKP":
		pub, err = decodeOKPJWK(j)
	default:
		err = fmt.Errorf("kty %.16q (want EC, RSA or OKP)", j.Kty)
	}
	if err != nil {
		return nil, err
	}
	algs, err := algsFor(pub)
	if err != nil {
		return nil, err
	}
	if j.Alg != "" {
		if !slices.Contains(algs, j.Alg) {
			return nil, fmt.Errorf("alg %.16q with a key for %v", j.Alg, algs)
		}
		algs = []string{j.Alg}
	}
	return &verifyKey{kid: j.Kid, pub: pub, algs: algs}, nil
}

// decodeECJWK decodes an EC key on P-256 or P-384; the point must be on the curve.
func decodeECJWK(j remoteJWK) (crypto.PublicKey, error) {
	var (
		curve elliptic.Curve
		size  int
	)
	switch j.Crv {
	case "P-256":
		curve, size = elliptic.P256(), 32
	case "P-384":
		curve, size = elliptic.P384(), 48
	default:
		return nil, fmt.Errorf("EC curve %.16q (want P-256 or P-384)", j.Crv)
	}
	x, errX := b64Field(j.X)
	y, errY := b64Field(j.Y)
	if errX != nil || errY != nil || len(x) != size || len(y) != size {
		return nil, fmt.Errorf("EC %s: x and y must be %d bytes of base64url", j.Crv, size)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, slices.Concat([]byte{4}, x, y))
	if err != nil {
		return nil, fmt.Errorf("EC %s: %w", j.Crv, err)
	}
	return pub, nil
}

// decodeRSAJWK decodes an RSA key of at most 8192 bits (algsFor checks the
// lower bound) with an odd exponent that fits an int32.
func decodeRSAJWK(j remoteJWK) (crypto.PublicKey, error) {
	n, errN := b64Field(j.N)
	e, errE := b64Field(j.E)
	if errN != nil || errE != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("RSA: n and e must be base64url, e at most 4 bytes")
	}
	if len(n) > maxClientRSABits/8+1 {
		return nil, fmt.Errorf("RSA key of more than %d bits", maxClientRSABits)
	}
	exp := new(big.Int).SetBytes(e).Int64()
	if exp < 3 || exp%2 == 0 || exp > math.MaxInt32 {
		return nil, fmt.Errorf("RSA exponent %d", exp)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}, nil
}

// decodeOKPJWK decodes an Ed25519 key.
func decodeOKPJWK(j remoteJWK) (crypto.PublicKey, error) {
	if j.Crv != "Ed25519" {
		return nil, fmt.Errorf("OKP curve %.16q (want Ed25519)", j.Crv)
	}
	x, err := b64Field(j.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("Ed25519: x must be %d bytes of base64url", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// b64Field decodes a base64url JWK member, tolerating padding.
func b64Field(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
