package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/config"
)

// An operator starts from a task id: lists its deliveries, shows the dead
// one's attempts and failure reason, redelivers it, and sees it land.
func TestDeliveriesCLI(t *testing.T) {
	var ok atomic.Bool
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok.Load() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("receiver is down"))
	}))
	defer hook.Close()
	cfg, err := config.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Auth = "127.0.0.1:0", "none"
	cfg.Security.AdminTokens = []string{"cli-admin-token-0123456789"}
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryMaxAttempts, cfg.DemoStepDelay = 1, time.Millisecond
	a, err := app.New(app.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(context.Background())
	base := "http://" + a.Addr()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1",
		"parts":[{"text":"cli"}],"metadata":{"demo":{"steps":0}}},"configuration":{"taskPushNotificationConfig":{"url":"` + hook.URL + `/h"}}}}`
	req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Result struct{ Task struct{ ID string } }
	}
	_ = json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	task := sent.Result.Task.ID

	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := map[string]string{"RELAY_URL": base, "RELAY_ADMIN_TOKEN": "cli-admin-token-0123456789"}
		code := run(append([]string{"deliveries"}, args...), func(k string) string { return env[k] }, &out, &errb)
		return code, out.String(), errb.String()
	}
	// The first notification dies (one attempt), the rest wait behind it... and die too.
	var dead []string
	deadline := time.Now().Add(10 * time.Second)
	for len(dead) == 0 && time.Now().Before(deadline) {
		code, out, errs := cli("list", "--task", task, "--status", "dead", "--json")
		if code != 0 {
			t.Fatalf("list: %d %s", code, errs)
		}
		var res struct{ Deliveries []struct{ ID string } }
		_ = json.Unmarshal([]byte(out), &res)
		for _, d := range res.Deliveries {
			dead = append(dead, d.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(dead) == 0 {
		t.Fatal("no dead delivery listed")
	}
	code, out, _ := cli("list", "--task", task)
	if code != 0 || !strings.Contains(out, "DELIVERY") || !strings.Contains(out, "dead") {
		t.Fatalf("table list: %d\n%s", code, out)
	}
	code, out, _ = cli("show", dead[0])
	if code != 0 || !strings.Contains(out, "500") || !strings.Contains(out, "receiver is down") || !strings.Contains(out, "http") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	ok.Store(true)
	code, out, _ = cli(append([]string{"redeliver"}, dead...)...)
	if code != 0 || !strings.Contains(out, "queued again") {
		t.Fatalf("redeliver: %d\n%s", code, out)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, out, _ = cli("show", dead[0], "--json")
		var d struct{ Status string }
		_ = json.Unmarshal([]byte(out), &d)
		if d.Status == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redelivered notification is %s", d.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _, errs := cli("show", "no-such-delivery"); code != 1 || !strings.Contains(errs, "no delivery with that id") {
		t.Fatalf("show of a missing id: %d %s", code, errs)
	}
	var out2, errb bytes.Buffer
	if code := run([]string{"deliveries", "list"}, func(k string) string { return map[string]string{"RELAY_URL": base}[k] }, &out2, &errb); code != 1 || !strings.Contains(errb.String(), "admin token") {
		t.Fatalf("without the admin token: %d %s", code, errb.String())
	}
}
