package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/bench"
	"github.com/a2arelay/relay/internal/redistest"
)

// info is an INFO commandstats cpu memory answer of Redis 7, cut short.
const info = "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nused_memory_rss:5000000\r\n\r\n" +
	"# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.750500\r\nused_cpu_sys_children:0.000000\r\n\r\n" +
	"# Commandstats\r\ncmdstat_evalsha:calls=2100,usec=9000,usec_per_call=4.29,rejected_calls=0,failed_calls=3\r\n" +
	"cmdstat_client|setinfo:calls=4,usec=2,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_info:calls=7,usec=300,usec_per_call=42.86,rejected_calls=0,failed_calls=0\r\n"

// ParseRedisInfo reads each command's calls, the CPU (sys + user, not the
// children's) and used_memory, and refuses an answer that lacks them.
func TestParseRedisInfo(t *testing.T) {
	t.Parallel()
	s, err := bench.ParseRedisInfo(info)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Calls) != 3 || s.Calls["evalsha"] != 2100 || s.Calls["client|setinfo"] != 4 || s.Calls["info"] != 7 {
		t.Fatalf("calls %v", s.Calls)
	}
	if s.CPU != 2000500*time.Microsecond || s.UsedMemory != 1048576 {
		t.Fatalf("CPU %s, used memory %d", s.CPU, s.UsedMemory)
	}
	for _, tt := range []struct{ name, info, err string }{
		{"no memory", strings.Replace(info, "used_memory:", "x:", 1), "no used_memory"},
		{"no cpu", strings.Replace(info, "used_cpu_user:", "x:", 1), "no used_cpu_user"},
		{"bad cpu", strings.Replace(info, "used_cpu_sys:1.25", "used_cpu_sys:one", 1), "used_cpu_sys"},
		{"no calls", strings.Replace(info, "evalsha:calls=", "evalsha:cals=", 1), "cmdstat_evalsha"},
		{"bad calls", strings.Replace(info, "calls=2100", "calls=2x", 1), "cmdstat_evalsha"},
	} {
		if _, err := bench.ParseRedisInfo(tt.info); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want one naming %s", tt.name, err, tt.err)
		}
	}
}

// Sub keeps what changed between two readings, and Top orders commands by
// calls, then name.
func TestRedisStatsSubAndTop(t *testing.T) {
	t.Parallel()
	before := bench.RedisStats{Calls: map[string]int64{"get": 5, "set": 1}, CPU: time.Second, UsedMemory: 1000}
	after := bench.RedisStats{Calls: map[string]int64{"get": 5, "set": 4, "del": 3, "xadd": 9}, CPU: 1500 * time.Millisecond, UsedMemory: 900}
	d := after.Sub(before)
	if len(d.Calls) != 3 || d.Calls["set"] != 3 || d.Calls["del"] != 3 || d.Calls["xadd"] != 9 || d.TotalCalls() != 15 {
		t.Fatalf("calls %v", d.Calls)
	}
	if d.CPU != 500*time.Millisecond || d.UsedMemory != -100 {
		t.Fatalf("CPU %s, used memory %d", d.CPU, d.UsedMemory)
	}
	top := d.Top(2)
	if len(top) != 2 || top[0] != (bench.CommandCalls{Name: "xadd", Calls: 9}) || top[1] != (bench.CommandCalls{Name: "del", Calls: 3}) {
		t.Fatalf("top %v", top)
	}
}

// Against a real Redis, the difference of two readings holds at least the
// commands sent in between, the INFO of the first reading, and the memory
// of what was written.
func TestReadRedisStatsSeesTheCommandsSent(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	ctx := context.Background()
	before, err := bench.ReadRedisStats(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		rdb.Set(ctx, prefix+"k", i, 0)
		rdb.Get(ctx, prefix+"k")
	}
	if err := rdb.Set(ctx, prefix+"big", strings.Repeat("x", 4<<20), 0).Err(); err != nil {
		t.Fatal(err)
	}
	after, err := bench.ReadRedisStats(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.Calls["set"] < 51 || d.Calls["get"] < 50 || d.Calls["info"] < 1 || d.CPU <= 0 || d.UsedMemory < 2<<20 {
		t.Fatalf("delta %+v", d)
	}
}

// A load run against relay with its Redis reports Redis's calls (relay
// commits and delivers with scripts), CPU and memory per notification,
// without the INFO calls of the readings.
func TestRunReportsRedisPerNotification(t *testing.T) {
	target, rdb := startRelay(t)
	cfg := bench.Config{Target: target, Tasks: 20, Concurrency: 4, Steps: 2, Delay: time.Millisecond, Drain: 20 * time.Second, Redis: rdb}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Delivered != 80 || res.Redis == nil || res.Redis.CPU <= 0 || res.Redis.Calls["evalsha"]+res.Redis.Calls["eval"] < 80 {
		t.Fatalf("result %+v, redis %+v", res, res.Redis)
	}
	if _, ok := res.Redis.Calls["info"]; ok {
		t.Fatalf("the readings' INFO calls are counted: %v", res.Redis.Calls)
	}
	out := res.String()
	for _, line := range []string{"\nredis commands per notification: ", "\nredis CPU per notification: ", "\nredis memory per notification: "} {
		if !strings.Contains(out, line) {
			t.Errorf("no %q in:\n%s", line, out)
		}
	}
	t.Log(out)
}
