package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com): besides its JWT,
// relay signs a notification this way when its push config asks (relay's
// webhook extension, docs/webhook-extension.md) or the operator makes it
// the default (RELAY_WEBHOOK_STANDARD_SIGNATURE). Receivers can then verify
// with their language's Standard Webhooks library (v1), or with ed25519 and
// relay's published keys (v1a); docs/receivers.md shows both.

// The Standard Webhooks headers.
const (
	// HeaderWebhookID is the notification id (= A2A-Notification-Id), the
	// same on every retry.
	HeaderWebhookID = "webhook-id"
	// HeaderWebhookTimestamp is the attempt's time, unix seconds: each
	// retry is signed again with its own.
	HeaderWebhookTimestamp = "webhook-timestamp"
	// HeaderWebhookSignature is space-separated "<scheme>,<base64 signature>".
	HeaderWebhookSignature = "webhook-signature"
)

// The Standard Webhooks signature schemes and key formats.
const (
	// StandardV1 is HMAC-SHA256 under a push config's own secret.
	StandardV1 = "v1"
	// StandardV1a is ed25519 under relay's published keys: relay signs with
	// each key it publishes (the current one first), so a receiver that
	// still trusts a key rotated out keeps verifying during its grace.
	StandardV1a = "v1a"
	// StandardSecretPrefix starts a v1 secret: "whsec_" + base64 bytes.
	StandardSecretPrefix = "whsec_"
	// StandardPublicKeyPrefix starts a v1a public key: "whpk_" + base64 of
	// its 32 bytes. relay lists its own at /.well-known/standard-webhooks.json.
	StandardPublicKeyPrefix = "whpk_"
)

// DefaultStandardTolerance is how far webhook-timestamp may be from now
// for VerifyStandard (the libraries' usual 5 minutes).
const DefaultStandardTolerance = 5 * time.Minute

// The errors of VerifyStandard.
var (
	// ErrStandardHeaders: a Standard Webhooks header is missing or malformed.
	ErrStandardHeaders = errors.New("webhook: missing or malformed Standard Webhooks headers")
	// ErrStandardKey: the key given is neither whsec_ nor whpk_ base64.
	ErrStandardKey = errors.New("webhook: not a Standard Webhooks key")
	// ErrStandardTimestamp: webhook-timestamp is outside the tolerance.
	ErrStandardTimestamp = errors.New("webhook: Standard Webhooks timestamp out of tolerance")
	// ErrStandardSignature: no signature of the key's scheme verifies.
	ErrStandardSignature = errors.New("webhook: no matching Standard Webhooks signature")
)

// AppendStandardContent appends what a Standard Webhooks signature signs:
// "<id>.<timestamp>.<body>".
func AppendStandardContent(dst []byte, id string, timestamp int64, body []byte) []byte {
	dst = append(dst, id...)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, timestamp, 10)
	dst = append(dst, '.')
	return append(dst, body...)
}

// VerifyStandard checks a notification's Standard Webhooks headers against
// body with key: a "whsec_" secret (v1) or a "whpk_" public key (v1a). The
// timestamp must be within tolerance of now (DefaultStandardTolerance if
// tolerance <= 0). Like VerifyRequest, it does not dedupe: use webhook-id.
func VerifyStandard(h http.Header, body []byte, key string, tolerance time.Duration, now time.Time) error {
	id, sigs, ts := h.Get(HeaderWebhookID), h.Get(HeaderWebhookSignature), h.Get(HeaderWebhookTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return ErrStandardHeaders
	}
	if tolerance <= 0 {
		tolerance = DefaultStandardTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrStandardTimestamp
	}
	content := AppendStandardContent(nil, id, sec, body)
	var match func(sig []byte) bool
	scheme := StandardV1
	if b64, ok := strings.CutPrefix(key, StandardPublicKeyPrefix); ok {
		pub, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return ErrStandardKey
		}
		scheme = StandardV1a
		match = func(sig []byte) bool { return ed25519.Verify(pub, content, sig) }
	} else if b64, ok := strings.CutPrefix(key, StandardSecretPrefix); ok {
		secret, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(secret) == 0 {
			return ErrStandardKey
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write(content)
		want := mac.Sum(nil)
		match = func(sig []byte) bool { return hmac.Equal(sig, want) }
	} else {
		return ErrStandardKey
	}
	for _, entry := range strings.Fields(sigs) {
		name, b64, ok := strings.Cut(entry, ",")
		if !ok || name != scheme {
			continue
		}
		if sig, err := base64.StdEncoding.DecodeString(b64); err == nil && match(sig) {
			return nil
		}
	}
	return ErrStandardSignature
}
