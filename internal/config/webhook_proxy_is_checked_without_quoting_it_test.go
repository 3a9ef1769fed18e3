package config

import (
	"strings"
	"testing"
)

// TestWebhookProxyIsCheckedWithoutQuotingIt: RELAY_WEBHOOK_PROXY takes
// http://[user:password@]host:port only, and its errors never show the
// value (it may hold the proxy's password).
func TestWebhookProxyIsCheckedWithoutQuotingIt(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "RELAY_WEBHOOK_PROXY" {
				return v
			}
			return ""
		}
	}
	cfg, err := Load(nil, env("http://relay:pw@127.0.0.1:3128"))
	if err != nil || cfg.WebhookProxy != "http://relay:pw@127.0.0.1:3128" {
		t.Fatalf("a valid proxy: %v %q", err, cfg.WebhookProxy)
	}
	for _, bad := range []string{"https://relay:s3cret@proxy:3128", "http://relay:s3cret@proxy", "socks5://relay:s3cret@proxy:1080",
		"http://relay:s3cret@proxy:3128/path", "relay:s3cret@proxy:3128"} {
		_, err := Load(nil, env(bad))
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "RELAY_WEBHOOK_PROXY") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
