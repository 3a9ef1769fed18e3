package delivery

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkHealthCount is what counting one attempt's outcome costs a
// worker: 1000 push configs over 10 endpoints, one attempt each in turn.
func BenchmarkHealthCount(b *testing.B) {
	t := newHealthTally(&health.Store{})
	recs := make([]Attempt, 1000)
	for i := range recs {
		url := "https://x.test/" + strconv.Itoa(i%10)
		recs[i] = Attempt{Time: time.Unix(int64(i), 0), URL: url, endpoint: health.EndpointID("", url), Status: 500, ErrorClass: "http",
			TaskID: "task-" + strconv.Itoa(i), ConfigID: "c"}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t.count(outbox.Retry, recs[i%len(recs)])
	}
}

// BenchmarkHealthFlush is one flush of a second in which 1000 push
// configs of 10 endpoints each had an attempt, on a real Redis (16
// partitions), with the µs Redis spent in its scripts.
func BenchmarkHealthFlush(b *testing.B) {
	rdb, prefix := redistest.New(b)
	hs, err := health.New(rdb, layout.New(strings.TrimSuffix(prefix, ":"), 16), health.Config{})
	if err != nil {
		b.Fatal(err)
	}
	w := &Workers{health: newHealthTally(hs), now: time.Now}
	w.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	before := scriptMicros(ctx, b, rdb)
	for b.Loop() {
		for i := range 1000 {
			url := "https://x.test/" + strconv.Itoa(i%10)
			w.health.count(outbox.Delivered, Attempt{Time: time.Now(), URL: url, endpoint: health.EndpointID("", url),
				TaskID: "task-" + strconv.Itoa(i), ConfigID: "c"})
		}
		w.flushHealth(ctx)
	}
	b.StopTimer()
	b.ReportMetric(float64(scriptMicros(ctx, b, rdb)-before)/float64(b.N), "redis-µs/op")
}

// scriptMicros is the µs Redis spent running scripts so far (INFO
// commandstats).
func scriptMicros(ctx context.Context, b *testing.B, rdb redis.UniversalClient) int64 {
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, l := range strings.Split(stats, "\n") {
		if name, rest, ok := strings.Cut(l, ":"); ok && (name == "cmdstat_evalsha" || name == "cmdstat_eval") {
			_, usec, _ := strings.Cut(rest, "usec=")
			n, _ := strconv.ParseInt(strings.Split(usec, ",")[0], 10, 64)
			total += n
		}
	}
	return total
}
