package bench_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/bench"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// A short load run against a relay on real Redis loses nothing and
// measures every status update.
func TestRunLosesNothing(t *testing.T) {
	target, _ := startRelay(t)
	for _, mode := range []bench.Config{{}, {Stream: true}, {Closed: true}} {
		cfg := mode
		cfg.Target, cfg.Tasks, cfg.Concurrency, cfg.Steps = target, 40, 4, 2
		cfg.Delay, cfg.Drain, cfg.Window = time.Millisecond, 20*time.Second, 50*time.Millisecond
		res, err := bench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Expected != 160 || res.Delivered != 160 || res.Lost != 0 || res.Duplicates != 0 || res.WrongToken != 0 || res.P99 <= 0 || res.PerSecond <= 0 {
			t.Fatalf("mode %+v: result %+v", mode, res)
		}
		// The timeline holds every measured notification (each status
		// update: 3 of a task's 4 notifications) in some window.
		measured := 0
		for _, w := range res.Windows {
			measured += w.Measured
			if w.Measured > 0 && (w.P99 < w.P50 || w.Max < w.P99) {
				t.Fatalf("mode %+v: window %+v", mode, w)
			}
		}
		if measured != 120 {
			t.Fatalf("mode %+v: the timeline holds %d notifications, want 120: %+v", mode, measured, res.Windows)
		}
		t.Log(res)
	}
}

// A timeline window narrower than MinWindow is refused before anything runs.
func TestRunRefusesATinyWindow(t *testing.T) {
	for _, w := range []time.Duration{time.Nanosecond, time.Microsecond, -time.Second} {
		if _, err := bench.Run(context.Background(), bench.Config{Target: "http://127.0.0.1:1/", Window: w}); err == nil || !strings.Contains(err.Error(), "timeline window") {
			t.Errorf("Window %v: err %v, want a refusal", w, err)
		}
	}
}

// startRelay starts relay on the test's Redis (with the test's key
// prefix), stopped when the test ends, and returns its A2A endpoint and a
// client to that Redis.
func startRelay(t *testing.T) (string, redis.UniversalClient) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	cfg, err := config.Load(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.RedisURL, cfg.RedisPrefix = "127.0.0.1:0", redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.Auth, cfg.Security.RateLimit = "none", 0
	a, err := app.New(app.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown(context.Background()) })
	return "http://" + a.Addr() + "/", rdb
}
