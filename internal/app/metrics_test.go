package app

import (
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// /metrics moves as traffic flows: requests, commits, deliveries and their
// latency, the backlog gauges per partition.
func TestMetricsMoveWithTraffic(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.WebhookAllowCIDRs = []string{"127.0.0.0/8"} })
	hook := newSink(t)
	r.call("SendMessage", map[string]any{"message": v10Message("measure me", map[string]any{"metadata": demo(map[string]any{"steps": 2})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.url("/m")}}}, nil)
	hook.waitHits(t, "/m", 4, 10*time.Second)
	var body string
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, b := get(t, r.url+"/metrics")
		body = string(b)
		if strings.Contains(body, `relay_notifications_total{outcome="delivered"}`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`relay_a2a_requests_total{dialect="1.0",method="SendMessage",outcome="ok"} 1`,
		`relay_events_committed_total`,
		`relay_notifications_total{outcome="delivered"}`,
		`relay_delivery_commit_to_success_seconds_count`,
		`relay_delivery_attempt_seconds_bucket{class="none"`,
		`relay_delivery_queue_depth{partition="0",state="waiting"}`,
		`relay_delivery_oldest_pending_seconds{partition="15"}`,
		`relay_delivery_queue_depth_up 1`,
		`relay_streams_open 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
