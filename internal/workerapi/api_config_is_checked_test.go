package workerapi

import (
	"strings"
	"testing"
	"time"
)

// The worker API is built whole or not at all: without a pull backend, or
// with a negative bound, New returns an error naming it; zero bounds take
// their defaults (256 waiting claims, a minute's wait).
func TestAPIConfigIsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		d    Deps
		cfg  Config
		want string
	}{
		{"no pull", Deps{}, Config{}, "Pull is required"},
		{"negative waiting", Deps{Pull: &fakePull{}}, Config{MaxWaiting: -1}, "MaxWaiting"},
		{"negative wait", Deps{Pull: &fakePull{}}, Config{MaxWait: -time.Second}, "MaxWait"},
	} {
		if _, err := New(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	a, err := New(Deps{Pull: &fakePull{}}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if cap(a.waiting) != 256 || a.maxWait != time.Minute || a.log == nil {
		t.Errorf("%d waiting, max wait %s: want the defaults and a logger", cap(a.waiting), a.maxWait)
	}
}
