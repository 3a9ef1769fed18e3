package delivery

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/a2arelay/relay/internal/a2a"
)

// BenchmarkPost is one POST of a notification of the default bench's kind
// to a webhook that answers 204 at once (a fasthttp server, which
// allocates next to nothing): the headers, the JWT's signing and the
// request, as an attempt makes them.
func BenchmarkPost(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) { c.SetStatusCode(fasthttp.StatusNoContent) }}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	w := clientWorkers(b)
	cfg := a2a.PushConfig{ID: "c1", TaskID: "00dd7b97-a3eb-45df-9367-249195a088f2", URL: "http://" + ln.Addr().String() + "/hook", Token: "tok"}
	n := a2a.Notification{Body: []byte(`{"statusUpdate":{"taskId":"00dd7b97-a3eb-45df-9367-249195a088f2",` +
		`"contextId":"93e9067c-6109-4b21-a4cf-af7df77e1b94","status":{"state":"TASK_STATE_WORKING",` +
		`"timestamp":"2026-11-23T19:32:59.294Z","message":{"messageId":"m-1","role":"ROLE_AGENT","parts":[{"text":"step 1"}]}}}}`),
		ContentType: "application/a2a+json", Version: "1.0"}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var a Attempt
		if r := w.post(ctx, cfg, n, "10.82c3394f12de11dea5d662f196e30107", &a); r.err != nil || r.status != fasthttp.StatusNoContent {
			b.Fatalf("post: %d, %v", r.status, r.err)
		}
		cancel()
	}
}
