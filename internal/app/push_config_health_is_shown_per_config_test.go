package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/health"
)

type configHealthRow struct {
	TaskID, ConfigID, EndpointID, LastError string
	Succeeded, Failed, ConsecutiveFailures  int
	FailingSince, LastSuccess               *time.Time
}

// Two push configs that send to one failing endpoint each have health of
// their own; once the endpoint recovers, a third config's success ends the
// endpoint's failure run but not theirs. GET /v1/endpoints/{id} lists the
// three, and GET /v1/configs/{task}/{config}/health gives one.
func TestPushConfigHealthIsShownPerConfig(t *testing.T) {
	t.Parallel()
	hook := newSink(t)
	var healthy atomic.Bool
	hook.answer = func(string, int) (int, map[string]string, time.Duration) {
		if healthy.Load() {
			return 200, nil, 0
		}
		return 500, nil, 0
	}
	r := deliveringRelay(t, func(c *config.Config) {
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 20*time.Millisecond, 40*time.Millisecond, 2
		c.WebhookDisableAfterFailures, c.WebhookDisableAfter = 0, 0
	})
	send := func() string {
		var res struct{ Task v10Task }
		r.call("SendMessage", map[string]any{"message": v10Message("hi", map[string]any{"metadata": demo(map[string]any{"steps": 0})}),
			"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"id": "h", "url": hook.url("/a")}}}, &res)
		return res.Task.ID
	}
	configHealth := func(task string) (int, configHealthRow) {
		status, _, body := get(t, r.url+"/v1/configs/"+url.PathEscape(task)+"/h/health")
		var c configHealthRow
		if status == http.StatusOK && json.Unmarshal(body, &c) != nil {
			t.Fatalf("config health: %s", body)
		}
		return status, c
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited in vain for %s", what)
			}
		}
	}
	t1, t2 := send(), send()
	for _, task := range []string{t1, t2} {
		waitFor("the deliveries of "+task+" dead", func() bool {
			recs := listDeliveries(t, r, "task="+task)
			return len(recs) > 0 && allStatus(recs, "dead")
		})
		waitFor("the failures of "+task+" in its health", func() bool {
			status, c := configHealth(task)
			return status == http.StatusOK && c.Failed >= 2 && c.ConsecutiveFailures == c.Failed
		})
	}
	healthy.Store(true)
	t3 := send()
	waitFor("the success of "+t3+" in its health", func() bool {
		status, c := configHealth(t3)
		return status == http.StatusOK && c.Succeeded > 0
	})
	id := health.EndpointID("", hook.url("/a"))
	var ep struct {
		ConsecutiveFailures int
		Configs             []configHealthRow
	}
	waitFor("the endpoint's failure run ended", func() bool {
		status, _, body := get(t, r.url+"/v1/endpoints/"+id)
		if status != http.StatusOK || json.Unmarshal(body, &ep) != nil {
			t.Fatalf("/v1/endpoints/%s: %d %s", id, status, body)
		}
		return ep.ConsecutiveFailures == 0
	})
	byTask := map[string]configHealthRow{}
	for _, c := range ep.Configs {
		byTask[c.TaskID] = c
	}
	if len(ep.Configs) != 3 || byTask[t3].Succeeded == 0 || byTask[t3].ConsecutiveFailures != 0 || byTask[t3].LastSuccess == nil {
		t.Fatalf("the endpoint's configs: %+v", ep.Configs)
	}
	for _, task := range []string{t1, t2} {
		if c := byTask[task]; c.ConfigID != "h" || c.EndpointID != id || c.ConsecutiveFailures < 2 || c.FailingSince == nil || c.LastError == "" {
			t.Fatalf("config of %s on the endpoint's page: %+v", task, c)
		}
	}
	if status, _ := configHealth("no-such-task"); status != http.StatusNotFound {
		t.Fatalf("health of an unknown config: %d", status)
	}
}
