package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

const (
	aliceKey  = "alice-api-key-0123456789"
	bobKey    = "bob-api-key-9876543210"
	adminTok  = "admin-token-0123456789"
	otherWrng = "not-a-key-at-all-000000"
)

// startTenantRelay starts relay with two clients, alice and bob.
func startTenantRelay(t *testing.T, mut func(*config.Config)) *relay {
	return startRelay(t, func(c *config.Config) {
		c.Auth = config.AuthAuto
		c.Security.APIKeys = []string{"alice:" + auth.HashAPIKey(aliceKey), "bob:" + auth.HashAPIKey(bobKey)}
		c.Security.AdminTokens = []string{adminTok}
		c.Security.SecretKeys = []string{"k1:" + strings.Repeat("A", 43) + "="}
		c.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
		if mut != nil {
			mut(c)
		}
	})
}

// as sends one JSON-RPC call with an API key (Bearer, or X-API-Key when
// header is set) and returns the decoded answer.
func as(r *relay, key, method string, params any, headers ...string) rpcResult {
	r.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := append([]string{}, headers...)
	if key != "" {
		h = append(h, "Authorization", "Bearer "+key)
	}
	if method[0] >= 'A' && method[0] <= 'Z' {
		h = append(h, "A2A-Version", "1.0")
	}
	return r.post(string(b), h...)
}

// Two clients: each sees only its own tasks, by every method and dialect,
// and another's task answers exactly like one that does not exist.
func TestTenantsSeeOnlyTheirOwnTasks(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, nil)
	hook := newSink(t)

	// alice's tasks, one per dialect.
	var a10 struct{ Task v10Task }
	res := as(r, aliceKey, "SendMessage", map[string]any{"message": v10Message("alice one", map[string]any{"metadata": demo(map[string]any{"outcome": "input-required"})}),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.url("/alice"), "token": "alice-secret-token-1234"}}})
	if res.Error != nil {
		t.Fatalf("alice send: %v", res.Error.Message)
	}
	_ = json.Unmarshal(res.Result, &a10)
	var a03 v03Task
	_ = json.Unmarshal(as(r, aliceKey, "message/send", map[string]any{"message": v03Message("alice two", nil)}).Result, &a03)
	var a01 v01Task
	_ = json.Unmarshal(as(r, aliceKey, "tasks/send", map[string]any{"id": "alice-v01-task", "message": v01Message("alice three", nil)}).Result, &a01)
	if a10.Task.ID == "" || a03.ID == "" || a01.ID == "" {
		t.Fatal("alice could not create her tasks")
	}
	// bob's own task.
	var b10 struct{ Task v10Task }
	_ = json.Unmarshal(as(r, bobKey, "SendMessage", map[string]any{"message": v10Message("bob one", nil)}).Result, &b10)

	notFound := func(what string, res rpcResult) {
		t.Helper()
		if res.Error == nil || res.Error.Code != -32001 {
			t.Errorf("bob %s: %s / %+v, want -32001 task not found", what, res.Result, res.Error)
			return
		}
		// The answer must not differ from the one for an id nobody has.
		if m := strings.ToLower(res.Error.Message); strings.Contains(m, "key:alice") || strings.Contains(m, "owner") || strings.Contains(m, "another") || strings.Contains(m, "permission") {
			t.Errorf("bob %s: error names the owner: %s", what, res.Error.Message)
		}
	}
	for _, id := range []string{a10.Task.ID, a03.ID, a01.ID} {
		notFound("GetTask", as(r, bobKey, "GetTask", map[string]any{"id": id}))
		notFound("tasks/get", as(r, bobKey, "tasks/get", map[string]any{"id": id}))
		notFound("CancelTask", as(r, bobKey, "CancelTask", map[string]any{"id": id}))
		notFound("tasks/cancel", as(r, bobKey, "tasks/cancel", map[string]any{"id": id}))
		notFound("continue (v1.0)", as(r, bobKey, "SendMessage", map[string]any{"message": v10Message("hijack", map[string]any{"taskId": id})}))
		notFound("continue (v0.3)", as(r, bobKey, "message/send", map[string]any{"message": v03Message("hijack", map[string]any{"taskId": id})}))
		notFound("push set (v1.0)", as(r, bobKey, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "url": hook.url("/bob")}))
		notFound("push set (v0.3)", as(r, bobKey, "tasks/pushNotificationConfig/set", map[string]any{"taskId": id, "pushNotificationConfig": map[string]any{"url": hook.url("/bob")}}))
		notFound("push get (v1.0)", as(r, bobKey, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": id}))
		notFound("push list (v1.0)", as(r, bobKey, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id}))
		notFound("push list (v0.3)", as(r, bobKey, "tasks/pushNotificationConfig/list", map[string]any{"id": id}))
		notFound("push delete (v0.3)", as(r, bobKey, "tasks/pushNotificationConfig/delete", map[string]any{"id": id, "pushNotificationConfigId": id}))
		notFound("push get (v0.1)", as(r, bobKey, "tasks/pushNotification/get", map[string]any{"id": id}))
		notFound("SubscribeToTask", as(r, bobKey, "SubscribeToTask", map[string]any{"id": id}, "Accept", "application/json"))
		notFound("tasks/resubscribe", as(r, bobKey, "tasks/resubscribe", map[string]any{"id": id}, "Accept", "application/json"))
	}
	// A task id nobody has gives the very same answer.
	notFound("GetTask of a missing id", as(r, bobKey, "GetTask", map[string]any{"id": "no-such-task"}))

	// ListTasks: each sees exactly its own.
	var aliceList, bobList struct {
		Tasks     []v10Task
		TotalSize int
	}
	_ = json.Unmarshal(as(r, aliceKey, "ListTasks", map[string]any{}).Result, &aliceList)
	_ = json.Unmarshal(as(r, bobKey, "ListTasks", map[string]any{}).Result, &bobList)
	if len(aliceList.Tasks) != 3 || aliceList.TotalSize != 3 {
		t.Errorf("alice lists %d tasks (total %d), want 3", len(aliceList.Tasks), aliceList.TotalSize)
	}
	if len(bobList.Tasks) != 1 || bobList.Tasks[0].ID != b10.Task.ID || bobList.TotalSize != 1 {
		t.Errorf("bob lists %+v (total %d), want only his task", bobList.Tasks, bobList.TotalSize)
	}
	// Alice still reads, continues and configures her own tasks.
	if res := as(r, aliceKey, "GetTask", map[string]any{"id": a10.Task.ID}); res.Error != nil {
		t.Errorf("alice GetTask: %s", res.Error.Message)
	}
	if res := as(r, aliceKey, "ListTaskPushNotificationConfigs", map[string]any{"taskId": a10.Task.ID}); res.Error != nil {
		t.Errorf("alice lists her push configs: %s", res.Error.Message)
	}
	if res := as(r, aliceKey, "SendMessage", map[string]any{"message": v10Message("alice answers", map[string]any{"taskId": a10.Task.ID})}); res.Error != nil {
		t.Errorf("alice continues her task: %s", res.Error.Message)
	}
	// The API key also works in the X-API-Key header.
	if res := as(r, "", "GetTask", map[string]any{"id": b10.Task.ID}, "X-API-Key", bobKey); res.Error != nil {
		t.Errorf("bob via X-API-Key: %s", res.Error.Message)
	}
}

// Without credentials, or with wrong ones, the A2A endpoint answers 401
// with a JSON-RPC error (jsonrpc.CodeUnauthenticated); the card stays public and declares the schemes.
func TestUnauthenticatedRequestsAreRefused(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, nil)
	for name, key := range map[string]string{"no credentials": "", "wrong key": otherWrng} {
		res := as(r, key, "GetTask", map[string]any{"id": "x"})
		if res.Status != http.StatusUnauthorized || res.Error == nil || res.Error.Code != jsonrpc.CodeUnauthenticated || res.RPC != "2.0" {
			t.Errorf("%s: status %d, %+v", name, res.Status, res.Error)
		}
	}
	status, _, body := get(t, r.url+"/.well-known/agent-card.json")
	var card struct {
		SecuritySchemes      map[string]map[string]any
		Security             []map[string][]string
		SecurityRequirements []map[string]any
	}
	_ = json.Unmarshal(body, &card)
	if status != 200 || card.SecuritySchemes["apiKey"]["type"] != "apiKey" || len(card.Security) == 0 || len(card.SecurityRequirements) == 0 {
		t.Fatalf("card: %d %s", status, body)
	}
}

// The management API wants the admin token, not a client key.
func TestManagementAPIWantsAdminToken(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, nil)
	for name, h := range map[string][]string{
		"none": nil, "client key": {"Authorization", "Bearer " + aliceKey},
	} {
		for _, path := range []string{"/v1/deliveries?status=dead", "/v1/endpoints", "/v1/configs/some-task/h/health"} {
			if st, _, _ := get(t, r.url+path, h...); st != http.StatusUnauthorized {
				t.Errorf("%s with %s: %d, want 401", path, name, st)
			}
		}
	}
	if st, _, body := get(t, r.url+"/v1/deliveries?status=dead", "Authorization", "Bearer "+adminTok); st != 200 {
		t.Errorf("deliveries with the admin token: %d %s", st, body)
	}
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/keys/rotate", nil)
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("key rotation by a client: %d", resp.StatusCode)
	}
}

// A flood above the rate limit is refused with 429 for that client only.
func TestRateLimitIsPerClient(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) { c.Security.RateLimit = 5 })
	var mu sync.Mutex
	limited := 0
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			res := as(r, aliceKey, "GetTask", map[string]any{"id": "x"})
			if res.Status == http.StatusTooManyRequests {
				mu.Lock()
				limited++
				mu.Unlock()
				if res.Error == nil {
					t.Error("429 without a JSON-RPC error")
				}
			}
		})
	}
	wg.Wait()
	if limited == 0 {
		t.Fatal("30 requests at once, limit 5/s: none refused")
	}
	if res := as(r, bobKey, "GetTask", map[string]any{"id": "x"}); res.Status != http.StatusOK {
		t.Fatalf("bob is limited by alice's flood: %d", res.Status)
	}
}

// A relay on a real Redis without credentials refuses to start, unless
// RELAY_AUTH=none says so on purpose.
func TestRealRedisWithoutCredentialsRefusesToStart(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := testConfig(t)
	cfg.Auth = config.AuthAuto
	cfg.RedisURL, cfg.RedisPrefix = redistest.URL(rdb), strings.TrimSuffix(prefix, ":")
	a, err := New(Deps{Log: testLogger()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "RELAY_AUTH=none") {
		if err == nil {
			_ = a.Shutdown(context.Background())
		}
		t.Fatalf("Start = %v, want a refusal naming RELAY_AUTH=none", err)
	}
}

// Push config secrets are ciphertext in Redis, masked in answers, in plain
// text only in the webhook's headers; a new secret key re-encrypts them as
// they are read.
func TestPushSecretsAreEncryptedAtRest(t *testing.T) {
	t.Parallel()
	k1 := "k1:" + strings.Repeat("A", 43) + "="
	r := startTenantRelay(t, func(c *config.Config) { c.Security.SecretKeys = []string{k1} })
	hook := newSink(t)
	const token, creds = "webhook-token-0123456789", "webhook-credentials-abcdefgh"
	res := as(r, aliceKey, "SendMessage", map[string]any{"message": v10Message("secret", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.url("/s"), "token": token,
			"authentication": map[string]any{"scheme": "Bearer", "credentials": creds}}}})
	var sent struct{ Task v10Task }
	if res.Error != nil || json.Unmarshal(res.Result, &sent) != nil {
		t.Fatalf("send: %+v", res.Error)
	}
	raw, err := r.app.store.PushConfigs(context.Background(), sent.Task.ID)
	if err != nil || len(raw) != 1 {
		t.Fatalf("stored configs: %v, %v", raw, err)
	}
	for _, v := range raw {
		if strings.Contains(v, token) || strings.Contains(v, creds) || !strings.Contains(v, "enc:v1:k1:") {
			t.Fatalf("stored config is not encrypted: %s", v)
		}
	}
	var list struct {
		Configs []struct {
			Token          string
			Authentication struct{ Credentials string }
		}
	}
	_ = json.Unmarshal(as(r, aliceKey, "ListTaskPushNotificationConfigs", map[string]any{"taskId": sent.Task.ID}).Result, &list)
	if len(list.Configs) != 1 || list.Configs[0].Token != "****6789" || list.Configs[0].Authentication.Credentials != "****efgh" {
		t.Fatalf("listed config is not masked: %+v", list.Configs)
	}
	h := hook.waitHits(t, "/s", 1, 10*time.Second)[0]
	if h.header.Get("X-A2A-Notification-Token") != token || h.header.Get("Authorization") != "Bearer "+creds {
		t.Fatalf("webhook headers: token %q, authorization %q", h.header.Get("X-A2A-Notification-Token"), h.header.Get("Authorization"))
	}

	// A second instance with a new current key reads the config (and so
	// re-encrypts it with k2); the old key still decrypts until then.
	cfg := r.app.cfg
	cfg.Security.SecretKeys = []string{"k2:" + strings.Repeat("B", 43) + "=", k1}
	r2 := startWith(t, cfg)
	if res := as(r2, aliceKey, "ListTaskPushNotificationConfigs", map[string]any{"taskId": sent.Task.ID}); res.Error != nil {
		t.Fatalf("list with the rotated ring: %s", res.Error.Message)
	}
	raw, _ = r.app.store.PushConfigs(context.Background(), sent.Task.ID)
	for _, v := range raw {
		if !strings.Contains(v, "enc:v1:k2:") || strings.Contains(v, "enc:v1:k1:") {
			t.Fatalf("config not re-encrypted with k2: %s", v)
		}
	}
}

// One client's open streams are bounded; another client still streams.
func TestStreamsPerClientLimit(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) { c.Security.MaxStreamsPerClient = 1 })
	long := map[string]any{"metadata": demo(map[string]any{"steps": 100, "delayMs": 100})}
	first, stop := openStream(t, r, "SendStreamingMessage", map[string]any{"message": v10Message("long one", long)}, "Authorization", "Bearer "+aliceKey)
	defer stop()
	<-first // the stream is open
	second := as(r, aliceKey, "SendStreamingMessage", map[string]any{"message": v10Message("long two", long)}, "Accept", "application/json")
	if second.Error == nil || !strings.Contains(second.Error.Message, "too many open streams for this client") {
		t.Fatalf("alice's second stream: %s / %+v", second.Result, second.Error)
	}
	if second.Status != http.StatusTooManyRequests || second.Error.Code != jsonrpc.CodeLimited {
		t.Errorf("alice's second stream: HTTP %d, code %d; want 429, %d", second.Status, second.Error.Code, jsonrpc.CodeLimited)
	}
	bob, stopBob := openStream(t, r, "SendStreamingMessage", map[string]any{"message": v10Message("bob's", long)}, "Authorization", "Bearer "+bobKey)
	defer stopBob()
	if ev, ok := <-bob; !ok || ev.Data.Error != nil {
		t.Fatalf("bob's stream: %+v", ev)
	}
}
