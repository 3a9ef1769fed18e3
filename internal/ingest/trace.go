package ingest

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2arelay/relay/internal/telemetry"
)

// fieldTrace is the task-hash field that keeps the traceparent of the
// commit that started the task's latest turn (a client's message, or the
// task's creation), when tracing is on: the agent that claims the turn
// starts its spans under it, so that a turn is one trace whichever relay
// runs it. Each event keeps its own commit's traceparent (taskstore's
// Commit.TraceParent), which its deliveries follow.
const fieldTrace = "tp"

// startCommit starts the span of a commit of taskID (tracing off: ctx and
// a span that records nothing, without allocating).
func (c *Committer) startCommit(ctx context.Context, taskID string) (context.Context, trace.Span) {
	ctx, span := c.tracer.Start(ctx, "commit", trace.SpanKindInternal)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("relay.task_id", taskID))
	}
	return ctx, span
}

// endSpan ends span, marking it failed when err is not nil.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startTurn starts a span of an agent's work on a task turn whose stored
// traceparent is tp (telemetry.Tracer.StartIn), naming the task.
func startTurn(t *telemetry.Tracer, ctx context.Context, tp, name, taskID string) (context.Context, trace.Span) {
	ctx, span := t.StartIn(ctx, tp, name, trace.SpanKindConsumer)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("relay.task_id", taskID))
	}
	return ctx, span
}
