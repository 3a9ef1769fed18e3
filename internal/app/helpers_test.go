package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// relay is one relay instance under test.
type relay struct {
	t   *testing.T
	app *App
	url string
}

// testConfig returns the defaults with a loopback port and a fast demo agent.
func testConfig(t *testing.T) config.Config {
	cfg, err := config.Load(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.Auth = "none"                 // the tests of auth set credentials of their own
	cfg.Security.RateLimit = 0        // and the test of the rate limit its own limit,
	cfg.Security.AuthFailureLimit = 0 // and that of failed authentications its own
	cfg.DemoStepDelay = 5 * time.Millisecond
	cfg.BlockingTimeout = 10 * time.Second
	return cfg
}

// startRelay starts relay on the shared test Redis under a key prefix of
// its own, after mut adjusts the config.
func startRelay(t *testing.T, mut func(*config.Config)) *relay {
	t.Helper()
	return startRelayOn(t, "", mut)
}

// eachPath runs test for each delivery path (RELAY_DELIVERY_PATH), in
// parallel: what relay promises of deliveries holds on both.
func eachPath(t *testing.T, test func(t *testing.T, path string)) {
	t.Parallel()
	for _, path := range []string{"lanes", "outbox"} {
		t.Run(path, func(t *testing.T) { test(t, path) })
	}
}

// startRelayOn is startRelay with notifications on delivery path path
// ("": the default).
func startRelayOn(t *testing.T, path string, mut func(*config.Config)) *relay {
	t.Helper()
	rdb, prefix := redistest.New(t)
	cfg := testConfig(t)
	if path != "" {
		cfg.DeliveryPath = path
	}
	cfg.RedisURL = redistest.URL(rdb)
	cfg.RedisPrefix = strings.TrimSuffix(prefix, ":")
	if mut != nil {
		mut(&cfg)
	}
	return startWith(t, cfg)
}

func startWith(t *testing.T, cfg config.Config) *relay {
	t.Helper()
	var w io.Writer = io.Discard
	if os.Getenv("RELAY_TEST_LOG") != "" {
		w = os.Stderr
	}
	a, err := New(Deps{Log: slog.New(slog.NewTextHandler(w, nil))}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := &relay{t: t, app: a, url: "http://" + a.Addr()}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *relay) stop() {
	if r.app == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.app.Shutdown(ctx); err != nil {
		r.t.Errorf("shutdown: %v", err)
	}
	r.app = nil
}

// rpcResult is a decoded JSON-RPC response.
type rpcResult struct {
	Status int
	ID     json.RawMessage `json:"id"`
	RPC    string          `json:"jsonrpc"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int       `json:"code"`
		Message string    `json:"message"`
		Data    errorData `json:"data"`
	} `json:"error"`
}

// errorData is a JSON-RPC error's data: v1.0's list of details, or the one
// object a v0.x error carries (a refused field), as a list of one.
type errorData []json.RawMessage

func (d *errorData) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		*d = errorData{append(json.RawMessage(nil), b...)}
		return nil
	}
	return json.Unmarshal(b, (*[]json.RawMessage)(d))
}

// post sends a raw body with headers and decodes the JSON answer.
func (r *relay) post(body string, headers ...string) rpcResult {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+"/", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out rpcResult
	if err := json.Unmarshal(b, &out); err != nil {
		r.t.Fatalf("response is not JSON (status %d): %s", resp.StatusCode, b)
	}
	out.Status = resp.StatusCode
	return out
}

// call sends method with params in the dialect the method implies; v1.0
// methods carry A2A-Version: 1.0. It fails the test on an error answer.
func (r *relay) call(method string, params any, out any) {
	r.t.Helper()
	res := r.callRaw(method, params)
	if res.Error != nil {
		r.t.Fatalf("%s: error %d %s", method, res.Error.Code, res.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result, out); err != nil {
			r.t.Fatalf("%s: decode result %s: %v", method, res.Result, err)
		}
	}
}

func (r *relay) callRaw(method string, params any) rpcResult {
	r.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		r.t.Fatal(err)
	}
	var headers []string
	if len(method) > 0 && method[0] >= 'A' && method[0] <= 'Z' {
		headers = []string{"A2A-Version", "1.0"}
	}
	return r.post(string(b), headers...)
}

// wantError checks that res is the JSON-RPC error code.
func wantError(t *testing.T, res rpcResult, code int) {
	t.Helper()
	if res.Error == nil {
		t.Fatalf("want error %d, got result %s", code, res.Result)
	}
	if res.Error.Code != code {
		t.Fatalf("want error %d, got %d: %s", code, res.Error.Code, res.Error.Message)
	}
}

// get fetches a URL and returns status, headers and body.
func get(t *testing.T, url string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, buf.Bytes()
}

// Wire shapes the tests read.
type v03Task struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts []struct{ Text string } `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	History []struct {
		Kind  string `json:"kind"`
		Role  string `json:"role"`
		Parts []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"history"`
	Artifacts []struct {
		ArtifactID string `json:"artifactId"`
		Parts      []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

type v10Task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
	History []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text *string `json:"text"`
		} `json:"parts"`
	} `json:"history"`
	Artifacts []struct {
		ArtifactID string `json:"artifactId"`
		Parts      []struct {
			Text *string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
	Metadata map[string]any `json:"metadata"`
}

type v01Task struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Role  string `json:"role"`
			Parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		Index int `json:"index"`
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
	History []json.RawMessage `json:"history"`
}

func v03Message(text string, extra map[string]any) map[string]any {
	m := map[string]any{"kind": "message", "role": "user", "messageId": "m-" + text,
		"parts": []any{map[string]any{"kind": "text", "text": text}}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func v10Message(text string, extra map[string]any) map[string]any {
	m := map[string]any{"role": "ROLE_USER", "messageId": "m-" + text, "parts": []any{map[string]any{"text": text}}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func v01Message(text string, meta any) map[string]any {
	m := map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
	if meta != nil {
		m["metadata"] = meta
	}
	return m
}

func demo(opts map[string]any) map[string]any { return map[string]any{"demo": opts} }

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// event is a committed task event as stored (canonical shape).
type event struct {
	Kind     string          `json:"kind"`
	Metadata json.RawMessage `json:"metadata"`
	Status   *struct {
		State string `json:"state"`
	} `json:"status"`
}

// readEvents reads a task's event stream straight from Redis.
func readEvents(t *testing.T, r *relay, taskID string) []event {
	t.Helper()
	k := r.app.store.EventsKey(taskID)
	msgs, err := r.app.rdb.XRange(context.Background(), k, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]event, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal([]byte(m.Values["e"].(string)), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
