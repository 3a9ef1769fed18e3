package layout

import (
	"strings"
	"testing"
)

// The limit keys of a webhook URL and of its host share one hash tag (one
// script checks them together on Redis Cluster), whatever the URL holds;
// URLs of one host have keys of their own, and hosts do not share theirs.
func TestAnEndpointsLimitKeysShareItsHostsSlot(t *testing.T) {
	t.Parallel()
	k := New("pfx", 16)
	tagOf := func(key string) string {
		open, end := strings.Index(key, "{"), strings.Index(key, "}")
		if open < 0 || end < open {
			t.Fatalf("key %q has no hash tag", key)
		}
		return key[open : end+1]
	}
	a := k.Endpoint("h.test:443", "https://h.test/a?x={y}")
	b := k.Endpoint("h.test:443", "https://h.test/b")
	other := k.Endpoint("other.test", "https://other.test/a")
	for _, key := range []string{a.URLRate, a.URLFlight, a.HostRate, a.HostFlight, b.URLRate, b.URLFlight} {
		if tagOf(key) != tagOf(a.HostRate) {
			t.Errorf("key %q is not in its host's slot %s", key, tagOf(a.HostRate))
		}
	}
	if a.URLRate == b.URLRate || a.URLFlight == b.URLFlight || a.HostRate != b.HostRate || a.HostFlight != b.HostFlight {
		t.Errorf("two URLs of a host: %+v and %+v", a, b)
	}
	if tagOf(other.HostRate) == tagOf(a.HostRate) || other.HostFlight == a.HostFlight {
		t.Errorf("two hosts share keys: %+v and %+v", a, other)
	}
}
