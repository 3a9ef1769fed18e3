package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

// restResult is an HTTP+JSON answer: the status, the body, and the
// google.rpc.Status of an error.
type restResult struct {
	Status int
	Header http.Header
	Body   []byte
	Error  *struct {
		Code    int               `json:"code"`
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// rest sends method path with body (nil: none) and headers to relay's
// HTTP+JSON binding, as A2A 1.0 unless headers name another version.
func (r *relay) rest(method, path string, body any, headers ...string) restResult {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := restResult{Status: resp.StatusCode, Header: resp.Header}
	out.Body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(out.Body, &out); err != nil || out.Error == nil {
			r.t.Fatalf("%s %s: status %d, body %s is not a google.rpc.Status", method, path, resp.StatusCode, out.Body)
		}
	}
	return out
}

// wantRESTError checks an error answer's HTTP status, status name and, when
// reason is set, its google.rpc.ErrorInfo reason.
func wantRESTError(t *testing.T, res restResult, status int, name, reason string) {
	t.Helper()
	if res.Status != status || res.Error == nil || res.Error.Code != status || res.Error.Status != name {
		t.Fatalf("answer %d %s; want %d %s", res.Status, res.Body, status, name)
	}
	if reason == "" {
		return
	}
	for _, d := range res.Error.Details {
		var info struct{ Type, Reason, Domain string }
		if json.Unmarshal(d, &info) == nil && info.Reason == reason && info.Domain == "a2a-protocol.org" {
			return
		}
	}
	t.Fatalf("answer %s: want an ErrorInfo with reason %s", res.Body, reason)
}

func decodeREST(t *testing.T, res restResult, out any) {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if err := json.Unmarshal(res.Body, out); err != nil {
		t.Fatalf("decode %s: %v", res.Body, err)
	}
}

// The HTTP+JSON binding serves the operations of JSON-RPC on the same
// listener, with the same tasks: send, get (with historyLength), list with
// its query parameters, cancel, and the errors of spec §5.4 as
// google.rpc.Status bodies with their HTTP statuses.
func TestA2AOverHTTPJSON(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)

	var sent struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{
		"message":       v10Message("long", map[string]any{"metadata": demo(map[string]any{"steps": 100, "delayMs": 100}), "context_id": "ctx-rest"}),
		"configuration": map[string]any{"returnImmediately": true}}), &sent)
	id := sent.Task.ID
	if id == "" || sent.Task.ContextID != "ctx-rest" {
		t.Fatalf("send: %+v", sent.Task)
	}

	// The task is the one JSON-RPC sees.
	var viaRPC v10Task
	r.call("GetTask", map[string]any{"id": id}, &viaRPC)
	var got v10Task
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks/"+id+"?historyLength=0", nil), &got)
	if got.ID != id || viaRPC.ID != id || len(got.History) != 0 {
		t.Fatalf("GET /v1/tasks/%s: %+v (JSON-RPC: %+v)", id, got, viaRPC)
	}

	var list struct {
		Tasks     []v10Task `json:"tasks"`
		TotalSize int       `json:"totalSize"`
		PageSize  int       `json:"pageSize"`
	}
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks?contextId=ctx-rest&pageSize=10&includeArtifacts=false", nil), &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != id || list.TotalSize != 1 || list.PageSize != 10 {
		t.Fatalf("list: %+v", list)
	}
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks?context_id=another", nil), &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("list of another context: %+v", list)
	}
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks?pageSize=0", nil), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks?pageSize=ten", nil), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")

	var canceled v10Task
	decodeREST(t, r.rest(http.MethodPost, "/v1/tasks/"+id+":cancel", map[string]any{}), &canceled)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %+v", canceled)
	}
	wantRESTError(t, r.rest(http.MethodPost, "/v1/tasks/"+id+":cancel", nil), http.StatusBadRequest, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/no-such-task", nil), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	wantRESTError(t, r.rest(http.MethodPost, "/v1/tasks/no-such-task:cancel", nil), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/"+id+"?historyLength=-1", nil), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	wantRESTError(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": map[string]any{"role": "ROLE_USER"}}),
		http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/"+id, nil, "A2A-Version", "0.1"), http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
	wantRESTError(t, r.rest(http.MethodPost, "/v1/tasks/"+id+":frobnicate", nil), http.StatusNotFound, "NOT_FOUND", "METHOD_NOT_FOUND")
	wantRESTError(t, r.rest(http.MethodGet, "/v1/extendedAgentCard", nil), http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

// Without an A2A-Version header a request is v0.3 (spec §3.2.6), at v0.3's
// /v1/... paths and in its shapes (ProtoJSON of v0.3's proto: see
// v03_http_json_speaks_protojson_test.go; a request in the JSON-RPC object
// model is still read); ListTasks, which v0.3 lacks, is v1.0.
func TestHTTPJSONWithoutAVersionIsV03(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var sent struct{ Task v03ProtoTask }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v03Message("hello", nil)}, "A2A-Version", ""), &sent)
	task := sent.Task
	if task.ID == "" || task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("v0.3 send: %+v", sent)
	}
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks/"+task.ID, nil, "A2A-Version", ""), &task)
	if task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("v0.3 get: %+v", task)
	}
	var list struct{ Tasks []v10Task }
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks", nil, "A2A-Version", ""), &list)
	if len(list.Tasks) != 1 || list.Tasks[0].Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("list: %+v", list)
	}
}

// The HTTP+JSON routes sit behind the guard of the JSON-RPC endpoint:
// without credentials 401, and a client sees only its own tasks, another's
// answering as one that does not exist.
func TestHTTPJSONIsGuardedAndIsolatedAsJSONRPC(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, nil)
	res := r.rest(http.MethodGet, "/v1/tasks", nil)
	wantRESTError(t, res, http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if res.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
	var sent struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("mine", nil)},
		"Authorization", "Bearer "+aliceKey), &sent)
	var got v10Task
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks/"+sent.Task.ID, nil, "Authorization", "Bearer "+aliceKey), &got)
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/"+sent.Task.ID, nil, "Authorization", "Bearer "+bobKey),
		http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	var list struct{ Tasks []v10Task }
	decodeREST(t, r.rest(http.MethodGet, "/v1/tasks", nil, "Authorization", "Bearer "+bobKey), &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("bob lists alice's tasks: %+v", list)
	}
	// JSON-RPC and HTTP+JSON share one task space per client.
	if res := as(r, aliceKey, "GetTask", map[string]any{"id": sent.Task.ID}); res.Error != nil {
		t.Fatalf("alice's REST task over JSON-RPC: %+v", res.Error)
	}
}

// The client's rate limit holds on HTTP+JSON as on JSON-RPC: 429 with
// Retry-After and a RESOURCE_EXHAUSTED body.
func TestHTTPJSONIsRateLimitedAsJSONRPC(t *testing.T) {
	t.Parallel()
	r := startTenantRelay(t, func(c *config.Config) { c.Security.RateLimit = 1 })
	limited := 0
	for range 10 {
		res := r.rest(http.MethodGet, "/v1/tasks", nil, "Authorization", "Bearer "+aliceKey)
		if res.Status == http.StatusTooManyRequests {
			wantRESTError(t, res, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "")
			if res.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("10 requests at a limit of 1/s: none refused")
	}
}

// message:stream and tasks/{id}:subscribe answer SSE whose data are v1.0
// StreamResponses, without a JSON-RPC envelope; the stream ends with the
// task's final state.
func TestHTTPJSONStreams(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	b, _ := json.Marshal(map[string]any{"message": v10Message("stream", map[string]any{"metadata": demo(map[string]any{"steps": 2})})})
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/message:stream", strings.NewReader(string(b)))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []map[string]json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if _, rpc := ev["jsonrpc"]; rpc {
			t.Fatalf("event in a JSON-RPC envelope: %s", data)
		}
		events = append(events, ev)
	}
	if len(events) < 2 || events[0]["task"] == nil || events[len(events)-1]["statusUpdate"] == nil {
		t.Fatalf("events: %v", events)
	}
	var task v10Task
	_ = json.Unmarshal(events[0]["task"], &task)
	var last struct{ Status struct{ State string } }
	_ = json.Unmarshal(events[len(events)-1]["statusUpdate"], &last)
	if last.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("last event: %s", events[len(events)-1]["statusUpdate"])
	}
	// Subscribing to a finished task is refused, as in JSON-RPC v1.0.
	wantRESTError(t, r.rest(http.MethodGet, "/v1/tasks/"+task.ID+":subscribe", nil), http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
	wantRESTError(t, r.rest(http.MethodPost, "/v1/tasks/"+task.ID+":subscribe", nil), http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

// Push configs over HTTP+JSON: create under the task of the URL, get,
// list and delete, with a body naming another task refused.
func TestHTTPJSONPushConfigs(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.WebhookAllowCIDRs = []string{"127.0.0.0/8"} })
	var sent struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("push", nil)}), &sent)
	base := "/v1/tasks/" + sent.Task.ID + "/pushNotificationConfigs"
	var created struct{ ID, TaskID, URL string }
	decodeREST(t, r.rest(http.MethodPost, base, map[string]any{"id": "c1", "url": "http://127.0.0.1:9/hook"}), &created)
	if created.ID != "c1" || created.TaskID != sent.Task.ID {
		t.Fatalf("created %+v", created)
	}
	wantRESTError(t, r.rest(http.MethodPost, base, map[string]any{"taskId": "other", "url": "http://127.0.0.1:9/hook"}),
		http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	var one struct{ ID string }
	decodeREST(t, r.rest(http.MethodGet, base+"/c1", nil), &one)
	var list struct{ Configs []struct{ ID string } }
	decodeREST(t, r.rest(http.MethodGet, base, nil), &list)
	if one.ID != "c1" || len(list.Configs) != 1 {
		t.Fatalf("get %+v, list %+v", one, list)
	}
	if res := r.rest(http.MethodDelete, base+"/c1", nil); res.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	wantRESTError(t, r.rest(http.MethodGet, base+"/c1", nil), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
}

// A body over the limit, refused before any route runs, is answered on an
// HTTP+JSON route as that binding answers errors, not as JSON-RPC.
func TestHTTPJSONBodyOverTheLimitGetsAStatusBody(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.MaxBodyBytes = 4096 })
	res := r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message(strings.Repeat("x", 8192), nil)})
	wantRESTError(t, res, http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", "INVALID_REQUEST")
	if res := r.rest(http.MethodGet, "/v1/tasks/x:frobnicate", nil); res.Error.Status != "NOT_FOUND" {
		t.Fatalf("unknown verb: %s", res.Body)
	}
}

// A subscription resumed with Last-Event-ID over HTTP+JSON sends the same
// events, under the same ids, as one resumed over JSON-RPC.
func TestHTTPJSONSubscribeResumesAsJSONRPC(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var done struct{ Task v10Task }
	decodeREST(t, r.rest(http.MethodPost, "/v1/message:send", map[string]any{"message": v10Message("done", nil)}), &done)
	ids, err := r.app.rdb.XRange(context.Background(), r.app.store.EventsKey(done.Task.ID), "-", "+").Result()
	if err != nil || len(ids) < 3 {
		t.Fatalf("events %v, %v", ids, err)
	}
	rpc := collect(t, first(openStream(t, r, "SubscribeToTask", map[string]any{"id": done.Task.ID}, "Last-Event-ID", ids[1].ID)))

	req, _ := http.NewRequest(http.MethodGet, r.url+"/v1/tasks/"+done.Task.ID+":subscribe", nil)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Last-Event-ID", ids[1].ID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var restIDs []string
	var restData []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			restIDs = append(restIDs, id)
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			restData = append(restData, d)
		}
	}
	if len(rpc) == 0 || len(restIDs) != len(rpc) || len(restData) != len(rpc) {
		t.Fatalf("REST resume: ids %v; JSON-RPC resume: %d events", restIDs, len(rpc))
	}
	for i, ev := range rpc {
		if restIDs[i] != ev.ID || !sameJSONText(restData[i], string(ev.Data.Result)) {
			t.Fatalf("event %d: REST %s %s, JSON-RPC %s %s", i, restIDs[i], restData[i], ev.ID, ev.Data.Result)
		}
	}
}

func sameJSONText(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
