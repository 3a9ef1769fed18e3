package jsonrpc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"

	"github.com/gofiber/fiber/v2"
)

// What a decoder could read only by guessing is refused with the request's
// id: a jsonrpc version that is not the string "2.0", bytes that are not
// UTF-8 (or escapes of lone surrogates) that decoding would replace with
// U+FFFD, and metadata that is not an object, in every dialect.
func TestStrictRequestDecoding(t *testing.T) {
	t.Parallel()
	const (
		v03msg = `{"role":"user","parts":[{"kind":"text","text":"hi"}],"messageId":"m1"}`
		v10msg = `{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m1"}`
	)
	tests := []struct {
		name    string
		body    string
		version string // A2A-Version header
		code    int    // 0: a result
		id      string
	}{
		{"jsonrpc as a number", `{"jsonrpc":2.0,"id":7,"method":"tasks/get","params":{"id":"v03"}}`, "", CodeInvalidRequest, `7`},
		{"jsonrpc as a number, string id", `{"jsonrpc":2,"id":"a","method":"tasks/get","params":{"id":"v03"}}`, "", CodeInvalidRequest, `"a"`},
		{"jsonrpc as an object", `{"jsonrpc":{},"id":7,"method":"tasks/get","params":{"id":"v03"}}`, "", CodeInvalidRequest, `7`},
		{"jsonrpc escaped", `{"jsonrpc":"2\u002e0","id":7,"method":"tasks/get","params":{"id":"v03"}}`, "", 0, `7`},

		{"invalid UTF-8 in text", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"message/send\",\"params\":{\"message\":{\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"a\xff\xfeb\"}],\"messageId\":\"m1\"}}}", "", CodeParseError, `null`},
		{"overlong UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tasks/get\",\"params\":{\"id\":\"\xc0\xaf\"}}", "", CodeParseError, `null`},
		{"lone high surrogate", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":"v03\ud800"}}`, "", CodeParseError, `null`},
		{"lone low surrogate", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":"\udc00v03"}}`, "", CodeParseError, `null`},
		{"high surrogate then a letter", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":"\ud800\u0041"}}`, "", CodeParseError, `null`},
		{"surrogate pair", `{"jsonrpc":"2.0","id":8,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"\ud83d\ude00 \\ud800"}],"messageId":"m1"}}}`, "", 0, `8`},
		{"UTF-8 text", `{"jsonrpc":"2.0","id":8,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"héllo 😀"}],"messageId":"m1"}}}`, "", 0, `8`},

		{"v0.3 metadata string", rpcBody("9", "message/send", `{"message":`+v03msg+`,"metadata":"x"}`), "", CodeInvalidParams, `9`},
		{"v0.3 metadata array", rpcBody("9", "message/send", `{"message":`+v03msg+`,"metadata":[1]}`), "", CodeInvalidParams, `9`},
		{"v0.3 message metadata", rpcBody("9", "message/send", `{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}],"messageId":"m1","metadata":5}}`), "", CodeInvalidParams, `9`},
		{"v0.3 part metadata", rpcBody("9", "message/send", `{"message":{"role":"user","parts":[{"kind":"text","text":"hi","metadata":true}],"messageId":"m1"}}`), "", CodeInvalidParams, `9`},
		{"v0.3 metadata object", rpcBody("9", "message/send", `{"message":`+v03msg+`,"metadata":{"a":1}}`), "", 0, `9`},
		{"v0.3 metadata null", rpcBody("9", "message/send", `{"message":`+v03msg+`,"metadata":null}`), "", 0, `9`},
		{"v1.0 metadata string", rpcBody("9", "SendMessage", `{"message":`+v10msg+`,"metadata":"x"}`), "1.0", CodeInvalidParams, `9`},
		{"v1.0 message metadata", rpcBody("9", "SendMessage", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m1","metadata":[]}}`), "1.0", CodeInvalidParams, `9`},
		{"v1.0 metadata object", rpcBody("9", "SendMessage", `{"message":`+v10msg+`,"metadata":{}}`), "1.0", 0, `9`},
		{"v0.1 metadata number", rpcBody("9", "tasks/send", `{"id":"t1","message":{"role":"user","parts":[{"type":"text","text":"hi"}]},"metadata":1}`), "", CodeInvalidParams, `9`},
		{"v0.1 message metadata", rpcBody("9", "tasks/send", `{"id":"t1","message":{"role":"user","parts":[{"type":"text","text":"hi"}],"metadata":"x"}}`), "", CodeInvalidParams, `9`},
		{"v0.1 part metadata", rpcBody("9", "tasks/send", `{"id":"t1","message":{"role":"user","parts":[{"type":"text","text":"hi","metadata":"x"}]}}`), "", CodeInvalidParams, `9`},
	}
	app := newTestApp(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			if tt.version != "" {
				h["A2A-Version"] = tt.version
			}
			status, raw, r := post(t, app, tt.body, h)
			if status != http.StatusOK || string(r.ID) != tt.id {
				t.Errorf("status %d, id %s; want 200, id %s (%s)", status, r.ID, tt.id, raw)
			}
			switch {
			case tt.code == 0 && r.Error != nil:
				t.Errorf("error %d %q, want a result", r.Error.Code, r.Error.Message)
			case tt.code != 0 && (r.Error == nil || r.Error.Code != tt.code):
				t.Errorf("answer %s, want error %d", raw, tt.code)
			}
		})
	}
}

// limitStreamer refuses every stream with a limit of scope.
type limitStreamer struct{ scope a2a.LimitScope }

func (s limitStreamer) Acquire(context.Context) (func(), error) {
	return nil, &a2a.LimitError{Scope: s.scope, Message: "too many open streams", RetryAfter: 1500 * time.Millisecond}
}
func (limitStreamer) Current(_ context.Context, id string) (a2a.TaskView, error) {
	return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
}
func (limitStreamer) Next(context.Context, string, string, time.Duration) ([]a2a.StreamEvent, error) {
	return nil, nil
}

// A stream refused by a limit is the JSON-RPC error CodeLimited with the
// HTTP status of whose limit it is and a Retry-After, whether the client
// accepts JSON or only an event stream.
func TestStreamLimitRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		scope  a2a.LimitScope
		accept string
		status int
	}{
		{"client limit", a2a.LimitClient, "application/json", http.StatusTooManyRequests},
		{"instance limit", a2a.LimitInstance, "application/json", http.StatusServiceUnavailable},
		{"client limit, SSE only", a2a.LimitClient, "text/event-stream", http.StatusTooManyRequests},
		{"instance limit, SSE only", a2a.LimitInstance, "text/event-stream", http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := fiber.New()
			h := newHandler(fakeService{}, nil, limitStreamer{tt.scope}, a2a.StreamConfig{Poll: time.Millisecond}, nil)
			app.Post("/a2a", h.Serve)
			req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(rpcBody(`"s1"`, "SubscribeToTask", `{"id":"v10"}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tt.accept)
			req.Header.Set("A2A-Version", "1.0")
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			body := string(raw)
			if resp.StatusCode != tt.status || resp.Header.Get("Retry-After") != "2" {
				t.Errorf("status %d, Retry-After %q; want %d, 2 (%s)", resp.StatusCode, resp.Header.Get("Retry-After"), tt.status, body)
			}
			if !strings.Contains(body, `"id":"s1"`) || !strings.Contains(body, `"code":-32029`) || !strings.Contains(body, "too many open streams") {
				t.Errorf("body %s: want error -32029 with the request id and the message", body)
			}
		})
	}
}
