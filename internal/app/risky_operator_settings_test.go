package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// syncBuffer is a log sink tests read while relay may still write to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLogged starts relay with cfg, logging into the returned buffer, and
// returns Start's error (a relay that started is stopped at cleanup).
func startLogged(t *testing.T, cfg config.Config) (*syncBuffer, error) {
	t.Helper()
	logs := &syncBuffer{}
	a, err := New(Deps{Log: slog.New(slog.NewTextHandler(logs, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		return logs, err
	}
	r := &relay{t: t, app: a, url: "http://" + a.Addr()}
	t.Cleanup(func() { r.stop() })
	return logs, nil
}

// An allowlist range wider than a private one, or an admin or worker token
// that is also a client's API key, stops relay at start; a wide range
// allowed on purpose starts with a warning.
func TestRiskyOperatorSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mut     func(*config.Config)
		wantErr []string // substrings of Start's error; none: it starts
		wantLog string   // substring of the log; "": no warning about the allowlist
	}{
		{name: "private ranges", mut: func(c *config.Config) {
			c.WebhookAllowCIDRs = []string{"127.0.0.0/8", "10.0.0.0/8", "fc00::/7"}
		}},
		{name: "the IPv4 internet", mut: func(c *config.Config) {
			c.WebhookAllowCIDRs = []string{"127.0.0.0/8", "0.0.0.0/0"}
		}, wantErr: []string{"0.0.0.0/0", "RELAY_WEBHOOK_ALLOW_WIDE_CIDRS"}},
		{name: "the IPv6 internet", mut: func(c *config.Config) {
			c.WebhookAllowCIDRs = []string{"::/0"}
		}, wantErr: []string{"::/0", "RELAY_WEBHOOK_ALLOW_WIDE_CIDRS"}},
		{name: "IPv4 through its mapped spelling", mut: func(c *config.Config) {
			c.WebhookAllowCIDRs = []string{"::ffff:0:0/96"}
		}, wantErr: []string{"::ffff:0.0.0.0/96", "RELAY_WEBHOOK_ALLOW_WIDE_CIDRS"}},
		{name: "wide on purpose", mut: func(c *config.Config) {
			c.WebhookAllowCIDRs = []string{"0.0.0.0/0", "::/0"}
			c.WebhookAllowWideCIDRs = true
		}, wantLog: `level=WARN msg="WEBHOOKS MAY TARGET`},
		{name: "admin token is a client key", mut: func(c *config.Config) {
			c.Security.AdminTokens = []string{adminTok, bobKey}
		}, wantErr: []string{"RELAY_ADMIN_TOKENS[1]", `client "bob"`}},
		{name: "worker token is a client key", mut: func(c *config.Config) {
			c.WorkerTokens = []string{aliceKey}
		}, wantErr: []string{"RELAY_WORKER_TOKENS[0]", `client "alice"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			cfg := testConfig(t)
			cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
			cfg.Auth = config.AuthAuto
			cfg.Security.APIKeys = []string{"alice:" + auth.HashAPIKey(aliceKey), "bob:" + auth.HashAPIKey(bobKey)}
			cfg.Security.AdminTokens = []string{adminTok}
			cfg.Security.SecretKeys = []string{"k1:" + strings.Repeat("A", 43) + "="}
			tt.mut(&cfg)
			logs, err := startLogged(t, cfg)
			switch {
			case len(tt.wantErr) == 0 && err != nil:
				t.Fatalf("Start: %v", err)
			case len(tt.wantErr) > 0 && err == nil:
				t.Fatalf("relay started; want an error naming %q", tt.wantErr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Start error %q does not name %q", err, s)
				}
			}
			if err != nil && strings.Contains(err.Error(), aliceKey) || err != nil && strings.Contains(err.Error(), bobKey) {
				t.Errorf("Start error %q quotes a key", err)
			}
			warned := strings.Contains(logs.String(), "WEBHOOKS MAY TARGET")
			if want := tt.wantLog != ""; warned != want || want && !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log (want %q):\n%s", tt.wantLog, logs)
			}
		})
	}
}
