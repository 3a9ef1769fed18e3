package upstream

import (
	"strings"
	"testing"
)

// New checks what it is given, so that no caller has to remember
// Config.Validate: a missing dependency, a URL that is not an absolute
// http(s) one or a negative concurrency is an error naming it.
func TestABridgeIsBuiltWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	ok := Deps{Pull: &fakePull{}, Links: &memLinks{m: map[string]Link{}}, Log: testLog()}
	for _, tc := range []struct {
		name string
		d    Deps
		cfg  Config
		want string
	}{
		{"no pull", Deps{Links: ok.Links}, Config{URL: "https://up.example"}, "Pull and Links are required"},
		{"no links", Deps{Pull: ok.Pull}, Config{URL: "https://up.example"}, "Pull and Links are required"},
		{"no url", ok, Config{}, "url"},
		{"relative url", ok, Config{URL: "up.example/a2a"}, "url"},
		{"negative concurrency", ok, Config{URL: "https://up.example", Concurrency: -1}, "concurrency"},
	} {
		if _, err := New(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if b := mustBridge(ok, Config{URL: "https://up.example/"}); b.cfg.URL != "https://up.example" || b.cfg.Concurrency != 64 {
		t.Errorf("config %+v: want the URL without its trailing slash and the default concurrency", b.cfg)
	}
}
