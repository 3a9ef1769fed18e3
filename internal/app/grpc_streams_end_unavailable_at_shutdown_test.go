package app

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// Shutdown ends the open gRPC streams and stops the server gracefully; a
// stream cut short ends with Unavailable (subscribe again), never with
// the clean end that means the task is over.
func TestGRPCStreamsEndUnavailableAtShutdown(t *testing.T) {
	t.Parallel()
	r := startRelay(t, withGRPC)
	c := grpcClient(t, r)
	s, err := c.SendStreamingMessage(context.Background(), &a2apb.SendMessageRequest{
		Message: pbMessage(t, "quiet", map[string]any{"steps": 3, "delayMs": 60000})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				ended <- err
				return
			}
		}
	}()
	r.stop() // fails the test if Shutdown fails
	err = <-ended
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "subscribe to the task again") {
		t.Fatalf("the stream ended with %v; want Unavailable, subscribe again", err)
	}
}
