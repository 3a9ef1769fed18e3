package jsonrpc

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// Seed bodies: what real clients of each dialect send (the core's
// testdata/seeds, shared with its fuzz tests).
var (
	seedV01Send = readSeed("v01_send.json")
	seedV03Send = readSeed("v03_send.json")
	seedV10Send = readSeed("v10_send.json")
	seedPush    = strings.Split(strings.TrimSpace(readSeed("push_params.jsonl")), "\n")
)

// readSeed reads a seed body from the core's testdata/seeds.
func readSeed(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "seeds", name))
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}

func envelope(id, method, params string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{seedV01Send, seedV03Send, seedV10Send} {
		f.Add(envelope(`1`, "m", s))
	}
	for _, s := range []string{`{"jsonrpc":"2.0","id":"1","method":"tasks/get","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"GetTask"}`, `{"jsonrpc":"2.0","id":-2.5e3,"method":"m","params":[]}`,
		`[]`, `"str"`, `{`, ``, `{"id":{}}`, `{"jsonrpc":"1.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":7}`,
		` {"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"m"}`, `{"jsonrpc":2,"id":1,"method":"m"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, id, err := parseRequest(body)
		if !json.Valid(id) || !validID(id) || len(id) == 0 {
			t.Fatalf("answer id %q is not a valid JSON-RPC id", id)
		}
		if _, merr := json.Marshal(response{JSONRPC: "2.0", ID: id, Error: &wireError{Code: 1}}); merr != nil {
			t.Fatalf("cannot marshal a response with id %q: %v", id, merr)
		}
		if err != nil {
			switch err.Code {
			case CodeParseError:
				if string(id) != "null" {
					t.Fatalf("parse error answered under id %s", id)
				}
			case CodeInvalidRequest, CodeInvalidParams:
			default:
				t.Fatalf("unexpected code %d", err.Code)
			}
			return
		}
		if req.Method == "" || (req.Notification && (len(req.ID) != 0 || string(id) != "null")) ||
			(!req.Notification && !bytes.Equal(req.ID, id)) {
			t.Fatalf("accepted request %+v with id %s", req, id)
		}
		if p := bytes.TrimSpace(req.Params); len(p) > 0 && p[0] != '{' && string(p) != "null" {
			t.Fatalf("accepted params %s", p)
		}
	})
}

func FuzzHandler(f *testing.F) {
	for _, s := range []struct{ method, params, version string }{
		{"tasks/send", seedV01Send, ""}, {"message/send", seedV03Send, "0.3"}, {"SendMessage", seedV10Send, "1.0"},
		{"tasks/get", `{"id":"v01","historyLength":1}`, ""}, {"tasks/get", `{"id":"v01"}`, "0.3"},
		{"GetTask", `{"id":"panic"}`, "1.0"}, {"CancelTask", `{"id":"boom"}`, ""}, {"ListTasks", `{"status":3,"pageSize":null}`, "1.0"},
		{"ListTasks", `{"statusTimestampAfter":"2025-01-01T00:00:00Z","includeArtifacts":true}`, ""},
		{"CreateTaskPushNotificationConfig", seedPush[3], "1.0"}, {"tasks/pushNotificationConfig/list", `{"id":"v03"}`, ""},
		{"DeleteTaskPushNotificationConfig", `{"taskId":"v10","id":"c"}`, "1"}, {"GetExtendedAgentCard", `{}`, "2.0"},
		{"GetTask", `{"id":"v10","history_length":0}`, ""}, {"ListTasks", `{"page_size":2,"context_id":"c","pageSize":3}`, ""},
		{"SendMessage", `{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"text":"x","metadata":{"a_b":1}}]},"configuration":{"return_immediately":true}}`, ""},
	} {
		f.Add(envelope(`"r-1"`, s.method, s.params), s.version, "application/json")
	}
	f.Add([]byte(`[{"jsonrpc":"2.0"}]`), "", "")
	f.Add([]byte(`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}}`), "", "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"v03"}}`), " 0.1 ", "text/plain")
	f.Add([]byte("\x00\xff{"), "\x7f", "application/a2a+json; charset=utf-8")

	failures := new(atomic.Int64)
	app := newTestAppWith(fakeService{failures: failures}, nil)
	f.Fuzz(func(t *testing.T, body []byte, version, ctype string) {
		before := failures.Load()
		if !headerSafe(version) || !headerSafe(ctype) {
			t.Skip("not a header value an HTTP client can send")
		}
		req := httptest.NewRequest(http.MethodPost, "/a2a", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("A2A-Version", version)
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatalf("app.Test: %v", err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if req, _, _ := parseRequest(body); req.Notification && jsonContentType(strings.TrimSpace(ctype)) {
			// No reply: 204, or a limit's status, never a body.
			if len(out) != 0 || (resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusTooManyRequests &&
				resp.StatusCode != http.StatusServiceUnavailable) {
				t.Fatalf("notification %q: status %d, reply %q", body, resp.StatusCode, out)
			}
			return
		}
		if resp.StatusCode >= 500 || (resp.StatusCode != 200 && resp.StatusCode/100 != 4) {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *wireError      `json:"error"`
		}
		if err := json.Unmarshal(out, &r); err != nil || r.JSONRPC != "2.0" || len(r.ID) == 0 {
			t.Fatalf("status %d, reply %q is not a JSON-RPC response (%v)", resp.StatusCode, out, err)
		}
		if (r.Error == nil) == (len(r.Result) == 0) {
			t.Fatalf("reply needs exactly one of result and error: %s", out)
		}
		if r.Error != nil && r.Error.Code == CodeInternal && failures.Load() == before {
			t.Fatalf("internal error for input %q: %s", body, out)
		}
		if resp.StatusCode == 200 {
			if _, id, _ := parseRequest(body); !sameJSON(id, r.ID) {
				t.Fatalf("reply id %s, request id %s", r.ID, id)
			}
		}
	})
}

// headerSafe reports whether s can be sent as an HTTP header value as is.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func sameJSON(a, b []byte) bool {
	dec := func(x []byte) any {
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		var v any
		_ = d.Decode(&v)
		return v
	}
	return reflect.DeepEqual(dec(a), dec(b))
}
