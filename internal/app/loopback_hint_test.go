package app

import (
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// A relay without client authentication on loopback (the quickstart's
// default address) says how to listen on every interface; one that
// authenticates its clients has nothing to say.
func TestLoopbackHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mut  func(*config.Config)
		hint bool
	}{
		{"auth off on loopback", func(*config.Config) {}, true},
		{"auth on on loopback", func(c *config.Config) {
			c.Auth = config.AuthAuto
			c.Security.APIKeys = []string{"alice:" + auth.HashAPIKey(aliceKey)}
			c.Security.SecretKeys = []string{"k1:" + strings.Repeat("A", 43) + "="}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			cfg := testConfig(t)
			cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
			tt.mut(&cfg)
			logs, err := startLogged(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(logs.String(), "listens on loopback only") && strings.Contains(logs.String(), "RELAY_ADDR=:")
			if got != tt.hint {
				t.Errorf("hint logged: %v, want %v; log:\n%s", got, tt.hint, logs)
			}
		})
	}
}
