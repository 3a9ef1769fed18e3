package outbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// scriptMicros is the time Redis has spent in scripts (EVALSHA, inner
// commands included), in µs: the server-side cost of the queue's work.
func scriptMicros(b *testing.B, rdb redis.UniversalClient) float64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec="); ok {
					n, _ := strconv.ParseFloat(v, 64)
					return n
				}
			}
		}
	}
	return 0
}

// benchSnapshot is a task snapshot of the load tool's size (~0.5 KB).
var benchSnapshot = []byte(`{"id":"bdcb88bd-27b5-4997-a140-a6602f3864be","contextId":"93e9067c-6109-4b21-a4cf-af7df77e1b94",` +
	`"status":{"state":"working","timestamp":"2026-11-23T19:32:59.294Z"},"history":[{"messageId":"bench-45","role":"user",` +
	`"parts":[{"kind":"text","text":"load"}],"taskId":"bdcb88bd-27b5-4997-a140-a6602f3864be",` +
	`"contextId":"93e9067c-6109-4b21-a4cf-af7df77e1b94","metadata":{"demo":{"steps":4}}}]}`)

func benchStore(b *testing.B, outbox bool) (*fixture, redis.UniversalClient) {
	b.Helper()
	rdb, prefix := redistest.New(b)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 16, Outbox: outbox})
	if err := s.EnsureGroups(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, rdb
}

// BenchmarkCommit commits events delivered to one push config, one
// notification per op, on both delivery paths: "new" creates a task with
// its first event (and config); "six" commits the load tool's tasks, each
// created with its first event and then given five more, one per commit.
func BenchmarkCommit(b *testing.B) {
	for _, path := range []string{"lanes", "outbox"} {
		for _, per := range []int{1, 6} {
			name := map[int]string{1: "new", 6: "six"}[per]
			b.Run(path+"/"+name, func(b *testing.B) { benchCommit(b, path == "outbox", per) })
		}
	}
}

func benchCommit(b *testing.B, outbox bool, per int) {
	ctx := context.Background()
	s, rdb := benchStore(b, outbox)
	cfg := map[string][]byte{"c1": []byte(`{"id":"c1","url":"http://127.0.0.1/hook","dialect":"1.0"}`)}
	before := scriptMicros(b, rdb)
	i := 0
	for b.Loop() {
		c := taskstore.Commit{TaskID: "task-" + strconv.Itoa(i/per), Version: int64(i % per), Snapshot: benchSnapshot, UpdatedAt: time.Now(),
			Events: [][]byte{benchSnapshot}, Deliver: []bool{true}}
		if c.Version == 0 {
			c.PushConfigs = cfg
		}
		i++
		if _, err := s.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((scriptMicros(b, rdb)-before)/float64(b.N), "redis-µs/op")
}

// BenchmarkDeliver reads a lane token, begins it and finishes it as
// delivered at the first attempt: the queue's work for one notification
// after its commit.
func BenchmarkDeliver(b *testing.B) {
	ctx := context.Background()
	s, rdb := benchStore(b, false)
	cfg := map[string][]byte{"c1": []byte(`{"id":"c1","url":"http://127.0.0.1/hook","dialect":"1.0"}`)}
	n := b.N
	for i := range n {
		c := taskstore.Commit{TaskID: "task-" + strconv.Itoa(i), Snapshot: benchSnapshot, UpdatedAt: time.Now(), PushConfigs: cfg,
			Events: [][]byte{benchSnapshot}, Deliver: []bool{true}}
		if _, err := s.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	attempt := []byte(`{"time":"2026-11-23T19:32:59.340411538Z","notificationId":"10.82c3394f12de11dea5d662f196e30107",` +
		`"taskId":"00dd7b97-a3eb-45df-9367-249195a088f2","configId":"c1","url":"http://127.0.0.1:38809/hook",` +
		`"attempt":1,"status":204,"latencyMs":1.351,"outcome":"delivered"}`)
	var toks []Token
	p := 0
	b.ResetTimer()
	before := scriptMicros(b, rdb)
	for range n {
		for len(toks) == 0 {
			var err error
			if toks, err = s.ReadTokens(ctx, p, "w1", 64, time.Millisecond); err != nil {
				b.Fatal(err)
			}
			p = (p + 1) % 16
		}
		t := toks[0]
		toks = toks[1:]
		t.Fresh = true
		h, st, err := s.Begin(ctx, t, "w1", time.Minute)
		if err != nil || st != Go {
			b.Fatalf("Begin = %v, %v", st, err)
		}
		now := time.Now()
		f := Finish{Outcome: Delivered, Attempt: attempt, Now: now, First: now, Lease: time.Minute, Consumer: "w1"}
		if _, err := s.FinishToken(ctx, t, h, f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((scriptMicros(b, rdb)-before)/float64(n), "redis-µs/op")
}
