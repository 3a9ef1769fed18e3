package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// An operator URL hears about a config disabled by 410 and about a
// notification that went to dead letters.
func TestOperatorAlerts(t *testing.T) {
	t.Parallel()
	ops := newSink(t)
	r := startRelay(t, func(c *config.Config) {
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		c.OperatorWebhookURL, c.OperatorWebhookToken = ops.url("/ops"), "ops-token"
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 20*time.Millisecond, 40*time.Millisecond, 2
	})
	hook := newSink(t)
	hook.answer = func(path string, _ int) (int, map[string]string, time.Duration) {
		if path == "/gone" {
			return 410, nil, 0
		}
		return 500, nil, 0
	}
	var gone, dead struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("gone", nil), "configuration": map[string]any{
		"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook.url("/gone")}}}, &gone)
	r.call("SendMessage", map[string]any{"message": v10Message("dead", map[string]any{"metadata": demo(map[string]any{"steps": 0})}), "configuration": map[string]any{
		"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook.url("/dead")}}}, &dead)
	hits := ops.waitHits(t, "/ops", 2, 15*time.Second)
	seen := map[string]string{}
	for _, h := range hits {
		var a struct{ Event, TaskID, Reason string }
		_ = json.Unmarshal(h.body, &a)
		seen[a.Event] = a.TaskID
		if h.header.Get("Authorization") != "Bearer ops-token" {
			t.Fatalf("alert without the operator token: %q", h.header.Get("Authorization"))
		}
	}
	if seen["config.disabled"] != gone.Task.ID || seen["delivery.dead"] != dead.Task.ID {
		t.Fatalf("alerts %v; want config.disabled for %s and delivery.dead for %s", seen, gone.Task.ID, dead.Task.ID)
	}
}
