package taskstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// commandStats sums INFO commandstats: the commands Redis ran (those a
// script runs included, EVALSHA itself excluded) and the µs it spent in
// scripts.
func commandStats(b *testing.B, rdb redis.UniversalClient) (calls, scriptMicros float64) {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || name == "info" {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok && name != "evalsha" && name != "eval" {
				n, _ := strconv.ParseFloat(v, 64)
				calls += n
			}
			if v, ok := strings.CutPrefix(kv, "usec="); ok && name == "evalsha" {
				scriptMicros, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return calls, scriptMicros
}

// BenchmarkWorkerPostCommit commits one event (delivered to one push
// config, lanes path) per op to tasks of 20 commits each, without and with
// an idempotency key (a worker post): the Redis commands and script time
// a key adds.
func BenchmarkWorkerPostCommit(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(map[bool]string{false: "no-key", true: "key"}[keyed], func(b *testing.B) {
			ctx := context.Background()
			rdb, prefix := redistest.New(b)
			s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 16, Config{})
			event := []byte(`{"kind":"artifact-update","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"chunk"}]}}`)
			answer := []byte(`{"v":1,"s":"working","x":1795000000000}`)
			const per = 20
			calls0, us0 := commandStats(b, rdb)
			b.ResetTimer()
			for i := range b.N {
				task := "task-" + strconv.Itoa(i/per)
				c := Commit{TaskID: task, Version: int64(i % per), Snapshot: []byte(`{"id":"x"}`), UpdatedAt: time.Now(),
					Events: [][]byte{event}, Deliver: []bool{true}}
				if i%per == 0 {
					c.PushConfigs = map[string][]byte{"c1": []byte(`{}`)}
				}
				var err error
				if keyed {
					_, _, err = s.CommitOnce(ctx, c, Once{Key: "8e03978e-40d5-43e8-bc93-" + strconv.Itoa(100000000000+i), Hash: hashOf("h"), Answer: answer})
				} else {
					_, err = s.Commit(ctx, c)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			calls, us := commandStats(b, rdb)
			b.ReportMetric((calls-calls0)/float64(b.N), "cmds/op")
			b.ReportMetric((us-us0)/float64(b.N), "redis-µs/op")
		})
	}
}

// BenchmarkDemoCommits commits the load tool's default workload, one task
// at a time (no shared round trips): tasks of 6 commits on the outbox path
// (the first stores one push config, the last finishes the task), each of
// one delivered event of about 400 bytes, snapshots of about 600. It
// reports the Redis commands and the µs Redis spends in scripts per commit.
func BenchmarkDemoCommits(b *testing.B) {
	ctx := context.Background()
	rdb, prefix := redistest.New(b)
	s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 16, Config{Outbox: true})
	event := []byte(`{"kind":"status-update","taskId":"8e03978e-40d5-43e8-bc93-1c2d3e4f5a6b","contextId":"0b6ef0e3-7a52-4a39-9d3c-2b5e8f6d1a90","status":{"state":"working","message":{"role":"agent","parts":[{"kind":"text","text":"step 3 of 4: working on it, this is a status message of moderate length"}],"messageId":"3f2a1c4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"},"timestamp":"2026-11-26T11:24:15.123Z"},"final":false}`)
	snap := []byte(`{"id":"8e03978e-40d5-43e8-bc93-1c2d3e4f5a6b","contextId":"0b6ef0e3-7a52-4a39-9d3c-2b5e8f6d1a90","status":{"state":"working","message":{"role":"agent","parts":[{"kind":"text","text":"step 3 of 4: working on it, this is a status message of moderate length"}],"messageId":"3f2a1c4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"},"timestamp":"2026-11-26T11:24:15.123Z"},"history":[{"role":"user","parts":[{"kind":"text","text":"do the demo"}],"messageId":"9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a"}],"kind":"task","metadata":{"demo":{"steps":4}}}`)
	config := []byte(`{"id":"ef260078-af3a-46f1-950f-6f583a963932","taskId":"8e03978e-40d5-43e8-bc93-1c2d3e4f5a6b","url":"http://127.0.0.1:34713/hook","token":"bench-token","dialect":"1.0"}`)
	const per = 6
	calls0, us0 := commandStats(b, rdb)
	cpu0 := redisCPU(b, rdb)
	b.ResetTimer()
	for i := range b.N {
		task := "8e03978e-40d5-43e8-bc93-" + strconv.Itoa(100000000000+i/per)
		c := Commit{TaskID: task, Version: int64(i % per), Snapshot: snap, PrevSnapshotLen: len(snap), UpdatedAt: time.Now(),
			Events: [][]byte{event}, Deliver: []bool{true}}
		switch i % per {
		case 0:
			c.PushConfigs = map[string][]byte{"ef260078-af3a-46f1-950f-6f583a963932": config}
			c.Fields = map[string]string{"created": strconv.FormatInt(time.Now().UnixMilli(), 10), "dialect": "1.0"}
			c.PrevSnapshotLen = 0
		case per - 1:
			c.ExpireAfter = time.Hour
		}
		if _, err := s.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	calls, us := commandStats(b, rdb)
	b.ReportMetric((calls-calls0)/float64(b.N), "cmds/op")
	b.ReportMetric((us-us0)/float64(b.N), "redis-µs/op")
	b.ReportMetric((redisCPU(b, rdb)-cpu0)/float64(b.N), "redis-cpu-µs/op")
}

// redisCPU is the CPU time Redis has used, in µs (INFO cpu: the server's
// user and system time, its network I/O included).
func redisCPU(b *testing.B, rdb redis.UniversalClient) float64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), f); ok {
				s, _ := strconv.ParseFloat(v, 64)
				total += s * 1e6
			}
		}
	}
	return total
}
