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

// panickyStreamer opens streams normally and panics when asked for events
// (or, for the task id "open-panic", when opening).
type panickyStreamer struct{}

func (panickyStreamer) Acquire(context.Context) (func(), error) { return func() {}, nil }

func (panickyStreamer) Current(_ context.Context, id string) (a2a.TaskView, error) {
	if id == "open-panic" {
		panic("boom while opening")
	}
	return a2a.TaskView{Task: fakeTask(id), Dialect: a2a.V10, EventID: "1-0"}, nil
}

func (panickyStreamer) Next(context.Context, string, string, time.Duration) ([]a2a.StreamEvent, error) {
	panic("boom mid-stream")
}

// A panic while a stream runs ends that stream with a -32603 event and
// leaves the server serving; one while opening is an ordinary -32603.
func TestStreamPanicsAreContained(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	h := newHandler(fakeService{}, nil, panickyStreamer{}, a2a.StreamConfig{Poll: time.Millisecond}, nil)
	app.Post("/a2a", h.Serve)
	stream := func(id string) string {
		req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(rpcBody("5", "SubscribeToTask", `{"id":"`+id+`"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := app.Test(req, 5000)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	body := stream("t-1")
	if !strings.Contains(body, `"task"`) || !strings.Contains(body, `"code":-32603`) || strings.Contains(body, "boom") {
		t.Fatalf("stream body %q: want the task, then a -32603 event without the panic text", body)
	}
	if body := stream("open-panic"); !strings.Contains(body, `"code":-32603`) || strings.Contains(body, "boom") {
		t.Fatalf("open panic: %q", body)
	}
	// The server still answers.
	if status, _, r := post(t, app, rpcBody("6", "GetTask", `{"id":"v10"}`), map[string]string{"A2A-Version": "1.0"}); status != 200 || r.Error != nil {
		t.Fatalf("after the panics: %d %+v", status, r.Error)
	}
}
