package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// An operator lists the webhook endpoints, sees the failing one disabled
// with its last error and the push config that sends to it with its own
// health, and enables it again with one command.
func TestDeliveriesEndpointsListsAndEnables(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer hook.Close()
	srv := redistest.Start(t)
	cfg, err := config.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Auth, cfg.RedisURL = "127.0.0.1:0", "none", srv.URL()
	cfg.Security.AdminTokens = []string{"cli-admin-token-0123456789"}
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryMaxAttempts, cfg.DemoStepDelay, cfg.WebhookDisableAfterFailures = 1, time.Millisecond, 1
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
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := map[string]string{"RELAY_URL": base, "RELAY_ADMIN_TOKEN": "cli-admin-token-0123456789"}
		code := run(append([]string{"deliveries"}, args...), func(k string) string { return env[k] }, &out, &errb)
		return code, out.String(), errb.String()
	}
	var eps []struct{ ID, State string }
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, out, errs := cli("endpoints", "--json")
		if code != 0 {
			t.Fatalf("endpoints: %d %s", code, errs)
		}
		var res struct{ Endpoints []struct{ ID, State string } }
		_ = json.Unmarshal([]byte(out), &res)
		if eps = res.Endpoints; len(eps) == 1 && eps[0].State == "disabled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoints %+v: want the one endpoint disabled", eps)
		}
	}
	code, out, _ := cli("endpoints")
	if code != 0 || !strings.Contains(out, "disabled") || !strings.Contains(out, "HTTP 503") || !strings.Contains(out, hook.URL+"/h") {
		t.Fatalf("endpoints table: %d\n%s", code, out)
	}
	var withConfigs struct {
		Endpoints []struct {
			Configs []struct{ TaskID, ConfigID string }
		}
	}
	if code, out, _ = cli("endpoints", "--configs", "--json"); code != 0 || json.Unmarshal([]byte(out), &withConfigs) != nil ||
		len(withConfigs.Endpoints) != 1 || len(withConfigs.Endpoints[0].Configs) != 1 ||
		withConfigs.Endpoints[0].Configs[0].TaskID != sent.Result.Task.ID {
		t.Fatalf("endpoints --configs --json (task %s): %d\n%s", sent.Result.Task.ID, code, out)
	}
	cfgID := withConfigs.Endpoints[0].Configs[0].ConfigID
	if code, out, _ = cli("endpoints", "--configs"); code != 0 || !strings.Contains(out, "config "+sent.Result.Task.ID+"/"+cfgID) ||
		!regexp.MustCompile(`0 ok, [1-9]\d* failed`).MatchString(out) {
		t.Fatalf("endpoints --configs: %d\n%s", code, out)
	}
	if code, out, _ = cli("endpoints", "--task", sent.Result.Task.ID, "--config", cfgID); code != 0 ||
		!regexp.MustCompile(`0 ok, ([1-9]\d*) failed, ([1-9]\d*) in a row`).MatchString(out) || !strings.Contains(out, "HTTP 503") {
		t.Fatalf("endpoints --task --config: %d\n%s", code, out)
	}
	if code, out, _ = cli("enable", eps[0].ID); code != 0 || !strings.Contains(out, "enabled") {
		t.Fatalf("enable: %d %s", code, out)
	}
	if code, out, _ = cli("endpoints"); code != 0 || strings.Contains(out, "disabled") {
		t.Fatalf("after enable: %d\n%s", code, out)
	}
	if code, _, errs := cli("enable", "no-such-endpoint"); code != 1 || !strings.Contains(errs, "not enabled") {
		t.Fatalf("enable of an unknown endpoint: %d %s", code, errs)
	}
	var out2, errb bytes.Buffer
	if code := run([]string{"deliveries", "enable", eps[0].ID}, func(k string) string { return map[string]string{"RELAY_URL": base}[k] }, &out2, &errb); code != 1 || !strings.Contains(out2.String(), "admin token") {
		t.Fatalf("enable without the admin token: %d %s %s", code, out2.String(), errb.String())
	}
}
