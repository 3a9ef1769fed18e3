package workerapi

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// Idempotency of event posts (docs/worker-api.md, "Retries and the
// Idempotency-Key header").
const (
	// HeaderIdempotencyKey carries a post's idempotency key.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplayed is "true" on the answer to a post sent again under its
	// key: the first post's answer, nothing committed.
	HeaderReplayed = "Idempotent-Replayed"
	// MaxIdempotencyKey is the longest key, in bytes.
	MaxIdempotencyKey = 255
)

var errBadKey = fmt.Errorf("%s: 1 to %d visible ASCII characters (0x21 to 0x7E), in one header; a UUID is a good key", HeaderIdempotencyKey, MaxIdempotencyKey)

// idempotencyKey reads a request's Idempotency-Key: "" when it has none.
// A key is 1 to MaxIdempotencyKey visible ASCII characters (no spaces, no
// control characters), sent once.
func idempotencyKey(c *fiber.Ctx) (string, error) {
	vals := c.Request().Header.PeekAll(HeaderIdempotencyKey)
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", errBadKey
	}
	return parseKey(vals[0])
}

// parseKey checks a key's characters and length.
func parseKey(v []byte) (string, error) {
	if len(v) == 0 || len(v) > MaxIdempotencyKey {
		return "", errBadKey
	}
	for _, b := range v {
		if b < 0x21 || b > 0x7e {
			return "", errBadKey
		}
	}
	return string(v), nil
}
