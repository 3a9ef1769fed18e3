package delivery

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

// mustNew is New for tests.
func mustNew(t testing.TB, d Deps, cfg Config) *Workers {
	t.Helper()
	w, err := New(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// New refuses missing dependencies and out-of-range settings, naming them.
func TestNewNamesWhatIsWrong(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, 1, "new", http.NotFoundHandler())
	ok := fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{}))
	for _, tc := range []struct {
		deps Deps
		cfg  Config
		want string
	}{
		{fx.deps(nil), Config{}, "Deps.Queue"},
		{fx.deps(ok.Queue, func(d *Deps) { d.Tasks = nil }), Config{}, "Deps.Tasks"},
		{fx.deps(ok.Queue, func(d *Deps) { d.Leader = nil }), Config{}, "Deps.Leader"},
		{fx.deps(ok.Queue, func(d *Deps) { d.Signer = nil }), Config{}, "Deps.Signer"},
		{fx.deps(ok.Queue, func(d *Deps) { d.Dial = nil }), Config{}, "Deps.Dial"},
		{ok, Config{Timeout: -time.Second}, "Config.Timeout"},
		{ok, Config{Timeout: 11 * time.Second}, "Config.Timeout"}, // longer than the consumer's 10s attempt
		{ok, Config{Workers: -1}, "Config.Workers"},
		{ok, Config{Policy: Policy{Jitter: 2}}, "Config.Policy.Jitter"},
		{ok, Config{StandardSignature: "v1"}, "Config.StandardSignature"}, // v1 needs a secret per config
		{ok, Config{StandardSignature: StandardV1a}, "Deps.StandardKeys"},
	} {
		if _, err := New(tc.deps, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s wrong) = %v, want an error naming it", tc.want, err)
		}
	}
	if w, err := New(ok, Config{}); err != nil || w.log == nil || w.cfg.Workers != 256 || w.cfg.Timeout != 10*time.Second {
		t.Fatalf("New with the defaults = %+v, %v", w, err)
	}
}
