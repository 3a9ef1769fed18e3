package layout

import (
	"strings"
	"testing"
)

// clusterTag is the part of key Redis Cluster hashes: the text between the
// first "{" and the first "}" after it, when not empty; else the whole key.
func clusterTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// A script given a prefix (not a key) names keys by appending ids it reads:
// whatever the id, even one holding braces, the key hashes to the slot of
// the keys the script is given in KEYS.
func TestAKeyAScriptNamesFromAPrefixSharesItsSlot(t *testing.T) {
	t.Parallel()
	k := New("pfx", 16)
	for _, task := range []string{"a", "x:y", "{p}", "}{", ""} {
		p := k.Partition(task)
		anchor := clusterTag(k.Task(task).Hash)
		for name, prefix := range map[string]string{
			"LanePrefix": k.LanePrefix(task), "Lanes": k.Lanes(p),
			"RecordPrefix": k.RecordPrefix(p), "LegacyAttemptsPrefix": k.LegacyAttemptsPrefix(p),
		} {
			for _, id := range []string{"c", "{q}", "}", "{"} {
				if got := clusterTag(prefix + id); got != anchor {
					t.Errorf("%s(%q) + %q hashes %q, not the task's %q", name, task, id, got, anchor)
				}
			}
		}
	}
	anchor := clusterTag(k.EndpointsDisabled())
	for _, id := range []string{"e1", "{q}", "}"} {
		if got := clusterTag(k.EndpointHealth("") + id); got != anchor || k.EndpointHealth("")+id != k.EndpointHealth(id) {
			t.Errorf(`EndpointHealth("") + %q hashes %q, not the disabled set's %q`, id, got, anchor)
		}
	}
}
