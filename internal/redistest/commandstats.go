package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandCalls is rdb's INFO commandstats as calls per command name
// ("zrem", "evalsha", "client|setinfo"): the commands scripts run are
// counted too. It reads the whole server, so a test that counts starts a
// Redis of its own (Start).
func CommandCalls(t testing.TB, rdb redis.UniversalClient) map[string]int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.Atoi(calls)
	}
	return out
}
