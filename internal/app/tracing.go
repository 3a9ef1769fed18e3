package app

import (
	"context"
	"os"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2arelay/relay/internal/telemetry"
)

// startTracing builds the tracer the OTEL_* variables of the process
// environment ask for (nil: off). The SDK's exporter reads them too.
func (a *App) startTracing(ctx context.Context) error {
	t, err := telemetry.New(ctx, telemetry.Config{Version: a.version, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	a.tracer = t
	if t != nil {
		a.log.InfoContext(ctx, "tracing: spans are exported over OTLP")
	}
	return nil
}

// stopTracing exports the spans still buffered.
func (a *App) stopTracing(ctx context.Context) error {
	err := a.tracer.Shutdown(ctx)
	a.tracer = nil
	return err
}

// untraced are the paths whose requests get no span (probes, metrics and
// the operator page's files).
func untraced(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return len(path) >= 3 && path[:3] == "/ui"
}

// traceRequests starts the span of each HTTP request (its A2A binding
// names it by method), continuing the client's W3C traceparent. Off, it
// only passes the request on.
func (a *App) traceRequests(c *fiber.Ctx) error {
	if a.tracer == nil || untraced(c.Path()) {
		return c.Next()
	}
	ctx := telemetry.Continue(c.UserContext(), c.Get(telemetry.Header))
	ctx, span := a.tracer.Start(ctx, "HTTP "+c.Method(), trace.SpanKindServer)
	defer span.End()
	c.SetUserContext(ctx)
	err := c.Next()
	span.SetAttributes(attribute.String("http.request.method", c.Method()), attribute.String("http.route", c.Route().Path),
		attribute.Int("http.response.status_code", c.Response().StatusCode()))
	return err
}
