// Package secrets encrypts the secrets relay keeps at rest in Redis (the
// token and credentials of push configs, the private signing keys) and masks
// them in answers.
//
// A Ring holds AES-256-GCM keys by key id (kid); the first is current and
// seals new values, the others only open values sealed before a rotation.
// A sealed value is printable: "enc:v1:<kid>:<base64url(nonce||ciphertext)>".
// Every value is sealed for a place (the additional data, aad: say the task
// and config id it belongs to), so a ciphertext copied to another place does
// not open. Values written before encryption was turned on, and values sealed
// with a key that is no longer current, open as "stale": the caller seals
// them again and writes them back, so keys rotate lazily.
//
// A nil *Ring means encryption is off: Seal returns the plaintext and Open
// returns plaintext values as they are.
//
// Key material never appears in errors, String or logs.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key in bytes (AES-256).
const KeySize = 32

// Errors of the package; match them with errors.Is.
var (
	// ErrKeySpec: a key spec given to ParseKeys or a kid given to Generate
	// is not valid.
	ErrKeySpec = errors.New("invalid secret key")
	// ErrUnknownKey: a sealed value names a kid that is not in the ring.
	ErrUnknownKey = errors.New("unknown secret key id")
	// ErrDecrypt: the value does not authenticate under its key and place
	// (wrong key, tampered, or moved from another place).
	ErrDecrypt = errors.New("cannot decrypt")
	// ErrMalformed: a value begins with "enc:" but is not a sealed value
	// this version can read.
	ErrMalformed = errors.New("malformed encrypted value")
	// ErrNoKeys: a value is encrypted, but the ring is nil.
	ErrNoKeys = errors.New("encrypted, but no secret keys are configured")
)

// Ring is a set of AES-256-GCM keys by kid, the first one current. It is
// immutable and safe for concurrent use. The zero Ring is not usable; a nil
// *Ring means encryption is off.
type Ring struct {
	current string
	kids    []string // in the configured order, current first
	aeads   map[string]cipher.AEAD
}

// ParseKeys builds a ring from specs of the form "<kid>:<base64 of 32
// bytes>" (standard or URL base64, padded or not), the first one current.
// Spaces around a spec are ignored. A kid is 1 to 32 of [A-Za-z0-9_-] and
// appears once. No specs (or only blank ones) return a nil ring:
// encryption off. Errors name the entry by position and kid, never by its key.
func ParseKeys(specs []string) (*Ring, error) {
	r := &Ring{aeads: map[string]cipher.AEAD{}}
	for i, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		kid, b64, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("secrets: key %d: %w: want <kid>:<base64 key>", i+1, ErrKeySpec)
		}
		if !ValidKID(kid) {
			return nil, fmt.Errorf("secrets: key %d: %w: the key id must be 1 to 32 of A-Z a-z 0-9 _ -", i+1, ErrKeySpec)
		}
		if _, dup := r.aeads[kid]; dup {
			return nil, fmt.Errorf("secrets: key %d (%q): %w: the key id appears twice", i+1, kid, ErrKeySpec)
		}
		key, err := decodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("secrets: key %d (%q): %w: %s", i+1, kid, ErrKeySpec, err)
		}
		if err := r.add(kid, key); err != nil {
			return nil, err
		}
	}
	if len(r.kids) == 0 {
		return nil, nil
	}
	return r, nil
}

// Generate returns a ring with one random key named kid, for stores that do
// not outlive the process (values it seals are lost with it).
func Generate(kid string) (*Ring, error) {
	if !ValidKID(kid) {
		return nil, fmt.Errorf("secrets: generate: %w: the key id must be 1 to 32 of A-Z a-z 0-9 _ -", ErrKeySpec)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secrets: generate: %w", err)
	}
	r := &Ring{aeads: map[string]cipher.AEAD{}}
	if err := r.add(kid, key); err != nil {
		return nil, err
	}
	return r, nil
}

// add appends a key; the first one added is current.
func (r *Ring) add(kid string, key []byte) error {
	block, err := aes.NewCipher(key)
	if err != nil {
		return fmt.Errorf("secrets: key %q: %w", kid, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return fmt.Errorf("secrets: key %q: %w", kid, err)
	}
	if len(r.kids) == 0 {
		r.current = kid
	}
	r.kids = append(r.kids, kid)
	r.aeads[kid] = aead
	return nil
}

// decodeKey reads a 32-byte key in standard or URL base64, padded or not.
// Its error never quotes the input.
func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	key, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("the key is not valid base64")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("the key is %d bytes, want %d (AES-256)", len(key), KeySize)
	}
	return key, nil
}

// ValidKID reports whether kid is a valid key id: 1 to 32 of [A-Za-z0-9_-].
func ValidKID(kid string) bool {
	if len(kid) == 0 || len(kid) > 32 {
		return false
	}
	for _, c := range []byte(kid) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// CurrentKID returns the kid that seals new values ("" for a nil ring).
func (r *Ring) CurrentKID() string {
	if r == nil {
		return ""
	}
	return r.current
}

// KIDs returns the kids of the ring, current first (nil for a nil ring).
func (r *Ring) KIDs() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.kids...)
}

// String describes the ring by its kids only, so that printing or logging
// a ring never shows key material.
func (r *Ring) String() string {
	if r == nil {
		return "secrets.Ring(off)"
	}
	return fmt.Sprintf("secrets.Ring(current=%s, kids=%v)", r.current, r.kids)
}

// GoString is String, for %#v.
func (r *Ring) GoString() string { return r.String() }
