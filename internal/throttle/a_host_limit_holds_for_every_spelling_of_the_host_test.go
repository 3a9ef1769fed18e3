package throttle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// The operator's limit per host (host:port) holds for every spelling of
// one host and port a client may register: letter case, a trailing dot, the
// scheme's default port written out, an IP literal in another form. A
// client cannot multiply the host's cap by writing its URLs differently.
func TestAHostLimitHoldsForEverySpellingOfTheHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	k := layout.New(strings.TrimSuffix(prefix, ":"), 4)
	clock := &fakeClock{t: time.UnixMilli(1_700_000_000_000)}
	th, err := New(rdb, k, Config{Lease: 5 * time.Second, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	capped := Limits{HostMaxConcurrent: 1}
	for _, group := range [][]string{
		{"https://hooks.example.test/a", "https://HOOKS.Example.test/b", "https://hooks.example.test./c", "https://hooks.example.test:443/d", "https://hooks.example.test:0443/e"},
		{"http://hooks.example.test/a", "http://hooks.example.test:80/b"},
		{"https://[2001:db8::1]/a", "https://[2001:DB8:0:0::1]:443/b", "https://[2001:0db8::0001]/c"},
		{"https://192.0.2.1/a", "https://192.0.2.1.:443/b", "https://3221225985/c", "https://0xc0.0.2.1/d", "https://[::ffff:192.0.2.1]/e"},
	} {
		if _, w, err := th.Acquire(ctx, group[0], capped); err != nil || w != nil {
			t.Fatalf("%s: first in flight: wait %+v, err %v", group[0], w, err)
		}
		for _, u := range group[1:] {
			if _, w, err := th.Acquire(ctx, u, capped); err != nil || w == nil {
				t.Errorf("%s starts while %s holds the host's only slot (host %q vs %q)", u, group[0], HostOf(u), HostOf(group[0]))
			}
		}
	}
	// Another port is another host.
	if _, w, err := th.Acquire(ctx, "https://hooks.example.test:8443/a", capped); err != nil || w != nil {
		t.Fatalf("another port is held: wait %+v, err %v", w, err)
	}
}
