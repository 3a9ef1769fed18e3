package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/a2arelay/relay/internal/a2a"
)

// echoService knows the tasks "t1" and "a:b"; it never fails otherwise.
type echoService struct{}

func (echoService) lookup(id string) (a2a.TaskView, error) {
	if id != "t1" && id != "a:b" {
		return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
	}
	return a2a.TaskView{Task: a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateWorking}}, Dialect: a2a.V10}, nil
}
func (s echoService) Send(_ context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	return a2a.TaskView{Task: a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.StateSubmitted},
		History: []a2a.Message{p.Message}}, Dialect: p.Dialect}, nil
}
func (s echoService) GetTask(_ context.Context, id string) (a2a.TaskView, error) { return s.lookup(id) }
func (s echoService) CancelTask(_ context.Context, id string) (a2a.TaskView, error) {
	return s.lookup(id)
}
func (echoService) ListTasks(context.Context, a2a.ListParams) (a2a.ListResult, error) {
	return a2a.ListResult{Tasks: []a2a.Task{}, PageSize: 50}, nil
}
func (s echoService) SetPushConfig(_ context.Context, c a2a.PushConfig) (a2a.PushConfig, error) {
	_, err := s.lookup(c.TaskID)
	return c, err
}
func (s echoService) GetPushConfig(_ context.Context, taskID, id string) (a2a.PushConfig, error) {
	_, err := s.lookup(taskID)
	return a2a.PushConfig{ID: id, TaskID: taskID, URL: "https://h.example.com"}, err
}
func (s echoService) ListPushConfigs(_ context.Context, taskID string) ([]a2a.PushConfig, error) {
	_, err := s.lookup(taskID)
	return nil, err
}
func (s echoService) DeletePushConfig(_ context.Context, taskID, _ string) error {
	_, err := s.lookup(taskID)
	return err
}

// The binding never panics and never answers 5xx on hostile paths, query
// strings, bodies and versions (the service never fails); every error is a
// google.rpc.Status whose code is the HTTP status, or in v0.3 (no
// A2A-Version, or 0.3) the {"code", "message"} of a JSON-RPC code.
func FuzzHandler(f *testing.F) {
	for _, s := range []struct{ m, path, body, version string }{
		{"POST", "/v1/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "1.0"},
		{"GET", "/v1/tasks/t1?historyLength=2&history_length=3", ``, "1.0"},
		{"POST", "/v1/tasks/a%3Ab:cancel", `{"id":"a:b","ID":"x"}`, "1.0"},
		{"GET", "/v1/tasks?pageSize=5&status=3&includeArtifacts=true&contextId=c", ``, ""},
		{"POST", "/v1/tasks/t1/pushNotificationConfigs", `{"taskid":"t2","url":"https://h.example.com"}`, "1.0"},
		{"DELETE", "/v1/tasks/t1/pushNotificationConfigs/%2e%2e", ``, "0.3"},
		{"GET", "/v1/tasks/t1:subscribe", ``, "1.0"},
		{"POST", "/v1/tasks/%zz:cancel", `[]`, "1.0"},
		{"POST", "/v1/message:stream", `{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"},{"data":{"data":{}}}]},"configuration":{}}`, ""},
		{"POST", "/v1/tasks/t1/pushNotificationConfigs", `{"name":"tasks/t1/pushNotificationConfigs/c","pushNotificationConfig":{"url":"https://h.example.com"}}`, "0.3"},
		{"GET", "/v1/card", ``, ""},
	} {
		f.Add(s.m, s.path, []byte(s.body), s.version)
	}
	ep, err := a2a.NewEndpoint(a2a.EndpointDeps{Service: echoService{}, Log: slog.New(slog.DiscardHandler)}, a2a.StreamConfig{})
	if err != nil {
		f.Fatal(err)
	}
	h, err := New(Deps{Endpoint: ep, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	app := fiber.New()
	h.Register(app)
	f.Fuzz(func(t *testing.T, method, path string, body []byte, version string) {
		switch method {
		case "GET", "POST", "DELETE":
		default:
			t.Skip()
		}
		u, err := url.ParseRequestURI(path)
		if err != nil || len(path) == 0 || path[0] != '/' || !headerSafe(version) || !headerSafe(u.RequestURI()) ||
			strings.ContainsRune(u.RequestURI(), ' ') || len(u.RequestURI()) > 2048 {
			t.Skip("not a request an HTTP client can send")
		}
		req := httptest.NewRequest(method, u.RequestURI(), bytes.NewReader(body))
		req.Header.Set("A2A-Version", version)
		req.Header.Set("Content-Type", "application/json")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatalf("app.Test: %v", err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: status %d %s", method, path, body, resp.StatusCode, out)
		}
		if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound && !Owns(u.Path) ||
			resp.StatusCode == http.StatusMethodNotAllowed {
			return
		}
		var e errorBody
		if err := json.Unmarshal(out, &e); err == nil && e.Error.Code == resp.StatusCode {
			return
		}
		var e03 v03Error
		if d, _ := dialect(version); d == a2a.V03 && json.Unmarshal(out, &e03) == nil && e03.Code < 0 && e03.Message != "" {
			return
		}
		t.Fatalf("%s %s %q: status %d, body %s is not its google.rpc.Status or v0.3 error", method, path, body, resp.StatusCode, out)
	})
}

func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
