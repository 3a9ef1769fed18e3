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

// notOnTheDashboard are the relay_ series the Grafana dashboard leaves
// out, and why.
var notOnTheDashboard = map[string]string{
	"relay_delivery_queue_depth_up": "whether the backlog gauges could be read: for alerts, not a chart",
}

// Every relay_ series the Grafana dashboard queries exists, with the
// labels and label values its matchers name; and every relay_ series
// relay exports is on the dashboard (or in notOnTheDashboard).
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	m := New()
	m.WatchQueue(fakeDepths{}, func() int { return 2 }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.Request("SendMessage", "1.0", 0)
	m.Request("GetTask", "1.0", -32001)
	m.Committed(3)
	m.Attempt("delivered", "", "", 10*time.Millisecond, time.Second)
	m.Attempt("dead", "http", "retry budget spent: 12 attempts", 5*time.Millisecond, 0)
	m.Attempt("skip", endpointDisabled, "", 0, 0)
	m.Held(time.Millisecond)
	m.LimitWait("rate", time.Second)
	m.Replayed(3, 1, false)
	m.EndpointChange("disabled")
	m.EndpointsDisabled(1)
	m.redisErrors.WithLabelValues("get").Inc()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	labels := map[string]map[string]bool{} // series -> label=value seen
	for _, f := range fams {
		have[f.GetName()] = true
		labels[f.GetName()] = map[string]bool{}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				labels[f.GetName()][l.GetName()+"="+l.GetValue()] = true
			}
		}
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
	name := regexp.MustCompile(`(relay_[a-z0-9_]+)(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	queried := map[string]bool{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, sm := range name.FindAllStringSubmatch(tg.Expr, -1) {
				n := sm[1]
				for _, suf := range []string{"_bucket", "_count", "_sum"} {
					n = strings.TrimSuffix(n, suf)
				}
				queried[n] = true
				if !have[n] {
					t.Errorf("panel %q queries %s, which relay does not export", p.Title, n)
				}
				for _, lm := range matcher.FindAllStringSubmatch(sm[2], -1) {
					if !labels[n][lm[1]+"="+lm[2]] {
						t.Errorf("panel %q matches %s{%s=%q}, which relay never exports", p.Title, n, lm[1], lm[2])
					}
				}
			}
		}
	}
	for n := range have {
		if _, excused := notOnTheDashboard[n]; strings.HasPrefix(n, "relay_") && !queried[n] && !excused {
			t.Errorf("relay exports %s, and no dashboard panel queries it", n)
		}
	}
	if !have["relay_notifications_dead_total"] || !have["relay_delivery_queue_depth"] {
		t.Fatal("gather misses series")
	}
}
