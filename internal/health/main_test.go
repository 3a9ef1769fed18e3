package health

import (
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newStore returns a Store over a test Redis, under a prefix of its own.
func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	rdb, prefix := redistest.New(t)
	s, err := New(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 4), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
