package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/webhook"
)

// syncBuffer is a bytes.Buffer safe for the listener's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// relay listen verifies and prints real notifications, failing the first
// attempt of each as told, and relay's retries then land.
func TestListenVerifiesAndRehearsesRetries(t *testing.T) {
	probe, _ := net.Listen("tcp", "127.0.0.1:0")
	relayAddr := probe.Addr().String()
	probe.Close()
	cfg, err := config.Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.PublicURL, cfg.Auth = relayAddr, "http://"+relayAddr, "none"
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	cfg.RetryInitial, cfg.RetryMaxInterval, cfg.DemoStepDelay = 50*time.Millisecond, 100*time.Millisecond, time.Millisecond
	a, err := app.New(app.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(context.Background())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hookURL := "http://" + ln.Addr().String() + "/"
	out := &syncBuffer{}
	l := &listener{out: out, attempts: map[string]int{}}
	if err := l.parseFail("500x1"); err != nil {
		t.Fatal(err)
	}
	if l.verifier, err = webhook.NewVerifier(webhook.Config{Issuer: cfg.PublicURL, Audience: hookURL, Token: "listen-token"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.serve(ctx, ln, "/")

	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1",
		"parts":[{"text":"listen"}],"metadata":{"demo":{"steps":1}}},"configuration":{"taskPushNotificationConfig":{"url":"` + hookURL + `","token":"listen-token"}}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+relayAddr, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "status-update completed") || !strings.Contains(out.String(), "204") {
		if time.Now().After(deadline) {
			t.Fatalf("output:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := out.String()
	for _, want := range []string{"500", "attempt 1", "attempt 2", "v1.0", "since commit"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "rejected") {
		t.Errorf("a real notification was rejected:\n%s", got)
	}
	// A forged one is rejected.
	forged, _ := http.NewRequest(http.MethodPost, hookURL, strings.NewReader(`{"statusUpdate":{}}`))
	forged.Header.Set("A2A-Notification-JWT", "e30.e30.sig")
	r2, err := http.DefaultClient.Do(forged)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusUnauthorized || !strings.Contains(out.String(), "rejected") {
		t.Fatalf("forged notification: %d\n%s", r2.StatusCode, out.String())
	}
}
