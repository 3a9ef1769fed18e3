package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"

	"github.com/golang-jwt/jwt/v5"
)

// The signing algorithms relay supports (the JWS "alg" names).
const (
	ES256 = "ES256" // ECDSA on P-256 with SHA-256 (the default)
	EdDSA = "EdDSA" // Ed25519
	RS256 = "RS256" // RSASSA-PKCS1-v1_5 with SHA-256, 2048-bit keys
)

// rsaBits is the size of generated RSA keys, and the smallest accepted from a file.
const rsaBits = 2048

// signingKey is one parsed key pair with everything Sign and the JWKS need.
type signingKey struct {
	kid     string
	alg     string
	method  jwt.SigningMethod
	private crypto.Signer
	public  crypto.PublicKey
	jwk     jwk
	// header is the JWS header every token of this key has, encoded
	// (base64url of {"alg","kid","typ":"JWT"}): made once, not per token.
	header string
}

// jwk is one RFC 7517 JSON Web Key (public part only).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// methodFor returns the jwt signing method of alg.
func methodFor(alg string) (jwt.SigningMethod, error) {
	switch alg {
	case ES256:
		return signingES256, nil
	case EdDSA:
		return jwt.SigningMethodEdDSA, nil
	case RS256:
		return jwt.SigningMethodRS256, nil
	}
	return nil, fmt.Errorf("%w %q (want %s, %s or %s)", ErrAlgorithm, alg, ES256, EdDSA, RS256)
}

// generate makes a new private key for alg.
func generate(alg string) (crypto.Signer, error) {
	switch alg {
	case ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	case RS256:
		return rsa.GenerateKey(rand.Reader, rsaBits)
	}
	_, err := methodFor(alg)
	return nil, err
}

// algOf returns the algorithm a private key is for, or an error for a key
// relay cannot sign with.
func algOf(key crypto.Signer) (string, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return "", fmt.Errorf("%w: EC key on %s, want P-256", ErrKeyType, k.Curve.Params().Name)
		}
		return ES256, nil
	case ed25519.PrivateKey:
		return EdDSA, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < rsaBits {
			return "", fmt.Errorf("%w: RSA key of %d bits, want at least %d", ErrKeyType, k.N.BitLen(), rsaBits)
		}
		return RS256, nil
	}
	return "", fmt.Errorf("%w: %T", ErrKeyType, key)
}

// newSigningKey checks that key is a key for alg and derives its kid and JWK.
func newSigningKey(key crypto.Signer, alg string) (*signingKey, error) {
	method, err := methodFor(alg)
	if err != nil {
		return nil, err
	}
	got, err := algOf(key)
	if err != nil {
		return nil, err
	}
	if got != alg {
		return nil, fmt.Errorf("%w: key is for %s, algorithm is %s", ErrKeyType, got, alg)
	}
	pub := key.Public()
	kid, err := kidOf(pub)
	if err != nil {
		return nil, err
	}
	j, err := jwkOf(pub)
	if err != nil {
		return nil, err
	}
	j.Kid, j.Alg, j.Use = kid, alg, "sig"
	header, err := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "JWT"})
	if err != nil {
		return nil, err
	}
	return &signingKey{kid: kid, alg: alg, method: method, private: key, public: pub, jwk: j,
		header: base64.RawURLEncoding.EncodeToString(header)}, nil
}

// kidOf derives a key id from a public key: the first 16 characters of the
// base64url SHA-256 of its PKIX DER encoding. The same key always gets the
// same kid, on every instance.
func kidOf(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("auth: encode public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:])[:16], nil
}

// jwkOf returns the key-type fields of the JWK of pub.
func jwkOf(pub crypto.PublicKey) (jwk, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		pt, err := p.Bytes() // 0x04 || X || Y, each 32 bytes for P-256
		if err != nil {
			return jwk{}, fmt.Errorf("auth: EC public key: %w", err)
		}
		n := (len(pt) - 1) / 2
		return jwk{Kty: "EC", Crv: "P-256", X: b64(pt[1 : 1+n]), Y: b64(pt[1+n:])}, nil
	case ed25519.PublicKey:
		return jwk{Kty: "OKP", Crv: "Ed25519", X: b64(p)}, nil
	case *rsa.PublicKey:
		return jwk{Kty: "RSA", N: b64(p.N.Bytes()), E: b64(big.NewInt(int64(p.E)).Bytes())}, nil
	}
	return jwk{}, fmt.Errorf("%w: %T", ErrKeyType, pub)
}

// encodePEM returns key as a PKCS#8 "PRIVATE KEY" PEM block.
func encodePEM(key crypto.Signer) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("auth: encode private key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// parsePEM reads the first private key in data: PKCS#8 ("PRIVATE KEY"),
// SEC1 ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY"). Other blocks, such
// as the "EC PARAMETERS" that openssl writes first, are skipped.
func parsePEM(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key block (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)")
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", block.Type, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: %T", ErrKeyType, key)
		}
		return signer, nil
	}
}
