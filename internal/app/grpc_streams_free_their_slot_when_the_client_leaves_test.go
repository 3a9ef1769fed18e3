package app

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/config"
)

// A gRPC stream holds one of its client's stream slots while it runs: a
// second is refused with ResourceExhausted, and once the client cancels
// the first, its slot is free again long before the next keep-alive would
// have shown the client gone.
func TestGRPCStreamsFreeTheirSlotWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) {
		withGRPC(c)
		c.Security.MaxStreamsPerClient = 1
		c.StreamKeepAlive = 10 * time.Minute
	})
	c := grpcClient(t, r)
	long := map[string]any{"steps": 3, "delayMs": 60000} // quiet: no event would show the client gone
	ctx, leave := context.WithCancel(bearer(aliceKey))
	defer leave()
	first, err := c.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "long one", long)})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := first.Recv()
	if err != nil {
		t.Fatal(err)
	}
	task := ev.GetTask().GetId()
	second, err := c.SubscribeToTask(bearer(aliceKey), &a2apb.SubscribeToTaskRequest{Id: task})
	if err == nil {
		_, err = second.Recv()
	}
	wantGRPCError(t, err, codes.ResourceExhausted, "")

	leave()
	deadline := time.Now().Add(30 * time.Second) // the keep-alive is 10 minutes away
	for {
		sctx, stop := context.WithCancel(bearer(aliceKey))
		s, err := c.SubscribeToTask(sctx, &a2apb.SubscribeToTaskRequest{Id: task})
		if err == nil {
			_, err = s.Recv()
		}
		stop()
		if err == nil {
			return
		}
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after the first client left: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
