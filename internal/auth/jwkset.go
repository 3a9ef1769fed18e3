package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	webkey "github.com/a2arelay/relay/internal/jwk"
)

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
	var j webkey.Key
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	pub, err := webkey.Public(j)
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
