package auth

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/webhook"
)

// TestStandardWebhooksKeysSignWithEveryPublishedKey: the Standard Webhooks
// keys are ed25519, apart from the JWT keys (same prefix, other Redis keys),
// shared by instances, and after a rotation sign with the new key and the
// old one until its grace ends, so a receiver that trusts the old whpk_
// keeps verifying meanwhile.
func TestStandardWebhooksKeysSignWithEveryPublishedKey(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	c := newClock()
	cfg := KeyConfig{Prefix: prefix + "relay", StandardWebhooks: true, Grace: time.Hour}
	jwtKeys := newKeys(t, rdb, KeyConfig{Prefix: cfg.Prefix}, c.now)
	a := newKeys(t, rdb, cfg, c.now)
	b := newKeys(t, rdb, cfg, c.now)
	jwtKID := jwtKeys.CurrentKID()
	if err := jwtKeys.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a.CurrentKID() != b.CurrentKID() || a.CurrentKID() == jwtKID || jwtKeys.CurrentKID() != jwtKID {
		t.Fatalf("kids: instance a %s, b %s, JWT %s then %s", a.CurrentKID(), b.CurrentKID(), jwtKID, jwtKeys.CurrentKID())
	}
	old := a.StandardKeys()
	if len(old) != 1 || !old[0].Current || !strings.HasPrefix(old[0].PublicKey, webhook.StandardPublicKeyPrefix) {
		t.Fatalf("keys %+v", old)
	}
	if err := a.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	keys := b.StandardKeys()
	if len(keys) != 2 || keys[1].PublicKey != old[0].PublicKey || !keys[0].Current || keys[1].Current {
		t.Fatalf("after rotation: %+v", keys)
	}
	msg := []byte("n-1.1700000000.{}")
	sigs := b.SignEd25519(msg)
	if len(sigs) != 2 || !ed25519.Verify(pub(t, keys[0].PublicKey), msg, sigs[0]) || !ed25519.Verify(pub(t, keys[1].PublicKey), msg, sigs[1]) {
		t.Fatalf("%d signatures do not verify under the published keys, current first", len(sigs))
	}
	c.advance(2 * time.Hour)
	if err := b.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(b.SignEd25519(msg)); n != 1 {
		t.Fatalf("%d signatures after the grace, want 1", n)
	}
	if _, err := NewKeys(t.Context(), rdb, KeyConfig{Prefix: cfg.Prefix, StandardWebhooks: true, Algorithm: ES256}, c.now); err == nil {
		t.Fatal("Standard Webhooks keys of another algorithm than EdDSA")
	}
}

func pub(t *testing.T, whpk string) ed25519.PublicKey {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whpk, webhook.StandardPublicKeyPrefix))
	if err != nil || len(b) != ed25519.PublicKeySize {
		t.Fatalf("public key %q", whpk)
	}
	return b
}
