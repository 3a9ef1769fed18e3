package bench_test

import (
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/bench"
)

// The report names every command called at least 0.01 times per
// notification, beyond the eight most called, and sums the rarer ones, so
// that an operator sees where a notification's commands go.
func TestRedisReportNamesEveryFrequentCommand(t *testing.T) {
	t.Parallel()
	calls := map[string]int64{"evalsha": 1000, "xadd": 2000, "zadd": 2000, "hset": 1170, "set": 1000, "hmget": 1000,
		"incrby": 1000, "pexpire": 670, "xread": 400, "hget": 290, "ping": 3, "time": 2}
	out := bench.Result{Delivered: 1000, Redis: &bench.RedisStats{Calls: calls}}.String()
	want := "redis commands per notification: 10.54 (xadd 2.00, zadd 2.00, hset 1.17, evalsha 1.00, hmget 1.00, incrby 1.00, " +
		"set 1.00, pexpire 0.67, xread 0.40, hget 0.29, others 0.01)"
	if !strings.Contains(out, want) {
		t.Fatalf("report:\n%s\nwant the line %q", out, want)
	}
}
