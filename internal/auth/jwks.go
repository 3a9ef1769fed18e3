package auth

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"
)

// JWKSCacheControl is the Cache-Control of ServeJWKS. Receivers that meet an
// unknown kid should fetch the JWKS again rather than wait for it to expire:
// a rotation starts signing with the new key at once.
const JWKSCacheControl = "public, max-age=300"

// JWKS returns the published keys as an RFC 7517 JWK Set,
// {"keys":[...]}: the current key first, then the others newest first.
// The slice is shared; do not modify it.
func (k *Keys) JWKS() []byte { return k.state.Load().jwks }

// ServeJWKS is the fiber handler of the JWKS endpoint
// (/.well-known/jwks.json).
func (k *Keys) ServeJWKS(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, JWKSCacheControl)
	return c.Send(k.JWKS())
}

// buildJWKS encodes the keys of byKid, current first, then by created
// (newest first) and kid.
func buildJWKS(current *signingKey, byKid map[string]*signingKey, created map[string]int64) ([]byte, error) {
	kids := make([]string, 0, len(byKid))
	for kid := range byKid {
		if kid != current.kid {
			kids = append(kids, kid)
		}
	}
	slices.SortFunc(kids, func(a, b string) int {
		return cmp.Or(cmp.Compare(created[b], created[a]), cmp.Compare(a, b))
	})
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(byKid))}
	set.Keys = append(set.Keys, current.jwk)
	for _, kid := range kids {
		set.Keys = append(set.Keys, byKid[kid].jwk)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("auth: encode JWKS: %w", err)
	}
	return b, nil
}
