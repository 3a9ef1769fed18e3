package grpcbind

import (
	"context"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2arelay/relay/internal/a2a"
)

// refuseAll is a Guard that admits no call.
type refuseAll struct{}

func (refuseAll) Admit(ctx context.Context, _ string, _ func(string) string) (context.Context, error) {
	return ctx, a2a.Errorf(a2a.KindUnauthenticated, "no")
}

// Only health and reflection are open: an A2A method named without its
// leading slash (which grpc-go routes to the service when its strict path
// checking is off) or any other name passes the Guard.
func TestEveryMethodButHealthAndReflectionIsGuarded(t *testing.T) {
	t.Parallel()
	g := &guard{guard: refuseAll{}, log: slog.New(slog.DiscardHandler)}
	for _, m := range []string{"/" + Service + "/GetTask", Service + "/GetTask", "/lf.a2a.v1.A2AService//GetTask",
		"/other.Service/Call", "/grpc.health.v1.HealthX/Check", ""} {
		if _, err := g.admit(context.Background(), m); status.Code(err) != codes.Unauthenticated {
			t.Errorf("method %q: %v, want Unauthenticated", m, err)
		}
	}
	for _, m := range []string{"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"} {
		if _, err := g.admit(context.Background(), m); err != nil {
			t.Errorf("open method %q: %v", m, err)
		}
	}
}

// A call that panics ends with Internal, as an HTTP request that panics
// does: grpc-go itself does not recover, and the process would end.
func TestAGRPCCallThatPanicsEndsInternal(t *testing.T) {
	t.Parallel()
	g := &guard{log: slog.New(slog.DiscardHandler)}
	_, err := g.unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/" + Service + "/GetTask"},
		func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Fatalf("unary call that panics: %v, want Internal", err)
	}
	err = g.stream(nil, fakeStream{}, &grpc.StreamServerInfo{FullMethod: "/" + Service + "/SubscribeToTask"},
		func(any, grpc.ServerStream) error { panic("boom") })
	if status.Code(err) != codes.Internal {
		t.Fatalf("streaming call that panics: %v, want Internal", err)
	}
}

type fakeStream struct{ grpc.ServerStream }

func (fakeStream) Context() context.Context { return context.Background() }
