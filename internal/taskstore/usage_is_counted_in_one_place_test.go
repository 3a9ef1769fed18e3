package taskstore

import (
	"strings"
	"testing"
)

// Usage has one Lua owner, usage.lua's countUsage: the scripts that store
// bytes (a commit, a push config) call it and never touch a usage counter
// themselves, so the counting rule (a task's first write in a new bucket
// counts its bytes again) cannot drift between them. The counting itself
// is tested through both scripts in usage_counts_bytes_while_they_live_test.go.
func TestUsageIsCountedInOnePlace(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{"commit.lua": commitLua, "pushset.lua": pushSetLua} {
		if strings.Contains(body, "redis.call('INCRBY'") {
			t.Errorf("%s adds to a counter itself; usage is counted by usage.lua's countUsage", name)
		}
		if !strings.Contains(body, "countUsage(") {
			t.Errorf("%s does not count usage through countUsage", name)
		}
	}
	if !strings.Contains(usageLua, "local function countUsage(") {
		t.Fatal("usage.lua does not define countUsage")
	}
}
