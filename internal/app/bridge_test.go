package app

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/a2arelay/relay/internal/config"
)

// relay in front of another relay's demo agent: the front relay bridges
// the task upstream (streaming, v1.0 from the card), commits every upstream
// event on its own task, and delivers them to the client's webhook, signed
// with its own keys.
func TestBridgeInFrontOfAnotherRelay(t *testing.T) {
	t.Parallel()
	// The upstream agent: a relay with its demo agent, whose card names the
	// address it really listens on.
	backAddr := freeAddr(t)
	back := startRelay(t, func(c *config.Config) { c.Addr, c.PublicURL = backAddr, "http://"+backAddr })
	front := startRelay(t, func(c *config.Config) {
		c.Agent.Backend = back.url
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	})
	hook := newSink(t)
	var res struct{ Task v10Task }
	front.call("SendMessage", map[string]any{
		"message":       v10Message("bridge me", map[string]any{"metadata": demo(map[string]any{"steps": 3, "artifactChunks": 2})}),
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook.url("/front")}},
	}, &res)
	deadline := time.Now().Add(15 * time.Second)
	var got v10Task
	for {
		front.call("GetTask", map[string]any{"id": res.Task.ID}, &got)
		if got.Status.State == "TASK_STATE_COMPLETED" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Status.State != "TASK_STATE_COMPLETED" || len(got.Artifacts) != 1 {
		t.Fatalf("front task = %s with %d artifacts", got.Status.State, len(got.Artifacts))
	}
	var text strings.Builder
	for _, p := range got.Artifacts[0].Parts {
		text.WriteString(*p.Text)
	}
	if !strings.Contains(text.String(), "bridge me") {
		t.Fatalf("artifact %q does not echo the input", text.String())
	}
	// The upstream relay has a task of its own for it.
	var list struct{ Tasks []v10Task }
	back.call("ListTasks", map[string]any{}, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID == res.Task.ID {
		t.Fatalf("upstream tasks = %+v", list.Tasks)
	}
	// The client's webhook got the front relay's notifications in order,
	// signed by the front relay.
	hook.waitHits(t, "/front", 1, 10*time.Second)
	deadline = time.Now().Add(10 * time.Second)
	var hits []hit
	for {
		hits = hook.hitsOf("/front")
		var last map[string]any
		_ = json.Unmarshal(hits[len(hits)-1].body, &last)
		if su, ok := last["statusUpdate"].(map[string]any); ok && su["status"].(map[string]any)["state"] == "TASK_STATE_COMPLETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed notification; %d received", len(hits))
		}
		time.Sleep(50 * time.Millisecond)
	}
	keyfunc := jwksKeyfunc(t, front)
	var states []string
	for _, h := range hits {
		if _, err := jwt.Parse(h.header.Get("A2A-Notification-JWT"), keyfunc, jwt.WithIssuer(front.app.cfg.PublicURL)); err != nil {
			t.Fatalf("notification not signed by the front relay: %v", err)
		}
		var n map[string]any
		_ = json.Unmarshal(h.body, &n)
		if su, ok := n["statusUpdate"].(map[string]any); ok {
			states = append(states, su["status"].(map[string]any)["state"].(string))
		}
	}
	if states[len(states)-1] != "TASK_STATE_COMPLETED" || len(states) < 4 {
		t.Fatalf("webhook states %v", states)
	}
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
