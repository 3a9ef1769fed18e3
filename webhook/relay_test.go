package webhook_test

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
	"github.com/a2arelay/relay/webhook"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// startRelay runs a whole relay (skipped without redis-server) that may
// deliver to loopback, with fast retries.
func startRelay(t *testing.T) (url string, cfg config.Config) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	cfg, err := config.Load(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Auth, cfg.Security.RateLimit = "127.0.0.1:0", "none", 0
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	cfg.PublicURL = "https://relay.example.test"
	cfg.DemoStepDelay, cfg.BlockingTimeout = 5*time.Millisecond, 10*time.Second
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryInitial, cfg.RetryMaxInterval, cfg.DeliveryTimeout = 200*time.Millisecond, 2*time.Second, 5*time.Second
	a, err := app.New(app.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	return "http://" + a.Addr(), cfg
}

func rpc(t *testing.T, relayURL, method string, params any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, relayURL+"/", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if method[0] >= 'A' && method[0] <= 'Z' {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Error json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %s", method, err, out.Error)
	}
}

// TestRealRelay has a real relay deliver to receivers behind Middleware,
// in each dialect: every notification verifies (JWKS, claims, body hash,
// token, credentials), a retried notification keeps its id, and each is
// processed once.
func TestRealRelay(t *testing.T) {
	t.Parallel()
	relayURL, cfg := startRelay(t)
	var (
		mu     sync.Mutex
		got    = map[string][]*webhook.Notification{}
		failed string // the id of the notification that failed once
	)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	hook := func(path, token, authorization string) {
		v, err := webhook.NewVerifier(webhook.Config{Issuer: cfg.PublicURL, JWKSURL: relayURL + webhook.JWKSPath,
			Audience: srv.URL + path, Token: token, Authorization: authorization})
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle(path, v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := webhook.FromContext(r.Context())
			mu.Lock()
			defer mu.Unlock()
			if path == "/v03" && failed == "" { // the first one fails once: relay retries it
				failed = n.ID
				http.Error(w, "not now", http.StatusInternalServerError)
				return
			}
			got[path] = append(got[path], n)
			w.WriteHeader(http.StatusNoContent)
		})))
	}
	hook("/v10", "tok-10", "Bearer client-secret")
	hook("/v03", "tok-03", "")
	hook("/v01", "", "")

	rpc(t, relayURL, "SendMessage", map[string]any{
		"message": map[string]any{"role": "ROLE_USER", "messageId": "m-10", "parts": []any{map[string]any{"text": "hi"}}},
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": srv.URL + "/v10", "token": "tok-10",
			"authentication": map[string]any{"scheme": "Bearer", "credentials": "client-secret"}}}})
	rpc(t, relayURL, "message/send", map[string]any{
		"message":       map[string]any{"kind": "message", "role": "user", "messageId": "m-03", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
		"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": srv.URL + "/v03", "token": "tok-03"}}})
	rpc(t, relayURL, "tasks/send", map[string]any{"id": "webhook-01",
		"message":          map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "hi"}}},
		"pushNotification": map[string]any{"url": srv.URL + "/v01"}})

	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		done := len(got["/v10"]) >= 5 && len(got["/v03"]) >= 5 && len(got["/v01"]) >= 5
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("notifications received: v1.0 %d, v0.3 %d, v0.1 %d", len(got["/v10"]), len(got["/v03"]), len(got["/v01"]))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	describe := func(ns []*webhook.Notification) string {
		var out []string
		seen := map[string]bool{}
		for _, n := range ns {
			if seen[n.ID] {
				t.Fatalf("notification %s processed twice", n.ID)
			}
			seen[n.ID] = true
			out = append(out, string(n.Kind)+":"+string(n.State))
		}
		return strings.Join(out, ",")
	}
	if s := describe(got["/v10"]); s != "task:submitted,status-update:working,status-update:working,artifact-update:,status-update:completed" {
		t.Fatalf("v1.0: %s", s)
	}
	if s := describe(got["/v03"]); s != "task:submitted,task:working,task:working,task:working,task:completed" {
		t.Fatalf("v0.3: %s", s)
	}
	if s := describe(got["/v01"][4:]); s != "task:completed" || got["/v01"][4].TaskID != "webhook-01" || got["/v01"][4].ContextID == "" {
		t.Fatalf("v0.1: %s %+v", s, got["/v01"][4])
	}
	if got["/v03"][0].ID != failed {
		t.Fatalf("the failed notification %s was not retried first (got %s)", failed, got["/v03"][0].ID)
	}
	if last, art := got["/v10"][4], got["/v10"][3]; !last.Final || art.Artifact.Parts[0].Kind != webhook.PartText || !art.LastChunk {
		t.Fatalf("v1.0 details: final %v, artifact %+v", last.Final, art.Artifact)
	}
}
