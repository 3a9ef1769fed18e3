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
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// An operator replays, from a terminal, every notification a webhook URL
// was sent in the last hour: it gets them again, with their ids; bad flags
// are refused before anything is sent.
func TestAnOperatorReplaysAWindowFromTheCLI(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("A2A-Notification-Id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), ids...) }
	srv := redistest.Start(t)
	cfg, err := config.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Auth = "127.0.0.1:0", "none"
	cfg.RedisURL = srv.URL()
	cfg.Security.AdminTokens = []string{"cli-admin-token-0123456789"}
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.DemoStepDelay = time.Millisecond
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
	resp.Body.Close()
	waitFor := func(n int) []string {
		deadline := time.Now().Add(10 * time.Second)
		for len(got()) < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if len(got()) < n {
			t.Fatalf("%d notifications, want %d", len(got()), n)
		}
		return got()
	}
	// The task's notifications land (how many the demo makes: they stop coming).
	first := waitFor(1)
	for {
		time.Sleep(300 * time.Millisecond)
		if now := got(); len(now) == len(first) {
			break
		} else {
			first = now
		}
	}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := map[string]string{"RELAY_URL": base, "RELAY_ADMIN_TOKEN": "cli-admin-token-0123456789"}
		code := run(append([]string{"deliveries", "replay"}, args...), func(k string) string { return env[k] }, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := cli("--webhook", hook.URL+"/h", "--since", "1h", "--json")
	var ans struct{ Queued, Configs int }
	if code != 0 || json.Unmarshal([]byte(out), &ans) != nil || ans.Queued != len(first) || ans.Configs != 1 {
		t.Fatalf("replay: %d %s %s, want %d queued", code, out, errs, len(first))
	}
	all := waitFor(2 * len(first))
	if strings.Join(all[len(first):], ",") != strings.Join(first, ",") {
		t.Fatalf("replayed %v, want %v", all[len(first):], first)
	}
	if code, out, _ := cli("--webhook", hook.URL+"/h", "--since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "--until", "1ns"); code != 0 ||
		!strings.Contains(out, "queued ") {
		t.Fatalf("replay with times: %d %s", code, out)
	}
	for _, bad := range [][]string{{"--since", "1h"}, {"--webhook", hook.URL, "--task", "t", "--since", "1h"},
		{"--webhook", hook.URL}, {"--webhook", hook.URL, "--since", "yesterday"}} {
		if code, _, errs := cli(bad...); code == 0 || errs == "" {
			t.Errorf("replay %v: %d, want refused", bad, code)
		}
	}
}
