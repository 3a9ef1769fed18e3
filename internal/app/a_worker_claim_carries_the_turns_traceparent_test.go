package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/workerapi"
	"github.com/a2arelay/relay/worker"
)

// With tracing on, a worker's claim answers with the traceparent of the
// claim's span, in the trace the client's request started; a worker that
// sends it back on its posts has its events' commits and their deliveries
// in that trace too. (Not parallel: the SDK's exporter reads the process
// environment.)
func TestAWorkerClaimCarriesTheTurnsTraceparent(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL)
	s := newSink(t)
	r := startWorkerRelay(t, nil)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message": v10Message("work, traced", nil),
		"configuration": map[string]any{"returnImmediately": true,
			"taskPushNotificationConfig": map[string]any{"url": s.url("/w")}}}})
	if res := r.post(string(body), "A2A-Version", "1.0", "traceparent", clientTP); res.Error != nil {
		t.Fatalf("SendMessage: %+v", res.Error)
	}

	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/queues/jobs/claim", strings.NewReader(`{"waitSeconds":10}`))
	req.Header.Set("Authorization", "Bearer "+testWorkerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	tp := resp.Header.Get(workerapi.HeaderTraceParent)
	if resp.StatusCode != http.StatusOK || traceOf(tp) != clientTraceID {
		t.Fatalf("claim: %d, traceparent %q, want one of trace %s", resp.StatusCode, tp, clientTraceID)
	}
	if st, out := workerCall(t, r, "/v1/tasks/"+c["taskId"].(string)+"/events", testWorkerToken,
		map[string]any{"leaseId": c["leaseId"], "events": []any{statusEvent("TASK_STATE_WORKING", "on it"), statusEvent("TASK_STATE_COMPLETED", "done")}},
		"traceparent", tp); st != http.StatusOK {
		t.Fatalf("post: %d %v", st, out)
	}
	for _, h := range s.waitHits(t, "/w", 3, 15*time.Second) {
		if traceOf(h.header.Get("traceparent")) != clientTraceID {
			t.Fatalf("webhook traceparent %q, want one of trace %s", h.header.Get("traceparent"), clientTraceID)
		}
	}
	r.stop()
	claimed := false
	for _, sp := range col.all() {
		claimed = claimed || (sp.name == "agent claim" && sp.traceID == clientTraceID && sp.spanID == strings.Split(tp, "-")[2])
	}
	if !claimed {
		t.Fatalf("the claim's traceparent %s names no exported claim span of the client's trace", tp)
	}
}

// traceOf is the trace id of traceparent tp ("" when tp is not one).
func traceOf(tp string) string {
	if f := strings.Split(tp, "-"); len(f) == 4 {
		return f[1]
	}
	return ""
}

// The public worker package keeps the claim's traceparent (Job.TraceParent)
// and sends it back on the job's posts: the deliveries of what the worker
// posts are in the client's trace. (Not parallel: see above.)
func TestTheWorkerPackageKeepsAJobInTheTurnsTrace(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL)
	s := newSink(t)
	r := startWorkerRelay(t, nil)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message": v10Message("work, traced", nil),
		"configuration": map[string]any{"returnImmediately": true,
			"taskPushNotificationConfig": map[string]any{"url": s.url("/pkg")}}}})
	if res := r.post(string(body), "A2A-Version", "1.0", "traceparent", clientTP); res.Error != nil {
		t.Fatalf("SendMessage: %+v", res.Error)
	}
	ctx := context.Background()
	w := &worker.Client{BaseURL: r.url, Token: testWorkerToken, Queue: "jobs", WorkerID: "traced"}
	j, err := w.Claim(ctx, 10*time.Second)
	if err != nil || j == nil || traceOf(j.TraceParent) != clientTraceID {
		t.Fatalf("claim = %+v, %v; want a job in trace %s", j, err, clientTraceID)
	}
	if err := j.Status(ctx, worker.StateWorking, "on it"); err != nil {
		t.Fatal(err)
	}
	if err := j.Complete(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	for _, h := range s.waitHits(t, "/pkg", 3, 15*time.Second) {
		if traceOf(h.header.Get("traceparent")) != clientTraceID {
			t.Fatalf("webhook traceparent %q, want one of trace %s", h.header.Get("traceparent"), clientTraceID)
		}
	}
}
