package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// Bob points push configs at Alice's webhook with a token of his own; her
// receiver refuses them (401, as docs/receivers.md advises) until bob's
// share of the endpoint is disabled. Alice's notifications to the same URL
// are still POSTed: endpoint health is kept per client, so no client can
// disable another's endpoint; /v1/endpoints shows whose each one is.
func TestOneClientsFailingConfigsNeverDisableAnothersEndpoint(t *testing.T) {
	t.Parallel()
	const aliceToken = "alice-secret-token-1234"
	var mu sync.Mutex
	hits := map[string][]string{} // token -> bodies
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tok := req.Header.Get("X-A2A-Notification-Token")
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := req.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		mu.Lock()
		hits[tok] = append(hits[tok], b.String())
		mu.Unlock()
		if tok != aliceToken {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	r := startTenantRelay(t, func(c *config.Config) {
		c.RetryInitial, c.RetryMaxInterval, c.RetryMaxAttempts = 20*time.Millisecond, 40*time.Millisecond, 1
		c.WebhookDisableAfterFailures, c.WebhookDisableAfter = 3, 0
	})
	send := func(key, text, token string) string {
		res := as(r, key, "SendMessage", map[string]any{"message": v10Message(text, nil),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": srv.URL + "/alice", "token": token}}})
		if res.Error != nil {
			t.Fatalf("send: %s", res.Error.Message)
		}
		var out struct{ Task struct{ ID string } }
		if err := json.Unmarshal(res.Result, &out); err != nil {
			t.Fatal(err)
		}
		return out.Task.ID
	}
	send(bobKey, "bob mischief", "bob-token-000000000000")
	// Bob's share of the endpoint is disabled.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if owners := endpointsDisabled(t, r); len(owners) == 1 {
			if !strings.HasSuffix(owners[0], "bob") { // (the principal, as "key:bob")
				t.Fatalf("the disabled endpoint is shown as %q's, want bob's", owners[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("bob's failing endpoint was not disabled")
		}
	}
	alice := send(aliceKey, "alice after bob", aliceToken)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := 0
		for _, b := range hits[aliceToken] {
			if strings.Contains(b, alice) && strings.Contains(b, "TASK_STATE_COMPLETED") {
				n++
			}
		}
		mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's task %s was never POSTed to her endpoint after bob's configs failed there", alice)
		}
	}
}

// endpointsDisabled lists the owners of the disabled endpoints
// /v1/endpoints lists.
func endpointsDisabled(t *testing.T, r *relay) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", r.url+"/v1/endpoints", nil)
	req.Header.Set("Authorization", "Bearer "+adminTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Endpoints []struct{ State, Owner string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, e := range out.Endpoints {
		if e.State == "disabled" {
			owners = append(owners, e.Owner)
		}
	}
	return owners
}
