package ratelimit

import (
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// A Limiter and Strikes are built whole or not at all: without Redis, or
// with a limit that is not positive (which would refuse everything), New
// and NewStrikes return an error naming it.
func TestALimitThatIsNotPositiveIsRefused(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	k := layout.New(prefix+"l", 0)
	for _, tc := range []struct {
		d    Deps
		cfg  Config
		want string
	}{
		{Deps{Keys: k}, Config{Limit: 3}, "RDB"},
		{Deps{RDB: rdb, Keys: k}, Config{}, "Limit"},
		{Deps{RDB: rdb, Keys: k}, Config{Limit: -1}, "Limit"},
	} {
		if _, err := New(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): got error %v, want one naming %s", tc.cfg, err, tc.want)
		}
		if _, err := NewStrikes(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewStrikes(%+v): got error %v, want one naming %s", tc.cfg, err, tc.want)
		}
	}
}
