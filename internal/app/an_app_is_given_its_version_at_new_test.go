package app

import (
	"io"
	"log/slog"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// The version relay reports is given with its dependencies, not set after
// New: "dev" when none is given; an App without a logger is refused.
func TestAnAppIsGivenItsVersionAtNew(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for give, want := range map[string]string{"1.2.3": "1.2.3", "": "dev"} {
		a, err := New(Deps{Log: log, Version: give}, config.Config{})
		if err != nil || a.version != want {
			t.Errorf("New with version %q: %v, version %q; want %q", give, err, a.version, want)
		}
	}
	if _, err := New(Deps{Version: "1.2.3"}, config.Config{}); err == nil {
		t.Error("New without a logger: want an error")
	}
}
