package config

import "testing"

// Without an address, relay listens on loopback while its clients need no
// credentials (the quickstart), and on every interface once they do; an
// address given anywhere is kept.
func TestDefaultListenAddress(t *testing.T) {
	t.Parallel()
	const key = "alice:sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name      string
		yaml      string
		env       map[string]string
		args      []string
		addr      string
		publicURL string
	}{
		{name: "quickstart", addr: "127.0.0.1:8080", publicURL: "http://127.0.0.1:8080"},
		{name: "auth none on purpose", env: map[string]string{"RELAY_AUTH": "none", "RELAY_REDIS_URL": "redis://127.0.0.1:6379/0"},
			addr: "127.0.0.1:8080"},
		{name: "empty in the file", yaml: "addr: \"\"\n", addr: "127.0.0.1:8080"},
		{name: "API keys", env: map[string]string{"RELAY_API_KEYS": key}, addr: ":8080", publicURL: "http://localhost:8080"},
		{name: "auth required", env: map[string]string{"RELAY_API_KEYS": key, "RELAY_AUTH": "required"}, addr: ":8080"},
		{name: "real Redis without credentials (refused at start)", env: map[string]string{"RELAY_REDIS_URL": "redis://127.0.0.1:6379/0"},
			addr: ":8080"},
		{name: "given in env", env: map[string]string{"RELAY_ADDR": ":8080"}, addr: ":8080", publicURL: "http://localhost:8080"},
		{name: "given as a flag", args: []string{"--addr", "0.0.0.0:9000"}, addr: "0.0.0.0:9000"},
		{name: "given in the file", yaml: "addr: \"[::]:7000\"\n", addr: "[::]:7000"},
		{name: "given with API keys", env: map[string]string{"RELAY_API_KEYS": key}, args: []string{"--addr", "127.0.0.1:9000"},
			addr: "127.0.0.1:9000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, tt.args, tt.env, tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if c.Addr != tt.addr || tt.publicURL != "" && c.PublicURL != tt.publicURL {
				t.Errorf("addr %q, public URL %q; want %q, %q", c.Addr, c.PublicURL, tt.addr, tt.publicURL)
			}
		})
	}
}
