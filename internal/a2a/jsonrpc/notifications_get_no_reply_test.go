package jsonrpc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// recordingService records the sends it gets.
type recordingService struct {
	fakeService
	mu    sync.Mutex
	sends []a2a.SendParams
}

func (r *recordingService) Send(ctx context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	r.mu.Lock()
	r.sends = append(r.sends, p)
	r.mu.Unlock()
	return r.fakeService.Send(ctx, p)
}

// A request without an id is a JSON-RPC 2.0 notification (§4.1): the
// server must not reply to it. relay runs it and answers HTTP 204 with an
// empty body, whatever the outcome (it answered -32600 "id is required"
// before looking at the method). A send runs without blocking, a streaming
// send as that send; an envelope that is not a valid request is still
// answered under a null id, and an id of null is a request like any other.
func TestNotificationsGetNoReply(t *testing.T) {
	t.Parallel()
	svc := &recordingService{}
	app := newTestAppWith(svc, nil)
	const v10msg = `{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m-note"}`
	notify := func(method, params string) string {
		return `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body string
		sends      int // sends the service got
	}{
		{"GetTask", notify("GetTask", `{"id":"v10"}`), 0},
		{"SendMessage", notify("SendMessage", `{"message":`+v10msg+`}`), 1},
		{"SendMessage, snake_case", notify("SendMessage", `{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`), 1},
		{"SendStreamingMessage", notify("SendStreamingMessage", `{"message":`+v10msg+`}`), 1},
		{"v0.3 message/send", notify("message/send", `{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}],"messageId":"m1"}}`), 1},
		{"SubscribeToTask", notify("SubscribeToTask", `{"id":"v10"}`), 0},
		{"unknown task", notify("GetTask", `{"id":"nope"}`), 0},
		{"unknown method", notify("tasks/frobnicate", `{}`), 0},
		{"invalid params", notify("SendMessage", `{"message":{"parts":[{}]}}`), 0},
		{"params not an object", notify("GetTask", `[1]`), 0},
		{"no params", `{"jsonrpc":"2.0","method":"ListTasks"}`, 0},
		{"a field twice", notify("GetTask", `{"id":"v10","id":"v10"}`), 0},
		{"panic", notify("GetTask", `{"id":"panic"}`), 0},
	} {
		svc.mu.Lock()
		svc.sends = nil
		svc.mu.Unlock()
		req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || len(b) != 0 {
			t.Errorf("%s: status %d, body %q; want 204, no body", tc.name, resp.StatusCode, b)
		}
		svc.mu.Lock()
		sends := svc.sends
		svc.mu.Unlock()
		if len(sends) != tc.sends {
			t.Errorf("%s: %d sends, want %d", tc.name, len(sends), tc.sends)
		}
		for _, p := range sends {
			if p.Blocking {
				t.Errorf("%s: the send blocks, with no one to wait for it", tc.name)
			}
		}
	}

	// An envelope that is not a valid request gets its error, under a null id.
	for _, body := range []string{`{"jsonrpc":"1.0","method":"GetTask"}`, `{"method":"GetTask"}`, `{"jsonrpc":"2.0","method":7}`} {
		status, raw, r := post(t, app, body, nil)
		if status != http.StatusOK || r.Error == nil || r.Error.Code != CodeInvalidRequest || string(r.ID) != "null" {
			t.Errorf("%s: status %d, %s; want -32600 under a null id", body, status, raw)
		}
	}
	// "id": null is a request: it is answered, under that null id.
	status, raw, r := post(t, app, `{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"v10"}}`, nil)
	if status != http.StatusOK || r.Error != nil || string(r.ID) != "null" || !strings.Contains(raw, `"id":"v10"`) {
		t.Errorf("id null: status %d, %s; want the task under a null id", status, raw)
	}
}
