package jsonrpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"

	"github.com/gofiber/fiber/v2"
)

// fakeService is a tiny stateless Service: task ids choose its behaviour.
// "panic" panics, "boom" fails with a plain (non-*Error) error, "v01"/"v03"/
// "v10" are stored tasks of that dialect, anything else is not found.
// failures, when set, counts the panics and plain errors it produced.
type fakeService struct{ failures *atomic.Int64 }

const (
	panicText = "secret panic text 10.1.2.3"
	boomText  = "dial tcp 10.1.2.3:6379: connection refused"
)

func fakeTask(id string) a2a.Task {
	return a2a.Task{ID: id, ContextID: "ctx-" + id,
		Status:  a2a.TaskStatus{State: a2a.StateWorking, Timestamp: "2025-01-02T03:04:05Z"},
		History: []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "hi"}}}}}
}

func (f fakeService) lookup(id string) (a2a.TaskView, error) {
	if f.failures != nil && (id == "panic" || id == "boom") {
		f.failures.Add(1)
	}
	switch id {
	case "panic":
		panic(panicText)
	case "boom":
		return a2a.TaskView{}, errors.New(boomText)
	case "v01":
		return a2a.TaskView{Task: fakeTask(id), Dialect: a2a.V01}, nil
	case "v03":
		return a2a.TaskView{Task: fakeTask(id), Dialect: a2a.V03}, nil
	case "v10":
		return a2a.TaskView{Task: fakeTask(id), Dialect: a2a.V10}, nil
	}
	return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
}

func (f fakeService) Send(_ context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	if p.TaskID != "" && p.TaskID != "new" {
		if _, err := f.lookup(p.TaskID); err != nil {
			return a2a.TaskView{}, err
		}
	}
	t := a2a.Task{ID: "new", ContextID: p.ContextID, Status: a2a.TaskStatus{State: a2a.StateSubmitted},
		History: []a2a.Message{p.Message}, Metadata: p.Metadata}
	return a2a.TaskView{Task: t, Dialect: p.Dialect}, nil
}

func (f fakeService) GetTask(_ context.Context, id string) (a2a.TaskView, error) { return f.lookup(id) }
func (f fakeService) CancelTask(_ context.Context, id string) (a2a.TaskView, error) {
	return f.lookup(id)
}

func (f fakeService) ListTasks(context.Context, a2a.ListParams) (a2a.ListResult, error) {
	return a2a.ListResult{Tasks: []a2a.Task{fakeTask("v10")}, PageSize: 50, TotalSize: 1}, nil
}

func (f fakeService) SetPushConfig(_ context.Context, c a2a.PushConfig) (a2a.PushConfig, error) {
	if _, err := f.lookup(c.TaskID); err != nil {
		return a2a.PushConfig{}, err
	}
	c.ID = cmp.Or(c.ID, "cfg-1")
	return c, nil
}

func (f fakeService) GetPushConfig(_ context.Context, taskID, id string) (a2a.PushConfig, error) {
	if _, err := f.lookup(taskID); err != nil {
		return a2a.PushConfig{}, err
	}
	return a2a.PushConfig{ID: cmp.Or(id, taskID), TaskID: taskID, URL: "https://hooks.example.com/x"}, nil
}

func (f fakeService) ListPushConfigs(ctx context.Context, taskID string) ([]a2a.PushConfig, error) {
	c, err := f.GetPushConfig(ctx, taskID, "")
	return []a2a.PushConfig{c}, err
}

func (f fakeService) DeletePushConfig(_ context.Context, taskID, _ string) error {
	_, err := f.lookup(taskID)
	return err
}

// newTestApp serves h.Serve at POST /a2a and the card at its well-known paths.
func newTestApp(card *a2a.Card) *fiber.App { return newTestAppWith(fakeService{}, card) }

func newTestAppWith(svc a2a.Service, card *a2a.Card) *fiber.App {
	app := fiber.New()
	h := newHandler(svc, card, nil, a2a.StreamConfig{}, nil)
	app.Post("/a2a", h.Serve)
	if card != nil {
		// The public card as the HTTP edge serves it (rest.ServeCard, which
		// this package cannot import: rest imports it).
		app.Get("/.well-known/agent-card.json", func(c *fiber.Ctx) error {
			body, _, _, err := card.Served()
			if err != nil {
				return err
			}
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.Send(body)
		})
	}
	return app
}

// newHandler returns a Handler over an Endpoint of svc, card and streams
// (nil: streaming off), reporting to observe (nil: nowhere).
func newHandler(svc a2a.Service, card *a2a.Card, streams a2a.Streamer, cfg a2a.StreamConfig, observe func(string, a2a.Dialect, int)) *Handler {
	log := slog.New(slog.DiscardHandler)
	ep, err := a2a.NewEndpoint(a2a.EndpointDeps{Service: svc, Card: card, Streams: streams, Log: log}, cfg)
	if err != nil {
		panic(err)
	}
	h, err := New(Deps{Endpoint: ep, Log: log, Observe: observe})
	if err != nil {
		panic(err)
	}
	return h
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// post sends body to /a2a with headers h (Content-Type defaults to JSON;
// "-" removes it) and returns the status, raw body and decoded reply.
func post(t testing.TB, app *fiber.App, body string, h map[string]string) (int, string, rpcReply) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		if v == "-" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("app.Test: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r rpcReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("status %d, body %q is not JSON: %v", resp.StatusCode, b, err)
	}
	if r.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q in %s", r.JSONRPC, b)
	}
	return resp.StatusCode, string(b), r
}

func rpcBody(id, method, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
}

func TestHandlerPanicAndInternalErrors(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	for _, tc := range []struct{ name, body, secret string }{
		{"panic", rpcBody(`"p-1"`, "tasks/get", `{"id":"panic"}`), panicText},
		{"plain error", rpcBody(`"p-1"`, "GetTask", `{"id":"boom"}`), boomText},
		{"panic in send", rpcBody(`"p-1"`, "message/send", `{"message":{"role":"user","taskId":"panic","parts":[{"kind":"text","text":"x"}]}}`), panicText},
	} {
		status, raw, r := post(t, app, tc.body, nil)
		if status != http.StatusOK || r.Error == nil || r.Error.Code != CodeInternal || r.Error.Message != "internal error" {
			t.Errorf("%s: status %d, body %s; want -32603 internal error", tc.name, status, raw)
		}
		if string(r.ID) != `"p-1"` {
			t.Errorf("%s: id = %s", tc.name, r.ID)
		}
		if strings.Contains(raw, "10.1.2.3") || strings.Contains(raw, "secret") || strings.Contains(raw, "dial tcp") {
			t.Errorf("%s: body leaks the failure: %s", tc.name, raw)
		}
		if d := string(r.Error.Data); d != "" && d != `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]` {
			t.Errorf("%s: -32603 carries data %s, more than its ErrorInfo", tc.name, r.Error.Data)
		}
		// The app keeps serving after the failure.
		_, raw, r = post(t, app, rpcBody(`2`, "tasks/get", `{"id":"v03"}`), nil)
		if r.Error != nil || !strings.Contains(string(r.Result), `"kind":"task"`) {
			t.Errorf("%s: next request got %s", tc.name, raw)
		}
	}
}

func TestHandlerEnvelopeErrors(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	get := rpcBody(`1`, "GetTask", `{"id":"v10"}`)
	cases := []struct {
		name   string
		body   string
		h      map[string]string
		status int
		code   int // 0: success
		id     string
		reason string // v1.0 ErrorInfo reason, "" for no data
	}{
		{"version 2.0", get, map[string]string{"A2A-Version": "2.0"}, 200, CodeVersionNotSupported, `1`, "VERSION_NOT_SUPPORTED"},
		{"text/plain", get, map[string]string{"Content-Type": "text/plain"}, 415, CodeInvalidRequest, `null`, ""},
		{"form", get, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, CodeInvalidRequest, `null`, ""},
		{"no Content-Type", get, map[string]string{"Content-Type": "-"}, 200, 0, `1`, ""},
		{"a2a+json", get, map[string]string{"Content-Type": "application/a2a+json; charset=utf-8"}, 200, 0, `1`, ""},
		{"unknown method, string id", rpcBody(`"7"`, "tasks/frobnicate", `{}`), nil, 200, CodeMethodNotFound, `"7"`, ""},
		{"unknown method, number id", rpcBody(`7`, "tasks/frobnicate", `{}`), nil, 200, CodeMethodNotFound, `7`, ""},
		{"parse error", `{"jsonrpc":`, nil, 200, CodeParseError, `null`, ""},
		{"batch", `[` + get + `]`, nil, 200, CodeInvalidRequest, `null`, ""},
		{"params array", rpcBody(`"a"`, "GetTask", `[]`), nil, 200, CodeInvalidParams, `"a"`, ""},
		{"task not found v1.0", rpcBody(`3`, "GetTask", `{"id":"nope"}`), nil, 200, CodeTaskNotFound, `3`, "TASK_NOT_FOUND"},
		{"task not found v0.3", rpcBody(`3`, "tasks/get", `{"id":"nope"}`), nil, 200, CodeTaskNotFound, `3`, ""},
		{"streaming v1.0", rpcBody(`3`, "SendStreamingMessage", `{}`), nil, 200, CodeUnsupportedOperation, `3`, "UNSUPPORTED_OPERATION"},
		{"bad params v1.0", rpcBody(`3`, "SendMessage", `{"message":{"parts":[{}]}}`), nil, 200, CodeInvalidParams, `3`, "INVALID_PARAMS"},
		{"bad params v0.3", rpcBody(`3`, "message/send", `{"message":{"parts":[{}]}}`), nil, 200, CodeInvalidParams, `3`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, raw, r := post(t, app, tc.body, tc.h)
			if status != tc.status || string(r.ID) != tc.id {
				t.Errorf("status %d id %s, want %d %s: %s", status, r.ID, tc.status, tc.id, raw)
			}
			if tc.code == 0 {
				if r.Error != nil || len(r.Result) == 0 {
					t.Errorf("want a result: %s", raw)
				}
				return
			}
			if r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("want error %d: %s", tc.code, raw)
			}
			if tc.reason == "" {
				if len(r.Error.Data) != 0 {
					t.Errorf("unexpected error data: %s", raw)
				}
				return
			}
			var infos []map[string]string
			if err := json.Unmarshal(r.Error.Data, &infos); err != nil || len(infos) != 1 ||
				infos[0]["reason"] != tc.reason || infos[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" ||
				infos[0]["domain"] != "a2a-protocol.org" {
				t.Errorf("error data = %s, want one ErrorInfo %s", r.Error.Data, tc.reason)
			}
		})
	}
}

func TestHandlerDialects(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	cases := []struct {
		name, method, params, version string
		want, notWant                 []string
	}{
		{"v0.1 task, no header", "tasks/get", `{"id":"v01"}`, "", []string{`"sessionId":"ctx-v01"`, `"type":"text"`}, []string{`"kind"`}},
		{"v0.3 task, no header", "tasks/get", `{"id":"v03"}`, "", []string{`"kind":"task"`, `"contextId":"ctx-v03"`}, []string{`sessionId`}},
		{"v1.0 task via tasks/get", "tasks/get", `{"id":"v10"}`, "", []string{`"kind":"task"`}, nil},
		{"v0.1 task, header 0.3", "tasks/get", `{"id":"v01"}`, "0.3", []string{`"kind":"task"`, `"contextId":"ctx-v01"`}, []string{`sessionId`}},
		{"v0.3 task, header 0.1", "tasks/get", `{"id":"v03"}`, "0.1", []string{`"sessionId":"ctx-v03"`}, []string{`"kind"`}},
		{"v0.1 task, cancel", "tasks/cancel", `{"id":"v01"}`, "", []string{`"sessionId"`}, []string{`"kind"`}},
		{"GetTask", "GetTask", `{"id":"v01","historyLength":0}`, "1.0", []string{`"TASK_STATE_WORKING"`}, []string{`"kind"`, `history`}},
		{"v0.1 send", "tasks/send", `{"id":"new","message":{"role":"user","parts":[{"type":"text","text":"x"}]}}`, "",
			[]string{`"sessionId"`, `"type":"text"`}, []string{`"kind"`}},
		{"v1.0 send wraps task", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "1.0",
			[]string{`{"task":{"id":"new"`, `"ROLE_USER"`, `"TASK_STATE_SUBMITTED"`}, nil},
		{"ListTasks", "ListTasks", `{"pageSize":null,"status":"TASK_STATE_WORKING"}`, "1.0",
			[]string{`"tasks":[{"id":"v10"`, `"nextPageToken":""`, `"totalSize":1`}, nil},
		{"v0.3 push delete is null", "tasks/pushNotificationConfig/delete", `{"id":"v03","pushNotificationConfigId":"c"}`, "", []string{`"result":null`}, nil},
		{"v1.0 push delete is {}", "DeleteTaskPushNotificationConfig", `{"taskId":"v10","id":"c"}`, "", []string{`"result":{}`}, nil},
		{"v1.0 push list", "ListTaskPushNotificationConfigs", `{"taskId":"v10","pageSize":null}`, "",
			[]string{`"configs":[{"id":"v10","taskId":"v10"`, `"nextPageToken":""`}, nil},
		{"v0.3 push list", "tasks/pushNotificationConfig/list", `{"id":"v03"}`, "", []string{`"result":[{"taskId":"v03"`}, nil},
		{"v1.0 push create", "CreateTaskPushNotificationConfig", `{"taskId":"v10","url":"https://h.example.com"}`, "",
			[]string{`"id":"cfg-1"`, `"url":"https://h.example.com"`}, nil},
		{"v0.1 push set", "tasks/pushNotification/set", `{"id":"v01","pushNotificationConfig":{"url":"https://h.example.com"}}`, "",
			[]string{`"result":{"id":"v01","pushNotificationConfig":{"url":"https://h.example.com"}}`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, raw, r := post(t, app, rpcBody(`1`, tc.method, tc.params), map[string]string{"A2A-Version": cmp.Or(tc.version, "-")})
			if r.Error != nil {
				t.Fatalf("error: %s", raw)
			}
			for _, s := range tc.want {
				if !strings.Contains(raw, s) {
					t.Errorf("body lacks %s: %s", s, raw)
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(string(r.Result), s) {
					t.Errorf("body has %s: %s", s, raw)
				}
			}
		})
	}
}

func TestCard(t *testing.T) {
	t.Parallel()
	card, err := a2a.NewCard(a2a.CardConfig{Name: "relay", Description: "public", Version: "1.2.3",
		URL: "https://relay.example.com/a2a", MaxAge: time.Minute,
		Skills: []a2a.Skill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"demo"}}}})
	if err != nil {
		t.Fatal(err)
	}
	app := newTestApp(card)
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 { // its caching headers are the HTTP edge's (rest's ServeCard test)
		t.Fatalf("status %d", resp.StatusCode)
	}
	var doc struct {
		URL                 string `json:"url"`
		PreferredTransport  string `json:"preferredTransport"`
		ProtocolVersion     string `json:"protocolVersion"`
		SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion string }
		Capabilities        struct{ PushNotifications bool }
		Skills              []a2a.Skill
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("card %s: %v", body, err)
	}
	if len(doc.SupportedInterfaces) == 0 || doc.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
		doc.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" || doc.SupportedInterfaces[0].URL != doc.URL ||
		doc.URL != "https://relay.example.com/a2a" || doc.PreferredTransport != "JSONRPC" || doc.ProtocolVersion != "0.3.0" ||
		!doc.Capabilities.PushNotifications || len(doc.Skills) != 1 {
		t.Errorf("card = %s", body)
	}

	// No extended card configured: -32007 in v0.3, an unsupported
	// operation (-32004, with ErrorInfo) in v1.0.
	for m, code := range map[string]int{"agent/getAuthenticatedExtendedCard": CodeExtendedCardNotConfig, "GetExtendedAgentCard": -32004} {
		if _, raw, r := post(t, app, rpcBody(`1`, m, `{}`), nil); r.Error == nil || r.Error.Code != code {
			t.Errorf("%s without extended card: %s", m, raw)
		}
		if _, raw, r := post(t, newTestApp(nil), rpcBody(`1`, m, `null`), nil); r.Error == nil || r.Error.Code != code {
			t.Errorf("%s without card: %s", m, raw)
		}
	}
	_, raw, _ := post(t, app, rpcBody(`1`, "GetExtendedAgentCard", `{}`), nil)
	if !strings.Contains(raw, "UNSUPPORTED_OPERATION") {
		t.Errorf("v1.0 -32004 lacks ErrorInfo: %s", raw)
	}
}

func TestExtendedCard(t *testing.T) {
	t.Parallel()
	card, err := a2a.NewCard(a2a.CardConfig{Name: "relay", Description: "public", URL: "https://relay.example.com/a2a",
		HasExtended: true, ExtendedDescription: "for members",
		Skills:         []a2a.Skill{{ID: "echo", Name: "Echo", Description: "e", Tags: []string{}}},
		ExtendedSkills: []a2a.Skill{{ID: "secret", Name: "Secret", Description: "s", Tags: []string{}}}})
	if err != nil {
		t.Fatal(err)
	}
	app := newTestApp(card)
	for _, m := range []string{"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"} {
		_, raw, r := post(t, app, rpcBody(`"x"`, m, `{}`), nil)
		var doc struct {
			Description string
			Skills      []a2a.Skill
		}
		if r.Error != nil || json.Unmarshal(r.Result, &doc) != nil || doc.Description != "for members" || len(doc.Skills) != 2 {
			t.Errorf("%s: %s", m, raw)
		}
	}
	// The public card does not show the extended skills.
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "secret") || !strings.Contains(string(body), `"extendedAgentCard":true`) {
		t.Errorf("public card: %s", body)
	}
}
