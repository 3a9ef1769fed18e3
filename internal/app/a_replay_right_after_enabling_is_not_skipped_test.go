package app

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// The documented way back for a disabled endpoint is "enable it, then
// replay". Run as one script (enable, and at once replay), every replayed
// notification is POSTed: none is skipped again by a relay that had not
// yet read that the endpoint was enabled (each reads the disabled set
// about once a second).
func TestAReplayRightAfterEnablingIsNotSkipped(t *testing.T) {
	eachPath(t, testAReplayRightAfterEnablingIsNotSkipped)
}

func testAReplayRightAfterEnablingIsNotSkipped(t *testing.T, path string) {
	t.Parallel()
	ops := newSink(t)
	hook := newSink(t)
	var healthy atomic.Bool
	hook.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r := deliveringRelayOn(t, path, func(c *config.Config) {
		c.OperatorWebhookURL = ops.url("/ops")
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 20*time.Millisecond, 40*time.Millisecond, 2
		c.WebhookDisableAfterFailures, c.WebhookDisableAfter = 3, 0
	})
	since := time.Now().Add(-time.Second)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("first", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"id": "h", "url": hook.url("/h")}}}, &res)
	id := waitAlerts(t, ops, "endpoint.disabled")["endpoint.disabled"].EndpointID
	waitMetric(t, r, "relay_endpoints_disabled 1")

	healthy.Store(true)
	if status, body := postJSON(t, r.url+"/v1/endpoints/"+id+"/enable"); status != http.StatusOK {
		t.Fatalf("enable: %d %s", status, body)
	}
	code, out := replay(t, r, map[string]any{"taskId": res.Task.ID, "since": rfc3339(since)})
	if code != http.StatusAccepted || out.Queued == 0 {
		t.Fatalf("replay: %d %+v", code, out)
	}
	delivered := func() map[string]bool {
		ids := map[string]bool{}
		for _, h := range hook.hitsOf("/h") {
			if h.status == 200 && strings.Contains(string(h.body), res.Task.ID) {
				ids[h.header.Get("A2A-Notification-Id")] = true
			}
		}
		return ids
	}
	for deadline := time.Now().Add(15 * time.Second); len(delivered()) < out.Queued; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d notifications replayed right after enabling were POSTed; the others were skipped: %+v",
				len(delivered()), out.Queued, listDeliveries(t, r, "task="+res.Task.ID))
		}
	}
}
