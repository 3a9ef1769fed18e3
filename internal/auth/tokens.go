package auth

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Tokens is a set of static bearer tokens (worker tokens, admin tokens),
// kept as SHA-256 hashes and matched in constant time.
type Tokens struct{ sums [][32]byte }

// NewTokens returns the set of tokens.
func NewTokens(tokens []string) Tokens {
	t := Tokens{sums: make([][32]byte, len(tokens))}
	for i, tok := range tokens {
		t.sums[i] = sha256.Sum256([]byte(tok))
	}
	return t
}

// Empty reports whether no token is configured.
func (t Tokens) Empty() bool { return len(t.sums) == 0 }

// Contains reports whether tok is one of the set. Every configured token is
// compared, with no early exit, so timing tells nothing about a match.
func (t Tokens) Contains(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	found := 0
	for i := range t.sums {
		found |= subtle.ConstantTimeCompare(sum[:], t.sums[i][:])
	}
	return found == 1
}
