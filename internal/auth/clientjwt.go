package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	webkey "github.com/a2arelay/relay/internal/jwk"
)

// Limits of client JWTs and their keys.
const (
	// clientJWTLeeway is the clock skew allowed on exp, nbf (and iat).
	clientJWTLeeway = 30 * time.Second
	// maxSubjectLen bounds sub, which becomes part of a principal's ID.
	maxSubjectLen = 256
	// Sizes of RSA keys accepted to verify client JWTs.
	minClientRSABits = 2048
	maxClientRSABits = webkey.MaxRSABits
)

// clientJWTAlgs are the algorithms a client JWT may use, whatever its key:
// never "none", never HMAC. Each key narrows them to its own type's.
var clientJWTAlgs = []string{"ES256", "ES384", "RS256", "PS256", "EdDSA"}

// verifyKey is a public key that verifies client JWTs, with its kid ("" if
// none) and the algorithms it may verify.
type verifyKey struct {
	kid  string
	pub  crypto.PublicKey
	algs []string
}

// keySource finds the key that verifies a token: by its kid (hasKid), or
// the only key of a source that has exactly one.
type keySource interface {
	key(ctx context.Context, kid string, hasKid bool) (*verifyKey, error)
}

// jwtVerifier checks client JWTs: the signature, with a key of its source
// that allows the token's alg; iss; aud; exp (required) and nbf, with
// leeway; and a usable sub.
type jwtVerifier struct {
	issuer string
	keys   keySource
	parser *jwt.Parser // safe for concurrent use once built
}

// newJWTVerifier returns a verifier of tokens from issuer for audience,
// signed with one of algs by a key of keys, on the clock now.
func newJWTVerifier(issuer, audience string, keys keySource, algs []string, now func() time.Time) *jwtVerifier {
	return &jwtVerifier{
		issuer: issuer,
		keys:   keys,
		parser: jwt.NewParser(
			jwt.WithValidMethods(algs),
			jwt.WithIssuer(issuer),
			jwt.WithAudience(audience),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(clientJWTLeeway),
			jwt.WithTimeFunc(now),
		),
	}
}

// verify returns the principal of a valid token, "jwt:<iss>|<sub>".
func (v *jwtVerifier) verify(ctx context.Context, token string) (Principal, error) {
	var claims jwt.RegisteredClaims
	_, err := v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		kid, hasKid, err := tokenKid(t)
		if err != nil {
			return nil, err
		}
		k, err := v.keys.key(ctx, kid, hasKid)
		if err != nil {
			return nil, err
		}
		if alg := t.Method.Alg(); !slices.Contains(k.algs, alg) {
			return nil, fmt.Errorf("alg %s is not allowed for key %.64q (%v)", alg, k.kid, k.algs)
		}
		return k.pub, nil
	})
	if err != nil {
		// jwt's errors (matchable: jwt.ErrTokenExpired...) quote no token.
		return Principal{}, fmt.Errorf("auth: %w: jwt: %w", ErrBadCredentials, err)
	}
	if err := checkSubject(claims.Subject); err != nil {
		return Principal{}, badCredentials("jwt: %v", err)
	}
	return Principal{ID: "jwt:" + v.issuer + "|" + claims.Subject, Kind: KindJWT}, nil
}

// tokenKid returns the kid of a token's header, and whether it has one.
func tokenKid(t *jwt.Token) (string, bool, error) {
	v, ok := t.Header["kid"]
	if !ok {
		return "", false, nil
	}
	kid, ok := v.(string)
	if !ok || kid == "" {
		return "", false, errors.New("kid is not a non-empty string")
	}
	return kid, true, nil
}

// checkSubject refuses a missing sub, and one unfit for a principal's ID:
// longer than 256 bytes, not UTF-8, or with control characters.
func checkSubject(sub string) error {
	switch {
	case sub == "":
		return errors.New("no sub claim")
	case len(sub) > maxSubjectLen:
		return fmt.Errorf("sub of %d bytes, more than %d", len(sub), maxSubjectLen)
	case !utf8.ValidString(sub):
		return errors.New("sub is not UTF-8")
	case strings.ContainsFunc(sub, unicode.IsControl):
		return errors.New("sub has control characters")
	}
	return nil
}

// algsFor returns the algorithms pub may verify: ES256 for EC P-256, ES384
// for P-384, RS256 and PS256 for RSA of 2048 to 8192 bits, EdDSA for
// Ed25519. Other keys are refused.
func algsFor(pub crypto.PublicKey) ([]string, error) {
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256():
			return []string{"ES256"}, nil
		case elliptic.P384():
			return []string{"ES384"}, nil
		}
		return nil, fmt.Errorf("EC key on %s, want P-256 or P-384", p.Curve.Params().Name)
	case *rsa.PublicKey:
		if bits := p.N.BitLen(); bits < minClientRSABits || bits > maxClientRSABits {
			return nil, fmt.Errorf("RSA key of %d bits, want %d to %d", bits, minClientRSABits, maxClientRSABits)
		}
		return []string{"RS256", "PS256"}, nil
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("an Ed25519 key of %d bytes", len(p))
		}
		return []string{"EdDSA"}, nil
	}
	return nil, fmt.Errorf("unsupported key type %T (want EC P-256/P-384, RSA or Ed25519)", pub)
}

// staticKey is the key source of JWTKeyFile: one key for every token,
// whatever its kid.
type staticKey struct{ k *verifyKey }

func (s staticKey) key(context.Context, string, bool) (*verifyKey, error) { return s.k, nil }

// loadPublicKeyFile reads the first public key of a PEM file: PKIX
// "PUBLIC KEY", PKCS#1 "RSA PUBLIC KEY", or the key of a "CERTIFICATE".
// Other blocks are skipped. Errors never quote the file's content.
func loadPublicKeyFile(path string) (*verifyKey, error) {
	data, err := os.ReadFile(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, pe.Err // the caller names the file
	} else if err != nil {
		return nil, err
	}
	pub, err := parsePublicPEM(data)
	if err != nil {
		return nil, err
	}
	algs, err := algsFor(pub)
	if err != nil {
		return nil, err
	}
	return &verifyKey{pub: pub, algs: algs}, nil
}

// parsePublicPEM returns the first public key of PEM data.
func parsePublicPEM(data []byte) (crypto.PublicKey, error) {
	sawPrivate := false
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			if sawPrivate {
				return nil, errors.New("holds a private key, not a public key: give the issuer's public key (PUBLIC KEY or CERTIFICATE)")
			}
			return nil, errors.New("no PEM PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE block")
		}
		switch block.Type {
		case "PUBLIC KEY":
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PUBLIC KEY: %w", err)
			}
			return pub, nil
		case "RSA PUBLIC KEY":
			pub, err := x509.ParsePKCS1PublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse RSA PUBLIC KEY: %w", err)
			}
			return pub, nil
		case "CERTIFICATE":
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse CERTIFICATE: %w", err)
			}
			return cert.PublicKey, nil
		case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			sawPrivate = true
		}
	}
}
