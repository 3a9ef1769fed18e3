package metrics

import "github.com/prometheus/client_golang/prometheus"

// endpointDisabled is the error class of a notification skipped because
// its endpoint is disabled (delivery.ClassEndpointDisabled).
const endpointDisabled = "endpoint_disabled"

// endpointMetrics are the series of webhook endpoint health.
type endpointMetrics struct {
	changes  *prometheus.CounterVec
	disabled prometheus.Gauge
}

func newEndpointMetrics(reg *prometheus.Registry) endpointMetrics {
	e := endpointMetrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "relay_endpoint_health_changes_total",
			Help: "Changes of webhook endpoint health this instance recorded, by event: failing (an endpoint's first failure, or its first after a success; alerted at most once an hour per endpoint), disabled."}, []string{"event"}),
		disabled: prometheus.NewGauge(prometheus.GaugeOpts{Name: "relay_endpoints_disabled",
			Help: "Webhook endpoints disabled (across instances), as this instance last read them."}),
	}
	// The event series exist from the start, so a rate over them works
	// before the first change.
	e.changes.WithLabelValues("failing")
	e.changes.WithLabelValues("disabled")
	reg.MustRegister(e.changes, e.disabled)
	return e
}

// EndpointChange counts a change of an endpoint's health (delivery's
// HealthObserver).
func (m *Metrics) EndpointChange(event string) {
	if m != nil {
		m.endpoints.changes.WithLabelValues(event).Inc()
	}
}

// EndpointsDisabled sets how many endpoints are disabled.
func (m *Metrics) EndpointsDisabled(n int) {
	if m != nil {
		m.endpoints.disabled.Set(float64(n))
	}
}
