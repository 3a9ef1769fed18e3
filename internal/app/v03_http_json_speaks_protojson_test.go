package app

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// v03ProtoTask is a Task of v0.3's a2a.proto in ProtoJSON.
type v03ProtoTask struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
	History []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"history"`
	Artifacts []struct {
		Parts []struct {
			Text *string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// v03REST sends a v0.3 HTTP+JSON request (no A2A-Version header) with a
// raw JSON body ("" for none) and returns the status and the body.
func v03REST(t *testing.T, r *relay, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// wantV03Error checks an error of v0.3's HTTP+JSON: the HTTP status and
// the body the official v0.3 clients read, {"code": <JSON-RPC code>, "message"}.
func wantV03Error(t *testing.T, status int, body []byte, wantStatus, wantCode int) {
	t.Helper()
	var e struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	if status != wantStatus || json.Unmarshal(body, &e) != nil || e.Code == nil || *e.Code != wantCode || e.Message == "" {
		t.Fatalf("answer %d %s; want %d {\"code\":%d,\"message\":...}", status, body, wantStatus, wantCode)
	}
}

func decodeV03(t *testing.T, status int, body []byte, out any) {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if strings.Contains(string(body), `"kind"`) {
		t.Fatalf("a ProtoJSON answer with a kind discriminator: %s", body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// v0.3's HTTP+JSON speaks ProtoJSON of v0.3's a2a.proto, as the official
// v0.3 clients do: a request with ROLE_USER and its parts in "content"
// (snake_case names too) is read; SendMessage answers {"task": ...}, the
// tasks have enum states and no "kind", and errors are {"code", "message"}.
func TestV03HTTPJSONSpeaksProtoJSON(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var sent struct{ Task v03ProtoTask }
	st, b := v03REST(t, r, http.MethodPost, "/v1/message:send",
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi proto"}]},"configuration":{"blocking":true}}`)
	decodeV03(t, st, b, &sent)
	task := sent.Task
	if task.ID == "" || task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("send: %s", b)
	}
	if len(task.History) == 0 || task.History[0].Role != "ROLE_USER" || len(task.History[0].Content) != 1 {
		t.Fatalf("history: %s", b)
	}
	if len(task.Artifacts) == 0 || len(task.Artifacts[0].Parts) == 0 || task.Artifacts[0].Parts[0].Text == nil ||
		!strings.Contains(*task.Artifacts[0].Parts[0].Text, "hi proto") {
		t.Fatalf("artifacts: %s", b)
	}
	var got v03ProtoTask
	st, b = v03REST(t, r, http.MethodGet, "/v1/tasks/"+task.ID, "")
	decodeV03(t, st, b, &got)
	if got.ID != task.ID || got.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("get: %s", b)
	}
	st, b = v03REST(t, r, http.MethodPost, "/v1/message:send",
		`{"message":{"message_id":"m2","context_id":"`+task.ContextID+`","role":"ROLE_USER","content":[{"text":"snake"}]}}`)
	decodeV03(t, st, b, &sent)
	if sent.Task.ContextID != task.ContextID {
		t.Fatalf("snake_case send: %s", b)
	}
	st, b = v03REST(t, r, http.MethodGet, "/v1/tasks/no-such-task", "")
	wantV03Error(t, st, b, http.StatusNotFound, -32001)
	st, b = v03REST(t, r, http.MethodPost, "/v1/message:send", `{"message":{"messageId":"m3","role":"ROLE_UNSPECIFIED","content":[{"text":"x"}]}}`)
	wantV03Error(t, st, b, http.StatusBadRequest, -32602)
}

// A configuration without blocking is proto3's false: the send answers at
// once; the task cancels to TASK_STATE_CANCELLED, the v0.3 proto's name.
func TestV03HTTPJSONCancelSpellsCancelled(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var sent struct{ Task v03ProtoTask }
	meta, _ := json.Marshal(demo(map[string]any{"steps": 50, "delayMs": 100}))
	st, b := v03REST(t, r, http.MethodPost, "/v1/message:send",
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"long"}],"metadata":`+string(meta)+`},"configuration":{}}`)
	decodeV03(t, st, b, &sent)
	if s := sent.Task.Status.State; s == "TASK_STATE_COMPLETED" || s == "" {
		t.Fatalf("a configuration without blocking blocked: %s", b)
	}
	var c v03ProtoTask
	st, b = v03REST(t, r, http.MethodPost, "/v1/tasks/"+sent.Task.ID+":cancel", "")
	decodeV03(t, st, b, &c)
	if c.Status.State != "TASK_STATE_CANCELLED" {
		t.Fatalf("cancel: %s", b)
	}
	st, b = v03REST(t, r, http.MethodPost, "/v1/tasks/"+sent.Task.ID+":cancel", "")
	wantV03Error(t, st, b, http.StatusBadRequest, -32002)
}

// Push configs of v0.3's HTTP+JSON are TaskPushNotificationConfig: created
// from {name, pushNotificationConfig} (a name of another task is refused),
// answered with the name, and listed in {"configs"}.
func TestV03HTTPJSONPushConfigsAreNamed(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.WebhookAllowCIDRs = []string{"127.0.0.0/8"} })
	var sent struct{ Task v03ProtoTask }
	decodeV03(t, http.StatusOK, mustV03(t, r, http.MethodPost, "/v1/message:send",
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"push"}]}}`), &sent)
	id := sent.Task.ID
	base := "/v1/tasks/" + id + "/pushNotificationConfigs"
	name := "tasks/" + id + "/pushNotificationConfigs/c1"
	var cfg struct {
		Name       string `json:"name"`
		PushConfig struct {
			ID, URL string
		} `json:"pushNotificationConfig"`
	}
	decodeV03(t, http.StatusOK, mustV03(t, r, http.MethodPost, base,
		`{"name":"`+name+`","pushNotificationConfig":{"id":"c1","url":"http://127.0.0.1:9/hook"}}`), &cfg)
	if cfg.Name != name || cfg.PushConfig.ID != "c1" || cfg.PushConfig.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("created %+v", cfg)
	}
	decodeV03(t, http.StatusOK, mustV03(t, r, http.MethodGet, base+"/c1", ""), &cfg)
	var list struct {
		Configs []struct{ Name string } `json:"configs"`
	}
	decodeV03(t, http.StatusOK, mustV03(t, r, http.MethodGet, base, ""), &list)
	if len(list.Configs) != 1 || list.Configs[0].Name != name {
		t.Fatalf("list %+v", list)
	}
	st, b := v03REST(t, r, http.MethodPost, base,
		`{"name":"tasks/other/pushNotificationConfigs/c2","pushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}`)
	wantV03Error(t, st, b, http.StatusBadRequest, -32602)
}

func mustV03(t *testing.T, r *relay, method, path, body string) []byte {
	t.Helper()
	st, b := v03REST(t, r, method, path, body)
	if st != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	return b
}

// message:stream in v0.3 sends StreamResponses in ProtoJSON: the task
// first, the final statusUpdate last, each with its event id.
func TestV03HTTPJSONStreamsStreamResponses(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	meta, _ := json.Marshal(demo(map[string]any{"steps": 2}))
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/message:stream", strings.NewReader(
		`{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"stream"}],"metadata":`+string(meta)+`}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var events []map[string]json.RawMessage
	ids := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: ") {
			ids++
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil || ev["kind"] != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		events = append(events, ev)
	}
	if len(events) < 2 || events[0]["task"] == nil || ids < len(events)-1 {
		t.Fatalf("events (%d ids): %v", ids, events)
	}
	var last struct {
		Final  bool
		Status struct{ State string }
	}
	if err := json.Unmarshal(events[len(events)-1]["statusUpdate"], &last); err != nil || !last.Final ||
		last.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("last event: %v", events[len(events)-1])
	}
}

// v0.3's clients read the extended card at GET /v1/card: the caller's
// signed card, as /v1/extendedAgentCard serves it; without credentials a
// v0.3 refusal, {"code", "message"}. v1.0 has no such route.
func TestV03HTTPJSONServesTheExtendedCardAtV1Card(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) {
		c.Agent.ExtendedCard = &config.ExtendedCardConfig{Description: "for members"}
	})
	status, _, body := get(t, r.url+"/v1/card", "Authorization", "Bearer "+aliceKey)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/card: %d %s", status, body)
	}
	want := r.rest(http.MethodGet, "/v1/extendedAgentCard", nil, "Authorization", "Bearer "+aliceKey)
	if string(body) != string(want.Body) {
		t.Fatalf("GET /v1/card:\n%s\nwant\n%s", body, want.Body)
	}
	status, _, body = get(t, r.url+"/v1/card")
	wantV03Error(t, status, body, http.StatusUnauthorized, -32040)
	if status, _, _ := get(t, r.url+"/v1/card", "A2A-Version", "1.0", "Authorization", "Bearer "+aliceKey); status != http.StatusNotFound {
		t.Fatalf("v1.0 GET /v1/card: %d, want 404", status)
	}
}
