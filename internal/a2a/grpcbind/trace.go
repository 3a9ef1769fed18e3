package grpcbind

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2arelay/relay/internal/telemetry"
)

// tracing starts the span of each call, continuing the W3C traceparent of
// the call's metadata. It runs before the guard, so that a refused call is
// traced too.
type tracing struct{ t *telemetry.Tracer }

// start starts the span of a call to method.
func (tr tracing) start(ctx context.Context, method string) (context.Context, trace.Span) {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(telemetry.Header); len(v) == 1 {
			ctx = telemetry.Continue(ctx, v[0])
		}
	}
	ctx, span := tr.t.Start(ctx, "a2a "+method, trace.SpanKindServer)
	span.SetAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.method", method))
	return ctx, span
}

// end ends span with the call's outcome.
func end(span trace.Span, err error) {
	span.SetAttributes(attribute.Int("rpc.grpc.status_code", int(status.Code(err))))
	span.End()
}

// untraced are the methods of the health and reflection services.
func untraced(method string) bool { return strings.HasPrefix(method, "/grpc.") }

func (tr tracing) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (_ any, err error) {
	if untraced(info.FullMethod) {
		return next(ctx, req)
	}
	ctx, span := tr.start(ctx, info.FullMethod)
	defer func() { end(span, err) }()
	return next(ctx, req)
}

func (tr tracing) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
	if untraced(info.FullMethod) {
		return next(srv, ss)
	}
	ctx, span := tr.start(ss.Context(), info.FullMethod)
	defer func() { end(span, err) }()
	return next(srv, &admitted{ServerStream: ss, ctx: ctx})
}
