package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// apiKeyHashPrefix starts the hash part of an API key entry.
const apiKeyHashPrefix = "sha256:"

// apiKeyNameRe is what an API key's name may be.
var apiKeyNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// apiKey is one configured API key: its name and the SHA-256 of the key.
type apiKey struct {
	name string
	sum  [sha256.Size]byte
}

// HashAPIKey returns "sha256:<64 lowercase hex digits>", the SHA-256 of
// key: what an operator puts after "<name>:" in ClientConfig.APIKeys.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return apiKeyHashPrefix + hex.EncodeToString(sum[:])
}

// parseAPIKeys parses "<name>:sha256:<64 lowercase hex>" entries. Hex
// digits must be lowercase, as HashAPIKey prints them (the config package
// refuses uppercase too), so one key has one spelling. Errors name the
// entry by index: an entry that does not parse may be a key pasted by
// mistake, so its text is never echoed.
func parseAPIKeys(specs []string) ([]apiKey, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	keys := make([]apiKey, 0, len(specs))
	byName := map[string]int{}
	bySum := map[[sha256.Size]byte]int{}
	for i, spec := range specs {
		k, err := parseAPIKey(spec)
		if err != nil {
			return nil, fmt.Errorf("APIKeys[%d]: %w", i, err)
		}
		if j, dup := byName[k.name]; dup {
			return nil, fmt.Errorf("APIKeys[%d]: name %q is also APIKeys[%d]'s", i, k.name, j)
		}
		if j, dup := bySum[k.sum]; dup {
			return nil, fmt.Errorf("APIKeys[%d] (%q): same key hash as APIKeys[%d] (%q): one key, one name", i, k.name, j, keys[j].name)
		}
		byName[k.name], bySum[k.sum] = i, i
		keys = append(keys, k)
	}
	return keys, nil
}

// parseAPIKey parses one entry. Its errors do not quote the entry.
func parseAPIKey(spec string) (apiKey, error) {
	const want = `want "<name>:sha256:<64 lowercase hex digits>", the key's hash as HashAPIKey (relay hash-key) prints it, never the key itself`
	name, hash, ok := strings.Cut(spec, ":")
	if !ok {
		return apiKey{}, fmt.Errorf("no ':' (%s)", want)
	}
	if !apiKeyNameRe.MatchString(name) {
		return apiKey{}, fmt.Errorf("the name must be 1 to 64 letters, digits, '.', '_' or '-' (%s)", want)
	}
	digits, ok := strings.CutPrefix(hash, apiKeyHashPrefix)
	if !ok {
		return apiKey{}, fmt.Errorf("the hash does not start with %q (%s)", apiKeyHashPrefix, want)
	}
	if len(digits) != 2*sha256.Size {
		return apiKey{}, fmt.Errorf("the hash has %d characters, not %d (%s)", len(digits), 2*sha256.Size, want)
	}
	for i := 0; i < len(digits); i++ {
		if b := digits[i]; (b < '0' || b > '9') && (b < 'a' || b > 'f') {
			return apiKey{}, fmt.Errorf("the hash is not lowercase hex (%s)", want)
		}
	}
	k := apiKey{name: name}
	if _, err := hex.Decode(k.sum[:], []byte(digits)); err != nil {
		return apiKey{}, fmt.Errorf("the hash is not hex (%s)", want)
	}
	return k, nil
}

// matchAPIKey returns the name of the configured key that presented is.
// It hashes presented and compares the hash with every configured one in
// constant time, with no early exit, so timing reveals neither which key
// matched nor how much of one did.
func matchAPIKey(keys []apiKey, presented string) (string, bool) {
	sum := sha256.Sum256([]byte(presented))
	found, idx := 0, 0
	for i := range keys {
		eq := subtle.ConstantTimeCompare(sum[:], keys[i].sum[:])
		idx = subtle.ConstantTimeSelect(eq, i, idx)
		found |= eq
	}
	if found != 1 {
		return "", false
	}
	return keys[idx].name, true
}
