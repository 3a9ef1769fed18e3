package jsonrpc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"

	"github.com/gofiber/fiber/v2"
)

// refusingStreamer refuses every stream, as ingest.Streams does when the
// instance or the client is at its stream limit.
type refusingStreamer struct{}

func (refusingStreamer) Acquire(context.Context) (func(), error) {
	return nil, a2a.Errorf(CodeInternal, "too many open streams")
}
func (refusingStreamer) Current(_ context.Context, id string) (a2a.TaskView, error) {
	return a2a.TaskView{}, a2a.ErrTaskNotFound(id)
}
func (refusingStreamer) Next(context.Context, string, string, time.Duration) ([]a2a.StreamEvent, error) {
	return nil, nil
}

// Serve reports a streaming method (SubscribeToTask, message/stream,
// tasks/resubscribe) with code 0 before the stream is opened, so one that is
// refused (task not found, stream limit, bad params) is counted as
// relay_a2a_requests_total{outcome="ok"} although the client got an error.
func TestRefusedStreamCountedAsOK(t *testing.T) {
	app := fiber.New()
	var mu sync.Mutex
	var codes []int
	h := newHandler(fakeService{}, nil, refusingStreamer{}, a2a.StreamConfig{Poll: time.Millisecond},
		func(_ string, _ a2a.Dialect, code int) { mu.Lock(); codes = append(codes, code); mu.Unlock() })
	app.Post("/a2a", h.Serve)
	req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(rpcBody("5", "SubscribeToTask", `{"id":"missing"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := app.Test(req, 5000)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"error"`) {
		t.Fatalf("want an error answer, got %s", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(codes) != 1 || codes[0] == 0 {
		t.Fatalf("reported codes %v for a refused stream (answer %s): want one non-zero JSON-RPC code", codes, b)
	}
}
