package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestAgentCard(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		c.PublicURL = "https://relay.example.test"
		c.Agent.ExtendedCard = &config.ExtendedCardConfig{Description: "more", Skills: []config.SkillConfig{{ID: "secret", Name: "Secret", Description: "d", Tags: []string{"x"}}}}
	})
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		status, h, body := get(t, r.url+path)
		if status != 200 || h.Get("ETag") == "" || !strings.Contains(h.Get("Cache-Control"), "max-age=300") {
			t.Fatalf("%s: status %d, headers %v", path, status, h)
		}
		var card struct {
			Name, URL, PreferredTransport, ProtocolVersion string
			SupportedInterfaces                            []struct{ URL, ProtocolBinding, ProtocolVersion string }
			Capabilities                                   struct{ Streaming, PushNotifications bool }
			Skills                                         []struct{ ID, Name, Description string }
		}
		if err := json.Unmarshal(body, &card); err != nil {
			t.Fatal(err)
		}
		if card.URL != "https://relay.example.test/" || card.PreferredTransport != "JSONRPC" || card.ProtocolVersion != "0.3.0" ||
			len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
			!card.Capabilities.PushNotifications || len(card.Skills) != 1 || card.Skills[0].ID != "echo" {
			t.Fatalf("%s: card = %+v", path, card)
		}
		if status, _, _ := get(t, r.url+path, "If-None-Match", h.Get("ETag")); status != http.StatusNotModified {
			t.Fatalf("If-None-Match: status %d", status)
		}
	}
	var ext struct{ Skills []struct{ ID string } }
	r.call("GetExtendedAgentCard", map[string]any{}, &ext)
	if len(ext.Skills) != 2 || ext.Skills[1].ID != "secret" {
		t.Fatalf("extended card skills = %+v", ext.Skills)
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cfg := testConfig(t)
	cfg.RedisURL = srv.URL()
	r := startWith(t, cfg)
	if status, _, _ := get(t, r.url+"/readyz"); status != 200 {
		t.Fatalf("readyz = %d with Redis up", status)
	}
	srv.Stop()
	if status, _, body := get(t, r.url+"/readyz"); status != 503 || !strings.Contains(string(body), "unavailable") {
		t.Fatalf("readyz = %d %s with Redis down", status, body)
	}
	if status, _, _ := get(t, r.url+"/healthz"); status != 200 {
		t.Fatalf("healthz = %d: the process is alive", status)
	}
	// A request while Redis is down gets -32603, not a hang or a crash.
	res := r.callRaw("GetTask", map[string]any{"id": "x"})
	wantError(t, res, -32603)
	if strings.Contains(res.Error.Message, "127.0.0.1") {
		t.Fatalf("internal detail leaked: %q", res.Error.Message)
	}
}

func TestTasksSurviveRestarts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	cfg := testConfig(t)
	cfg.RedisURL = srv.URL()

	r1 := startWith(t, cfg)
	var done struct{ Task v10Task }
	r1.call("SendMessage", map[string]any{"message": v10Message("durable", nil)}, &done)
	var waiting v01Task
	r1.call("tasks/send", map[string]any{"id": "durable-01", "message": v01Message("wait", demo(map[string]any{"outcome": "input-required"}))}, &waiting)
	r1.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": "durable-01", "id": "hook", "url": "https://hooks.example.test/d"}, nil)
	r1.stop()
	srv.Restart() // Redis restarts too, from its AOF

	r2 := startWith(t, cfg)
	var again v10Task
	r2.call("GetTask", map[string]any{"id": done.Task.ID}, &again)
	if again.Status.State != "TASK_STATE_COMPLETED" || len(again.Artifacts) != 1 || *again.Artifacts[0].Parts[0].Text != "durable" {
		t.Fatalf("task after restart = %+v", again)
	}
	r2.call("GetTaskPushNotificationConfig", map[string]any{"taskId": "durable-01", "id": "hook"}, nil)
	// The interrupted task continues on the new instance.
	var finished v01Task
	r2.call("tasks/send", map[string]any{"id": "durable-01", "message": v01Message("go on", nil)}, &finished)
	if finished.Status.State != "completed" {
		t.Fatalf("continued task = %+v", finished)
	}
}

func TestPartitionCountIsFixed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cfg := testConfig(t)
	cfg.RedisURL = srv.URL()
	startWith(t, cfg).stop()
	cfg.Partitions = 4
	a, err := New(Deps{Log: testLogger()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "partitions") {
		t.Fatalf("start with another partition count: err = %v", err)
	}
	a.closeStore()
}

func TestEmbeddedStore(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t) // no Redis URL: the embedded store
	r := startWith(t, cfg)
	var res struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("embedded", nil)}, &res)
	if res.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("embedded: %+v", res.Task)
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	got := make(chan rpcResult, 1)
	go func() {
		got <- r.callRaw("SendMessage", map[string]any{"message": v10Message("in flight", map[string]any{"metadata": demo(map[string]any{"steps": 4, "delayMs": 50})})})
	}()
	waitForTasks(t, r, 1)
	r.stop()
	res := <-got
	if res.Error != nil {
		t.Fatalf("in-flight request failed during shutdown: %+v", res.Error)
	}
	var out struct{ Task v10Task }
	if err := json.Unmarshal(res.Result, &out); err != nil || out.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("in-flight result %s", res.Result)
	}
}

// waitForTasks waits until n tasks are listed (the request reached relay).
func waitForTasks(t *testing.T, r *relay, n int) {
	t.Helper()
	for range 500 {
		var p struct{ Tasks []json.RawMessage }
		r.call("ListTasks", map[string]any{}, &p)
		if len(p.Tasks) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d tasks appeared", n)
}
