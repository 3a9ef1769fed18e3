package auth

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/webhook"
)

// Relay's Standard Webhooks v1a keys are Keys made with
// KeyConfig.StandardWebhooks: ed25519 key pairs stored, sealed, rotated and
// refreshed like the JWT keys, under Redis keys of their own. They are
// published twice: as OKP/Ed25519 JWKs in the JWKS (ServeJWKSOf), and as
// "whpk_" keys, the Standard Webhooks format (ServeStandardKeys).
//
// They never sign a JWT: the content they sign, "<id>.<timestamp>.<body>",
// holds at least two dots, a JWS signing input exactly one, so no signature
// of one kind can pass for the other.

// SignEd25519 signs msg with every published ed25519 key, the current key
// first, then the others newest first: a receiver that trusts a key rotated
// out still finds its signature until the key's grace ends.
func (k *Keys) SignEd25519(msg []byte) [][]byte {
	keys := k.state.Load().ordered
	sigs := make([][]byte, 0, len(keys))
	for _, sk := range keys {
		if priv, ok := sk.private.(ed25519.PrivateKey); ok {
			sigs = append(sigs, ed25519.Sign(priv, msg))
		}
	}
	return sigs
}

// StandardKey is one published ed25519 key in the Standard Webhooks format.
type StandardKey struct {
	Kid       string `json:"kid"`
	PublicKey string `json:"publicKey"` // "whpk_" + base64 of the 32 bytes
	Current   bool   `json:"current"`   // the key relay signs with first
}

// StandardKeys lists the published ed25519 keys, current first.
func (k *Keys) StandardKeys() []StandardKey {
	st := k.state.Load()
	out := make([]StandardKey, 0, len(st.ordered))
	for _, sk := range st.ordered {
		if pub, ok := sk.public.(ed25519.PublicKey); ok {
			out = append(out, StandardKey{Kid: sk.kid, Current: sk == st.current,
				PublicKey: webhook.StandardPublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)})
		}
	}
	return out
}

// ServeStandardKeys is the fiber handler that lists StandardKeys as
// {"keys":[{"kid","publicKey","current"}]} (/.well-known/standard-webhooks.json).
func (k *Keys) ServeStandardKeys(c *fiber.Ctx) error {
	b, err := json.Marshal(struct {
		Keys []StandardKey `json:"keys"`
	}{k.StandardKeys()})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, JWKSCacheControl)
	return c.Send(b)
}
