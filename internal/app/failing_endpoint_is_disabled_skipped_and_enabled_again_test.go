package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// A webhook endpoint that keeps failing is disabled: the operator hears
// that it started failing, that it was disabled and that retries were
// exhausted; later notifications to it are skipped (logged with class
// endpoint_disabled, not POSTed); /v1/endpoints shows it with its last
// error; enabled again through the API, it gets new notifications.
func TestFailingEndpointIsDisabledSkippedAndEnabledAgain(t *testing.T) {
	eachPath(t, testFailingEndpointIsDisabledSkippedAndEnabledAgain)
}

func testFailingEndpointIsDisabledSkippedAndEnabledAgain(t *testing.T, path string) {
	t.Parallel()
	ops, hook, healthy, r := failingHookRelay(t, path)
	send := func(text string) string {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message(text, map[string]any{"metadata": demo(map[string]any{"steps": 0})}),
			"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"id": "h", "url": hook.url("/h")}}}, &res)
		return res.Task.ID
	}
	send("first")
	events := waitAlerts(t, ops, "endpoint.failing", "endpoint.disabled", "delivery.dead")
	if events["endpoint.disabled"].EndpointID == "" || !strings.Contains(events["endpoint.disabled"].Reason, "consecutive") {
		t.Fatalf("disabled alert %+v", events["endpoint.disabled"])
	}
	id := events["endpoint.disabled"].EndpointID

	eps := listEndpoints(t, r)
	if len(eps) != 1 || eps[0].ID != id || eps[0].State != "disabled" || eps[0].LastError == "" || eps[0].SuccessRate == nil ||
		*eps[0].SuccessRate != 0 || eps[0].ConsecutiveFailures < 3 || eps[0].URL != hook.url("/h") {
		t.Fatalf("endpoints %+v", eps)
	}

	// A task sent now is not POSTed: its notifications are skipped.
	skipped := send("skipped")
	var recs []struct {
		ID, TaskID, ConfigID, Status string
		Attempts                     int
	}
	for deadline := time.Now().Add(15 * time.Second); ; {
		recs = listDeliveries(t, r, "task="+skipped)
		if len(recs) > 0 && allStatus(recs, "dropped") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(recs) == 0 || !allStatus(recs, "dropped") {
		t.Fatalf("deliveries of the task sent while disabled: %+v, want all dropped", recs)
	}
	var rec struct {
		AttemptLog []struct{ ErrorClass, Outcome string }
	}
	if status, _, body := get(t, r.url+"/v1/deliveries/"+recs[0].ID); status != 200 || json.Unmarshal(body, &rec) != nil ||
		len(rec.AttemptLog) != 1 || rec.AttemptLog[0].ErrorClass != "endpoint_disabled" || rec.AttemptLog[0].Outcome != "skip" {
		t.Fatalf("skipped delivery: %d %s", status, body)
	}
	for _, h := range hook.hitsOf("/h") {
		if strings.Contains(string(h.body), skipped) {
			t.Fatalf("a notification of the task sent while disabled was POSTed: %s", h.body)
		}
	}

	waitMetric(t, r, "relay_endpoints_disabled 1")
	healthy.Store(true)
	if status, body := postJSON(t, r.url+"/v1/endpoints/"+id+"/enable"); status != http.StatusOK {
		t.Fatalf("enable: %d %s", status, body)
	}
	if status, _ := postJSON(t, r.url+"/v1/endpoints/nope/enable"); status != http.StatusNotFound {
		t.Fatalf("enable of an unknown endpoint: %d", status)
	}
	waitMetric(t, r, "relay_endpoints_disabled 0")
	again := send("again")
	for deadline := time.Now().Add(15 * time.Second); !postedOK(hook, "/h", again); {
		if time.Now().After(deadline) {
			t.Fatal("no notification of the task sent after enabling reached the endpoint")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitMetric(t, r, `relay_endpoint_health_changes_total{event="disabled"} 1`)
	waitMetric(t, r, `relay_notifications_total{outcome="skipped_disabled"}`)
}

// failingHookRelay is a relay on delivery path path that disables an
// endpoint after 3 failed attempts and alerts ops, and a webhook sink, hook,
// that answers 500 until healthy is set.
func failingHookRelay(t *testing.T, path string) (ops, hook *sink, healthy *atomic.Bool, r *relay) {
	t.Helper()
	ops, hook, healthy = newSink(t), newSink(t), new(atomic.Bool)
	hook.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r = deliveringRelayOn(t, path, func(c *config.Config) {
		c.OperatorWebhookURL = ops.url("/ops")
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 20*time.Millisecond, 40*time.Millisecond, 2
		c.WebhookDisableAfterFailures, c.WebhookDisableAfter = 3, 0
	})
	return ops, hook, healthy, r
}

type alert struct{ Event, EndpointID, Reason string }

// waitAlerts waits until ops got an alert of each event, and returns the
// first of each.
func waitAlerts(t *testing.T, ops *sink, want ...string) map[string]alert {
	t.Helper()
	seen := map[string]alert{}
	for deadline := time.Now().Add(20 * time.Second); ; {
		for _, h := range ops.hitsOf("/ops") {
			var a alert
			if json.Unmarshal(h.body, &a) == nil && seen[a.Event].Event == "" {
				seen[a.Event] = a
			}
		}
		all := true
		for _, e := range want {
			all = all && seen[e].Event != ""
		}
		if all {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts %v, want %v", seen, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type endpointRow struct {
	ID, URL, State, LastError string
	SuccessRate               *float64
	ConsecutiveFailures       int
}

func listEndpoints(t *testing.T, r *relay) []endpointRow {
	t.Helper()
	status, _, body := get(t, r.url+"/v1/endpoints")
	var out struct{ Endpoints []endpointRow }
	if status != 200 || json.Unmarshal(body, &out) != nil {
		t.Fatalf("/v1/endpoints: %d %s", status, body)
	}
	return out.Endpoints
}

func allStatus(recs []struct {
	ID, TaskID, ConfigID, Status string
	Attempts                     int
}, st string) bool {
	for _, r := range recs {
		if r.Status != st {
			return false
		}
	}
	return true
}

func postedOK(s *sink, path, taskID string) bool {
	for _, h := range s.hitsOf(path) {
		if h.status == 200 && strings.Contains(string(h.body), taskID) {
			return true
		}
	}
	return false
}

// waitMetric waits until /metrics has a line that starts with line.
func waitMetric(t *testing.T, r *relay, line string) {
	t.Helper()
	var body []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, _, body = get(t, r.url+"/metrics")
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, line) {
				return
			}
		}
	}
	t.Fatalf("/metrics has no line %q:\n%s", line, body)
}
