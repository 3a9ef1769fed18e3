// Package telemetry is relay's tracing: an OpenTelemetry tracer that
// exports over OTLP when the standard OTEL_EXPORTER_OTLP_* variables ask for
// it, and is nil (costing nothing) otherwise, plus the W3C trace-context
// helpers by which one task turn stays one trace across the places relay
// hands work on: the A2A request, the commit, the agent that claims the
// turn, and each delivery attempt, which run in other goroutines or on
// other relays and meet the turn's trace only through the traceparent
// stored with it.
//
// It owns the OpenTelemetry wiring and nothing else: which spans exist is
// decided by the packages that start them, through a *Tracer they are
// given (nil: tracing is off).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Header is the W3C trace-context header that carries a traceparent.
const Header = "traceparent"

// Config says what a Tracer reports itself as, and where its settings come
// from.
type Config struct {
	// Service is the default service.name (default "relay");
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
	Service string
	// Version is service.version ("": not set).
	Version string
	// Getenv reads the environment (default: none is set, so tracing is
	// off). The SDK's exporters read the OTEL_* variables themselves from
	// the process environment; Getenv decides only whether to build them.
	Getenv func(string) string
}

// Tracer starts relay's spans and exports them. A nil *Tracer is valid:
// tracing is off, and every method returns at once without allocating.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// Enabled reports whether the OTEL_* variables read by get ask for OTLP
// export of traces: an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), the SDK is not disabled
// (OTEL_SDK_DISABLED=true) and the traces exporter is not turned off
// (OTEL_TRACES_EXPORTER=none, or any exporter but otlp).
func Enabled(get func(string) string) bool {
	if get == nil {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(get("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(get("OTEL_TRACES_EXPORTER")); e != "" && !strings.EqualFold(e, "otlp") {
		return false
	}
	return get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// New returns the Tracer the environment asks for: nil (off) unless
// Enabled, else one that batches spans to the OTLP exporter of the
// configured protocol (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the default, or grpc).
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	if !Enabled(cfg.Getenv) {
		return nil, nil
	}
	exp, err := exporter(ctx, cfg.Getenv)
	if err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", cfgService(cfg))}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	// The environment's attributes come last, so that they win.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("telemetry: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	// The sampler is the SDK's (parent-based, always on), or what
	// OTEL_TRACES_SAMPLER says; the batcher reads OTEL_BSP_*.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/a2arelay/relay")}, nil
}

func cfgService(cfg Config) string {
	if cfg.Service != "" {
		return cfg.Service
	}
	return "relay"
}

// exporter builds the OTLP span exporter of the configured protocol.
func exporter(ctx context.Context, get func(string) string) (sdktrace.SpanExporter, error) {
	proto := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch strings.TrimSpace(proto) {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported (http/protobuf or grpc)", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	return exp, nil
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}

// noSpan is what Start returns when tracing is off: a span that records
// nothing (trace's own no-op span, a value without state).
var noSpan = trace.SpanFromContext(context.Background())

// Start starts a span named name of the given kind, a child of the span
// in ctx. Off (nil t), it returns ctx and a span that records nothing,
// without allocating.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind))
}

// StartUnder is Start with the span a child of the traceparent tp (the
// turn's, stored with the task) when ctx holds no span of its own; an
// empty or malformed tp starts a new trace.
func (t *Tracer) StartUnder(ctx context.Context, tp, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = Continue(ctx, tp)
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind))
}

// Continue returns ctx with the remote span context of traceparent tp, so
// that spans started from it join tp's trace; ctx as it is when tp is
// empty or malformed.
func Continue(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	c := carrier(tp)
	return propagation.TraceContext{}.Extract(ctx, &c)
}

// TraceParent is the W3C traceparent of the span in ctx ("" when ctx holds
// no valid span context, as when tracing is off).
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	var c carrier
	propagation.TraceContext{}.Inject(ctx, &c)
	return string(c)
}

// TraceID is the hex trace id of traceparent tp ("" when tp is not one).
func TraceID(tp string) string {
	sc := trace.SpanContextFromContext(Continue(context.Background(), tp))
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// carrier is a propagation.TextMapCarrier holding the traceparent alone
// (relay carries no tracestate or baggage across its hand-offs).
type carrier string

func (c *carrier) Get(key string) string {
	if key == Header {
		return string(*c)
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	if key == Header {
		*c = carrier(value)
	}
}

func (c *carrier) Keys() []string { return []string{Header} }

// Rename names the span in ctx prefix+name, when it records (the binding
// learns the A2A method after the request's span started). Off, it does
// nothing and allocates nothing.
func Rename(ctx context.Context, prefix, name string) {
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.SetName(prefix + name)
	}
}

// StartIn starts a span in the trace of traceparent tp (a task turn's,
// stored with the task): a child of tp, linked to the span ctx holds when
// that one is of another trace (a worker's own request). With tp empty or
// malformed it is Start.
func (t *Tracer) StartIn(ctx context.Context, tp, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	caller := trace.SpanContextFromContext(ctx)
	ctx, span := t.tracer.Start(Continue(ctx, tp), name, trace.WithSpanKind(kind))
	if caller.IsValid() && caller.TraceID() != span.SpanContext().TraceID() {
		span.AddLink(trace.Link{SpanContext: caller})
	}
	return ctx, span
}
