package app

import (
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2arelay/relay/internal/a2a/grpcbind"
)

// A call whose metadata passes grpcbind.MaxHeaderBytes is refused before
// any handler runs (grpc-go's own bound is 16 MiB); metadata within it
// reaches the service.
func TestGRPCMetadataIsBounded(t *testing.T) {
	t.Parallel()
	r := startRelay(t, withGRPC)
	c := grpcClient(t, r)
	for _, tc := range []struct {
		size    int
		refused bool
	}{{1 << 10, false}, {grpcbind.MaxHeaderBytes + 1<<10, true}} {
		ctx := metadata.AppendToOutgoingContext(bearer(""), "x-pad", strings.Repeat("a", tc.size))
		_, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Id: "no-such-task"})
		if got := status.Code(err); (got != codes.NotFound) != tc.refused {
			t.Errorf("%d bytes of metadata: %v, refused %v", tc.size, err, tc.refused)
		}
	}
}
