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
