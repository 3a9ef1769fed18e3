package app

import (
	"context"
	"encoding/hex"
	"net"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// grpcCollector is an OTLP/gRPC trace receiver on loopback.
type grpcCollector struct {
	coltrace.UnimplementedTraceServiceServer
	mu     sync.Mutex
	traces map[string][]string // span names by trace id
}

func (g *grpcCollector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				id := hex.EncodeToString(s.TraceId)
				g.traces[id] = append(g.traces[id], s.Name)
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc the spans go to an OTLP/gRPC
// collector. (Not parallel: the SDK's exporter reads the process
// environment.)
func TestTracesAreExportedOverOTLPGRPCToo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{traces: map[string][]string{}}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, col)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	s := newSink(t)
	r := deliveringRelay(t, nil)
	sendTraced(t, r, s, "/g")
	r.stop()
	col.mu.Lock()
	defer col.mu.Unlock()
	names := map[string]bool{}
	for _, n := range col.traces[clientTraceID] {
		names[n] = true
	}
	if !names["a2a SendMessage"] || !names["webhook attempt"] {
		t.Fatalf("the collector got %v in the client's trace, want the request and the attempts", col.traces[clientTraceID])
	}
}
