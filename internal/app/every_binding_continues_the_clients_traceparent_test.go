package app

import (
	"net/http"
	"testing"

	"google.golang.org/grpc/metadata"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// The request span of each binding continues the client's W3C
// traceparent (an HTTP header, or gRPC metadata), and the commit it makes
// is in that trace. (Not parallel: the SDK's exporter reads the process
// environment.)
func TestEveryBindingContinuesTheClientsTraceparent(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL)
	r := startRelay(t, withGRPC)
	const (
		restTrace = "11111111111111111111111111111111"
		grpcTrace = "22222222222222222222222222222222"
	)
	var sent struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("over rest", nil),
		"configuration": map[string]any{"returnImmediately": true}}, "traceparent", "00-"+restTrace+"-00f067aa0ba902b7-01"), &sent)
	ctx := metadata.AppendToOutgoingContext(bearer(""), "traceparent", "00-"+grpcTrace+"-00f067aa0ba902b7-01")
	if _, err := grpcClient(t, r).SendMessage(ctx, &a2apb.SendMessageRequest{Message: pbMessage(t, "over grpc", nil),
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true}}); err != nil {
		t.Fatal(err)
	}
	r.stop()
	names := map[string]map[string]bool{restTrace: {}, grpcTrace: {}}
	for _, sp := range col.all() {
		if names[sp.traceID] != nil {
			names[sp.traceID][sp.name] = true
		}
	}
	for trace, want := range map[string]string{restTrace: "a2a SendMessage", grpcTrace: "a2a /lf.a2a.v1.A2AService/SendMessage"} {
		if !names[trace][want] || !names[trace]["commit"] {
			t.Errorf("trace %s holds %v, want %q and its commit", trace, names[trace], want)
		}
	}
}
