package metrics

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/outbox"
)

type fakeDepths struct{}

func (fakeDepths) Depths(context.Context) ([]outbox.Depth, error) {
	return []outbox.Depth{{Waiting: 3, InFlight: 1, OldestPending: 2 * time.Second}}, nil
}

// Every relay_ series the Grafana dashboard queries exists.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	m := New()
	m.WatchQueue(fakeDepths{}, func() int { return 2 }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.Request("SendMessage", "1.0", 0)
	m.Request("GetTask", "1.0", -32001)
	m.Committed(3)
	m.Attempt("delivered", "", "", 10*time.Millisecond, time.Second)
	m.Attempt("dead", "http", "retry budget spent: 12 attempts", 5*time.Millisecond, 0)
	m.Held(time.Millisecond)
	m.redisErrors.WithLabelValues("get").Inc()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range fams {
		have[f.GetName()] = true
	}
	raw, err := os.ReadFile("../../configs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`relay_[a-z0-9_]+`)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				for _, suf := range []string{"_bucket", "_count", "_sum"} {
					n = strings.TrimSuffix(n, suf)
				}
				if !have[n] {
					t.Errorf("panel %q queries %s, which relay does not export", p.Title, n)
				}
			}
		}
	}
	if !have["relay_notifications_dead_total"] || !have["relay_delivery_queue_depth"] {
		t.Fatal("gather misses series")
	}
}
