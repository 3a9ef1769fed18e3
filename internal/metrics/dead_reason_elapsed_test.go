package metrics

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func deadCount(t *testing.T, m *Metrics, reason string) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.dead.WithLabelValues(reason).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

// a notification sent to dead letters because the retry policy's
// time budget ran out (delivery.Policy.decide: "retry budget spent: 24h0m0s
// elapsed") must be counted under reason="elapsed"; deadReason checks the
// "retry budget" prefix first, which both policy reasons share, so the
// elapsed label never appears and every time-budget death counts as
// "attempts".
func TestDeadReasonElapsed(t *testing.T) {
	m := New()
	m.Attempt("dead", "http", "retry budget spent: 24h0m0s elapsed", time.Millisecond, 0)
	if got := deadCount(t, m, "elapsed"); got != 1 {
		t.Errorf(`relay_notifications_dead_total{reason="elapsed"} = %v, want 1 (attempts = %v)`, got, deadCount(t, m, "attempts"))
	}
}
