package app

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/webhook"
)

// newStandardSecret is a fresh v1 secret, "whsec_" + base64 of 32 bytes.
func newStandardSecret(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return webhook.StandardSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// sendWithStandard sends a v1.0 message whose inline push config points at
// url, with the webhook extension's standardWebhooks params when scheme is
// not empty, and returns the task id.
func sendWithStandard(t *testing.T, r *relay, url, scheme, secret string) string {
	cfg := map[string]any{"url": url}
	if scheme != "" {
		sw := map[string]any{"scheme": scheme}
		if secret != "" {
			sw["secret"] = secret
		}
		cfg["metadata"] = map[string]any{a2a.WebhookExtensionURI: map[string]any{"standardWebhooks": sw}}
	}
	var out struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("sign me", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": cfg}}, &out)
	return out.Task.ID
}

// relayStandardKeys reads relay's published whpk_ keys, current first.
func relayStandardKeys(t *testing.T, r *relay) []ed25519.PublicKey {
	t.Helper()
	status, _, body := get(t, r.url+"/.well-known/standard-webhooks.json")
	var list struct {
		Keys []struct {
			PublicKey string `json:"publicKey"`
			Current   bool   `json:"current"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil || len(list.Keys) == 0 || !list.Keys[0].Current {
		t.Fatalf("standard webhooks keys: %d %s", status, body)
	}
	var keys []ed25519.PublicKey
	for _, k := range list.Keys {
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(k.PublicKey, webhook.StandardPublicKeyPrefix))
		if err != nil || !strings.HasPrefix(k.PublicKey, webhook.StandardPublicKeyPrefix) || len(b) != ed25519.PublicKeySize {
			t.Fatalf("public key %q", k.PublicKey)
		}
		keys = append(keys, b)
	}
	return keys
}

// verifyV1a checks the v1a signatures of h with crypto/ed25519, as the
// Standard Webhooks spec defines them (the reference Go library has no
// v1a): some signature over "<id>.<timestamp>.<body>" verifies under key.
func verifyV1a(h http.Header, body []byte, key ed25519.PublicKey) error {
	content := h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)
	for _, entry := range strings.Fields(h.Get("webhook-signature")) {
		scheme, b64, _ := strings.Cut(entry, ",")
		sig, err := base64.StdEncoding.DecodeString(b64)
		if scheme == "v1a" && err == nil && ed25519.Verify(key, []byte(content), sig) {
			return nil
		}
	}
	return errors.New("no v1a signature verifies")
}

func TestStandardWebhooksV1VerifiesWithTheReferenceLibrary(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	secret := newStandardSecret(t)
	sendWithStandard(t, r, s.url("/v1"), "v1", secret)
	sendWithStandard(t, r, s.url("/plain"), "", "") // off by default
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, err := standardwebhooks.NewWebhook(newStandardSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range s.waitHits(t, "/v1", 5, 10*time.Second) {
		if err := wh.Verify(h.body, h.header); err != nil {
			t.Fatalf("the reference library refuses relay's v1 signature: %v (headers %v)", err, h.header)
		}
		if err := other.Verify(h.body, h.header); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Fatalf("a wrong secret verifies: %v", err)
		}
		if id := h.header.Get("webhook-id"); id == "" || id != h.header.Get(webhook.HeaderID) {
			t.Fatalf("webhook-id %q, notification id %q", id, h.header.Get(webhook.HeaderID))
		}
		if err := webhook.VerifyStandard(h.header, h.body, secret, 0, time.Now()); err != nil {
			t.Fatalf("webhook.VerifyStandard: %v", err)
		}
	}
	for _, h := range s.waitHits(t, "/plain", 5, 10*time.Second) {
		if h.header.Get("webhook-signature") != "" || h.header.Get("webhook-id") != "" {
			t.Fatalf("Standard Webhooks headers without asking: %v", h.header)
		}
	}
}

func TestStandardWebhooksV1aVerifiesWithRelaysPublishedKey(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, nil)
	sendWithStandard(t, r, s.url("/v1a"), "v1a", "")
	key := relayStandardKeys(t, r)[0]
	whpk := webhook.StandardPublicKeyPrefix + base64.StdEncoding.EncodeToString(key)
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	for _, h := range s.waitHits(t, "/v1a", 5, 10*time.Second) {
		if err := verifyV1a(h.header, h.body, key); err != nil {
			t.Fatalf("%v (headers %v)", err, h.header)
		}
		if verifyV1a(h.header, h.body, otherPub) == nil {
			t.Fatal("another key verifies")
		}
		if err := webhook.VerifyStandard(h.header, h.body, whpk, 0, time.Now()); err != nil {
			t.Fatalf("webhook.VerifyStandard: %v", err)
		}
		if h.header.Get("webhook-id") != h.header.Get(webhook.HeaderID) {
			t.Fatalf("webhook-id is not the notification id: %v", h.header)
		}
	}
	// The key is in the JWKS too, as an OKP/Ed25519 JWK.
	_, _, jwks := get(t, r.url+"/.well-known/jwks.json")
	if !strings.Contains(string(jwks), `"kty":"OKP","crv":"Ed25519","x":"`+base64.RawURLEncoding.EncodeToString(key)+`"`) {
		t.Fatalf("the v1a key is not in the JWKS: %s", jwks)
	}
}

func TestStandardWebhooksOperatorDefaultV1aSignsPlainConfigs(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	r := deliveringRelay(t, func(c *config.Config) { c.WebhookStandardSignature = "v1a" })
	sendWithStandard(t, r, s.url("/plain"), "", "")
	secret := newStandardSecret(t)
	sendWithStandard(t, r, s.url("/own-v1"), "v1", secret) // a config's own choice wins
	key := relayStandardKeys(t, r)[0]
	for _, h := range s.waitHits(t, "/plain", 5, 10*time.Second) {
		if err := verifyV1a(h.header, h.body, key); err != nil {
			t.Fatalf("operator default: %v (headers %v)", err, h.header)
		}
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range s.waitHits(t, "/own-v1", 5, 10*time.Second) {
		if err := wh.Verify(h.body, h.header); err != nil || strings.Contains(h.header.Get("webhook-signature"), "v1a,") {
			t.Fatalf("the config's v1 is not what was sent: %v %q", err, h.header.Get("webhook-signature"))
		}
	}
}

func TestStandardWebhooksRetryIsSignedAgainWithItsOwnTimestamp(t *testing.T) {
	t.Parallel()
	s := newSink(t)
	s.answer = func(_ string, n int) (int, map[string]string, time.Duration) {
		if n == 0 {
			return 500, nil, 0
		}
		return 200, nil, 0
	}
	// The retry comes 1.6 s to 2.4 s later (2 s, jitter 0.2): its timestamp,
	// in seconds, is a later one.
	r := deliveringRelay(t, func(c *config.Config) { c.RetryInitial, c.RetryMaxInterval = 2*time.Second, 2*time.Second })
	secret := newStandardSecret(t)
	sendWithStandard(t, r, s.url("/retry"), "v1", secret)
	hits := s.waitHits(t, "/retry", 2, 20*time.Second)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits[:2] {
		if err := wh.Verify(h.body, h.header); err != nil {
			t.Fatal(err)
		}
	}
	first, _ := strconv.ParseInt(hits[0].header.Get("webhook-timestamp"), 10, 64)
	second, _ := strconv.ParseInt(hits[1].header.Get("webhook-timestamp"), 10, 64)
	if hits[0].header.Get("webhook-id") != hits[1].header.Get("webhook-id") || second <= first {
		t.Fatalf("retry: id %q then %q, timestamp %d then %d", hits[0].header.Get("webhook-id"),
			hits[1].header.Get("webhook-id"), first, second)
	}
}
