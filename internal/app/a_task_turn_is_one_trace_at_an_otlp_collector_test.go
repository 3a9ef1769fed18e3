package app

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/telemetry"
)

// collector is an OTLP/HTTP trace receiver on loopback: it decodes each
// ExportTraceServiceRequest and keeps its spans.
type collector struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []span
}

// span is what the tests read of an exported span.
type span struct {
	name, traceID, spanID, parentID string
	links                           []string // linked trace ids
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := span{name: s.Name, traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
						parentID: hex.EncodeToString(s.ParentSpanId)}
					for _, l := range s.Links {
						sp.links = append(sp.links, hex.EncodeToString(l.TraceId))
					}
					c.spans = append(c.spans, sp)
				}
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) all() []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]span(nil), c.spans...)
}

// clientTraceID is the trace the client's request belongs to.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientTP      = "00-" + clientTraceID + "-00f067aa0ba902b7-01"
)

// sendTraced sends a v1.0 SendMessage to the demo agent with the client's
// traceparent, its notifications to the sink's path, and waits for the
// five of them.
func sendTraced(t *testing.T, r *relay, s *sink, path string) (taskID string, hits []hit) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message":       v10Message("trace me", nil),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": s.url(path)}}}})
	res := r.post(string(body), "A2A-Version", "1.0", "traceparent", clientTP)
	var out struct{ Task struct{ ID string } }
	if res.Error != nil || json.Unmarshal(res.Result, &out) != nil || out.Task.ID == "" {
		t.Fatalf("SendMessage: %+v %s", res.Error, res.Result)
	}
	return out.Task.ID, s.waitHits(t, path, 5, 15*time.Second)
}

// attemptTraceIDs are the trace ids the attempt logs of taskID's n
// deliveries record, once all n are delivered (a webhook may have its
// POST before relay has logged the attempt).
func attemptTraceIDs(t *testing.T, r *relay, taskID string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ids []string
		ds := listDeliveries(t, r, "task="+taskID)
		for _, d := range ds {
			if d.Status != "delivered" {
				break
			}
			st, _, body := get(t, r.url+"/v1/deliveries/"+d.ID)
			var rec struct{ AttemptLog []struct{ TraceID string } }
			if st != 200 || json.Unmarshal(body, &rec) != nil {
				t.Fatalf("delivery %s: %d %s", d.ID, st, body)
			}
			for _, a := range rec.AttemptLog {
				ids = append(ids, a.TraceID)
			}
		}
		if len(ds) == n && len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %d deliveries logged %d attempts, want %d delivered", taskID, len(ds), len(ids), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, one task turn is one trace, the
// client's: the request, its commit, the demo agent's claim, turn and
// commits, and every delivery attempt reach the collector in it; each
// webhook POST carries the traceparent of its attempt's span, and the
// attempt log records the trace id. (Not parallel: the SDK's exporter
// reads the process environment.)
func TestATaskTurnIsOneTraceAtAnOTLPCollector(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "relay-under-test")
	for _, path := range []string{"outbox", "lanes"} {
		t.Run(path, func(t *testing.T) {
			s := newSink(t)
			r := deliveringRelayOn(t, path, nil)
			taskID, hits := sendTraced(t, r, s, "/hook")
			for _, h := range hits {
				tp := h.header.Get("traceparent")
				if parts := strings.Split(tp, "-"); len(parts) != 4 || parts[1] != clientTraceID {
					t.Fatalf("webhook traceparent %q, want one of trace %s", tp, clientTraceID)
				}
			}
			for _, id := range attemptTraceIDs(t, r, taskID, len(hits)) {
				if id != clientTraceID {
					t.Fatalf("attempt log trace id %q, want %s", id, clientTraceID)
				}
			}
			r.stop() // exports what is buffered
			spans := col.all()
			names := map[string]int{}
			attempts := map[string]bool{}
			for _, sp := range spans {
				if sp.traceID != clientTraceID {
					continue
				}
				names[sp.name]++
				if sp.name == "webhook attempt" {
					attempts[sp.spanID] = true
				}
			}
			for _, want := range []string{"a2a SendMessage", "commit", "agent claim", "agent turn", "webhook attempt"} {
				if names[want] == 0 {
					t.Fatalf("no %q span in the client's trace; spans: %v", want, names)
				}
			}
			for _, h := range hits {
				if id := strings.Split(h.header.Get("traceparent"), "-")[2]; !attempts[id] {
					t.Fatalf("webhook traceparent names span %s, which is no exported attempt span", id)
				}
			}
		})
	}
}

// Without OTEL_* variables, relay traces nothing: a webhook gets no
// traceparent, even for a client that sent one, and the attempt log
// records no trace id.
func TestWithoutOTELVariablesNoTraceparentIsSent(t *testing.T) {
	t.Parallel()
	if telemetry.Enabled(os.Getenv) {
		t.Skip("the environment of this test run asks for tracing")
	}
	s := newSink(t)
	r := deliveringRelay(t, func(*config.Config) {})
	taskID, hits := sendTraced(t, r, s, "/quiet")
	for _, h := range hits {
		if tp := h.header.Get("traceparent"); tp != "" {
			t.Fatalf("webhook traceparent %q without tracing", tp)
		}
	}
	for _, id := range attemptTraceIDs(t, r, taskID, len(hits)) {
		if id != "" {
			t.Fatalf("attempt log trace id %q without tracing", id)
		}
	}
}
