package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"

	"github.com/golang-jwt/jwt/v5"
)

// es256 is ES256 (RFC 7518 §3.4) as a golang-jwt signing method whose
// signatures are deterministic (RFC 6979): the nonce is derived from the
// key and the message with HMAC-SHA-256, not drawn from a random source
// through a SHA-512 DRBG. The signatures verify exactly as any ES256
// signature (Verify is golang-jwt's), and signing costs about a quarter
// less, which counts at one signature per notification. A deterministic
// nonce cannot repeat across messages, so a weak random source can never
// leak the key.
type es256 struct{ *jwt.SigningMethodECDSA }

// signingES256 is relay's ES256 signer.
var signingES256 = es256{jwt.SigningMethodES256}

var (
	errES256Key  = errors.New("auth: ES256 needs a P-256 private key")
	errSignature = errors.New("auth: malformed ECDSA signature")
)

// es256Size is the size of r and of s in an ES256 signature.
const es256Size = 32

// Sign returns the JWS signature of signingString: r and s, 32 bytes each.
func (es es256) Sign(signingString string, key any) ([]byte, error) {
	sig := make([]byte, 2*es256Size)
	if err := es.signInto((*[2 * es256Size]byte)(sig), []byte(signingString), key); err != nil {
		return nil, err
	}
	return sig, nil
}

// signInto writes the ES256 signature of signing into sig.
func (es256) signInto(sig *[2 * es256Size]byte, signing []byte, key any) error {
	k, ok := key.(*ecdsa.PrivateKey)
	if !ok || k.Curve.Params().BitSize != 256 {
		return errES256Key
	}
	digest := sha256.Sum256(signing)
	der, err := k.Sign(nil, digest[:], crypto.SHA256) // nil: RFC 6979
	if err != nil {
		return err
	}
	return rawSignatureInto(sig[:], der, es256Size)
}

// rawSignature turns an ASN.1 DER ECDSA signature (SEQUENCE of INTEGER r,
// INTEGER s) into r || s, each left-padded to size bytes (RFC 7518 §3.4).
func rawSignature(der []byte, size int) ([]byte, error) {
	out := make([]byte, 2*size)
	if err := rawSignatureInto(out, der, size); err != nil {
		return nil, err
	}
	return out, nil
}

// rawSignatureInto is rawSignature into out (2*size bytes, zeroed).
func rawSignatureInto(out, der []byte, size int) error {
	if len(der) < 2 || der[0] != 0x30 || int(der[1]) != len(der)-2 || der[1] >= 0x80 {
		return errSignature
	}
	rest := der[2:]
	for i := range 2 {
		if len(rest) < 2 || rest[0] != 0x02 || rest[1] >= 0x80 || int(rest[1]) > len(rest)-2 {
			return errSignature
		}
		n := int(rest[1])
		v := rest[2 : 2+n]
		rest = rest[2+n:]
		for len(v) > 0 && v[0] == 0 { // the sign byte DER puts before a high bit
			v = v[1:]
		}
		if len(v) > size {
			return errSignature
		}
		copy(out[(i+1)*size-len(v):(i+1)*size], v)
	}
	if len(rest) != 0 {
		return errSignature
	}
	return nil
}
