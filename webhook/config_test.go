package webhook_test

import (
	"testing"
	"time"

	"github.com/a2arelay/relay/webhook"
)

func TestNewVerifierConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]webhook.Config{
		"no issuer":           {Audience: testHook},
		"no audience":         {Issuer: testIssuer},
		"relative issuer":     {Issuer: "relay", Audience: testHook},
		"http JWKS":           {Issuer: testIssuer, Audience: testHook, JWKSURL: "http://relay.example.test/.well-known/jwks.json"},
		"short replay window": {Issuer: testIssuer, Audience: testHook, ReplayWindow: time.Minute},
	} {
		if _, err := webhook.NewVerifier(cfg); err == nil {
			t.Errorf("%s: NewVerifier accepted %+v", name, cfg)
		}
	}
	for name, cfg := range map[string]webhook.Config{
		"https":             {Issuer: testIssuer, Audience: testHook},
		"loopback http":     {Issuer: "http://localhost:8080", Audience: testHook},
		"insecure allowed":  {Issuer: "http://relay:8080", Audience: testHook, AllowInsecureJWKS: true},
		"long replay":       {Issuer: testIssuer, Audience: testHook, ReplayWindow: 24 * time.Hour},
		"audience function": {Issuer: testIssuer, AudienceFunc: func(string) bool { return true }},
	} {
		if _, err := webhook.NewVerifier(cfg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestStatusCode(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]int{nil: 200, webhook.ErrReplayed: 200, webhook.ErrBodyTooLarge: 413,
		webhook.ErrBody: 400, webhook.ErrKeysUnavailable: 503, webhook.ErrBadSignature: 401, webhook.ErrToken: 401} {
		if got := webhook.StatusCode(err); got != want {
			t.Errorf("StatusCode(%v) = %d, want %d", err, got, want)
		}
	}
}
