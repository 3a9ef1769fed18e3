package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Prefix begins every sealed value; a value without it is plaintext.
const Prefix = "enc:"

// version is the format of sealed values after Prefix.
const version = "v1"

// nonceSize is the size of the random GCM nonce at the start of the payload.
const nonceSize = 12

// Sealed reports whether s looks like a sealed value (begins with Prefix).
func Sealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal encrypts plain with the current key for the place aad, and returns
// "enc:v1:<kid>:<base64url(nonce||ciphertext)>" with a random nonce.
//
// With a nil ring (encryption off) it returns plain as it is, unless plain
// itself begins with "enc:": stored so, it could not be told from a sealed
// value, so that is an error.
func (r *Ring) Seal(plain []byte, aad string) (string, error) {
	if r == nil {
		if Sealed(string(plain)) {
			return "", fmt.Errorf("secrets: seal: a value beginning with %q cannot be stored while encryption is off", Prefix)
		}
		return string(plain), nil
	}
	aead := r.aeads[r.current]
	buf := make([]byte, nonceSize, nonceSize+len(plain)+aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("secrets: seal: %w", err)
	}
	buf = aead.Seal(buf, buf[:nonceSize], plain, additional(r.current, aad))
	return Prefix + version + ":" + r.current + ":" + base64.RawURLEncoding.EncodeToString(buf), nil
}

// Open returns the plaintext of s, sealed for the place aad. stale is true
// when s should be sealed again and written back: it was sealed with a key
// that is no longer current, or it is a plaintext value (no "enc:" prefix)
// written before encryption was turned on, returned as it is.
//
// With a nil ring, plaintext values are returned as they are (not stale)
// and a sealed value is an ErrNoKeys error. A kid not in the ring is
// ErrUnknownKey; a value that does not authenticate (wrong key, tampered,
// or sealed for another place) is ErrDecrypt. Errors name at most the kid.
func (r *Ring) Open(s string, aad string) (plain []byte, stale bool, err error) {
	if !Sealed(s) {
		return []byte(s), r != nil, nil
	}
	if r == nil {
		return nil, false, fmt.Errorf("secrets: open: %w", ErrNoKeys)
	}
	kid, payload, err := split(s)
	if err != nil {
		return nil, false, err
	}
	aead := r.aeads[kid]
	if aead == nil {
		return nil, false, fmt.Errorf("secrets: open: %w %q (configured: %s)", ErrUnknownKey, kid, strings.Join(r.kids, ", "))
	}
	if len(payload) < nonceSize+aead.Overhead() {
		return nil, false, fmt.Errorf("secrets: open: %w: too short", ErrMalformed)
	}
	plain, err = aead.Open(nil, payload[:nonceSize], payload[nonceSize:], additional(kid, aad))
	if err != nil {
		return nil, false, fmt.Errorf("secrets: open: %w with key %q: wrong key, or the value was altered or moved", ErrDecrypt, kid)
	}
	if plain == nil {
		plain = []byte{}
	}
	return plain, kid != r.current, nil
}

// split parses "enc:v1:<kid>:<payload>" into the kid and the decoded payload.
func split(s string) (kid string, payload []byte, err error) {
	rest, ok := strings.CutPrefix(s[len(Prefix):], version+":")
	if !ok {
		return "", nil, fmt.Errorf("secrets: open: %w: unsupported version", ErrMalformed)
	}
	kid, b64, ok := strings.Cut(rest, ":")
	if !ok || !ValidKID(kid) {
		return "", nil, fmt.Errorf("secrets: open: %w: bad key id", ErrMalformed)
	}
	payload, err = base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil {
		return "", nil, fmt.Errorf("secrets: open: %w: bad base64", ErrMalformed)
	}
	return kid, payload, nil
}

// additional is the GCM additional data: the format, the kid and the
// caller's place. The kid cannot contain NUL, so the encoding is unambiguous.
func additional(kid, aad string) []byte {
	return []byte(Prefix + version + "\x00" + kid + "\x00" + aad)
}

// Mask returns s for display: "" stays "", a value shorter than 12
// characters becomes "****", a longer one "****" and its last 4 characters.
func Mask(s string) string {
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return ""
	case n < 12:
		return "****"
	}
	i := len(s)
	for range 4 {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return "****" + s[i:]
}
