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

// orderKeys lists the keys of byKid: current first, then by created
// (newest first) and kid.
func orderKeys(current *signingKey, byKid map[string]*signingKey, created map[string]int64) []*signingKey {
	kids := make([]string, 0, len(byKid))
	for kid := range byKid {
		if kid != current.kid {
			kids = append(kids, kid)
		}
	}
	slices.SortFunc(kids, func(a, b string) int {
		return cmp.Or(cmp.Compare(created[b], created[a]), cmp.Compare(a, b))
	})
	keys := make([]*signingKey, 0, len(byKid))
	keys = append(keys, current)
	for _, kid := range kids {
		keys = append(keys, byKid[kid])
	}
	return keys
}

// buildJWKS encodes keys, in their order, as a JWK Set.
func buildJWKS(keys []*signingKey) ([]byte, error) {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("auth: encode JWKS: %w", err)
	}
	return b, nil
}

// ServeJWKSOf is the fiber handler of a JWKS endpoint that publishes the
// keys of several sets (relay's JWT keys, then its Standard Webhooks
// keys), each set in JWKS's order.
func ServeJWKSOf(sets ...*Keys) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Set(fiber.HeaderCacheControl, JWKSCacheControl)
		b := append(make([]byte, 0, 1024), `{"keys":[`...)
		n := 0
		for _, k := range sets {
			for _, sk := range k.state.Load().ordered {
				j, err := json.Marshal(sk.jwk)
				if err != nil {
					return fmt.Errorf("auth: encode JWKS: %w", err)
				}
				if n > 0 {
					b = append(b, ',')
				}
				b, n = append(b, j...), n+1
			}
		}
		return c.Send(append(b, "]}"...))
	}
}
