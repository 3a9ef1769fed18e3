package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/config"
)

// Shutdown stops both bindings at once: while a gRPC call under way (a
// blocking send) drains, the HTTP listener is closed too, where HTTP took
// new requests until every gRPC call had ended, and then had only what
// was left of the shutdown's time for its own.
func TestHTTPStopsTakingRequestsWhileGRPCCallsDrain(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.BlockingTimeout = 10 * time.Minute
	})
	c := grpcClient(t, r)
	callCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan error, 1)
	go func() {
		_, err := c.SendMessage(callCtx, &a2apb.SendMessageRequest{Message: pbMessage(t, "held", map[string]any{"steps": 1, "delayMs": 60000})})
		sent <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for { // the blocking send has created its task, and waits
		l, err := c.ListTasks(context.Background(), &a2apb.ListTasksRequest{})
		if err == nil && len(l.GetTasks()) > 0 {
			break
		}
		select {
		case err := <-sent:
			t.Fatalf("the blocking send returned: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the blocking send did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { defer close(stopped); r.stop() }()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	url := r.url + "/healthz"
	closed := false
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := hc.Get(url)
		if err != nil {
			closed = true
			break
		}
		_ = resp.Body.Close()
	}
	cancel() // the gRPC call ends: the shutdown can finish
	<-sent
	<-stopped
	if !closed {
		t.Fatal("HTTP took new requests all the while a gRPC call drained at shutdown")
	}
}
