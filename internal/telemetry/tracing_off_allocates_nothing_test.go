package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// With tracing off (a nil *Tracer), what the hot paths call for every
// request, commit and delivery attempt allocates nothing.
func TestTracingOffAllocatesNothing(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		c, span := tr.Start(ctx, "commit", trace.SpanKindInternal)
		Rename(c, "a2a ", "SendMessage")
		c2, s2 := tr.StartIn(c, TraceParent(c), "agent claim", trace.SpanKindConsumer)
		c3, s3 := tr.StartUnder(c2, "", "webhook attempt", trace.SpanKindClient)
		if TraceParent(c3) != "" || span.IsRecording() || s2.IsRecording() || s3.IsRecording() {
			t.Fatal("a span records with tracing off")
		}
		s3.End()
		s2.End()
		span.End()
	})
	if allocs != 0 {
		t.Fatalf("tracing off allocates %v times per request", allocs)
	}
}

// Tracing is on only when an OTLP endpoint is set, and neither the SDK nor
// the traces exporter is turned off.
func TestTracingIsOnOnlyWithAnOTLPEndpoint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "otlp"}, true},
	} {
		if got := Enabled(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("Enabled(%v) = %v, want %v", tt.env, got, tt.want)
		}
	}
	tr, err := New(context.Background(), Config{Getenv: func(string) string { return "" }})
	if tr != nil || err != nil {
		t.Fatalf("New without OTEL variables = %v, %v; want nil, nil", tr, err)
	}
}

// A traceparent is continued: spans started under it are in its trace.
func TestATraceparentIsContinued(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if got := TraceParent(Continue(context.Background(), tp)); got != tp {
		t.Fatalf("TraceParent(Continue(tp)) = %q", got)
	}
	if got := TraceID(tp); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("TraceID = %q", got)
	}
	for _, bad := range []string{"", "00-zz-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if got := TraceParent(Continue(context.Background(), bad)); got != "" {
			t.Fatalf("malformed %q continued as %q", bad, got)
		}
	}
}
