package jsonrpc

import (
	"fmt"
	"net/http"
	"testing"
)

// A2A gives historyLength a meaning when it is unset, 0 or positive, and
// none when it is negative: every method that takes one refuses a negative
// one with -32602 (it used to mean "no limit"), in every dialect, and
// still takes 0 and a positive one.
func TestNegativeHistoryLengthIsRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	const (
		v01msg = `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
		v03msg = `{"role":"user","parts":[{"kind":"text","text":"hi"}],"messageId":"m1"}`
		v10msg = `{"role":"ROLE_USER","parts":[{"text":"hi"}],"messageId":"m1"}`
	)
	for _, tc := range []struct {
		name, method, params string
		version              string
	}{
		{"GetTask", "GetTask", `{"id":"v10","historyLength":%d}`, ""},
		{"ListTasks", "ListTasks", `{"historyLength":%d}`, ""},
		{"SendMessage", "SendMessage", `{"message":` + v10msg + `,"configuration":{"historyLength":%d}}`, ""},
		{"v0.3 tasks/get", "tasks/get", `{"id":"v03","historyLength":%d}`, ""},
		{"v0.3 tasks/get, v1.0 header", "tasks/get", `{"id":"v03","historyLength":%d}`, "1.0"},
		{"v0.3 message/send", "message/send", `{"message":` + v03msg + `,"configuration":{"historyLength":%d}}`, ""},
		{"v0.1 tasks/get", "tasks/get", `{"id":"v01","historyLength":%d}`, ""},
		{"v0.1 tasks/send", "tasks/send", `{"id":"new","message":` + v01msg + `,"historyLength":%d}`, ""},
	} {
		for _, n := range []int{-1, -100, 0, 2} {
			h := map[string]string{}
			if tc.version != "" {
				h["A2A-Version"] = tc.version
			}
			status, raw, r := post(t, app, rpcBody(`1`, tc.method, fmt.Sprintf(tc.params, n)), h)
			switch {
			case status != http.StatusOK:
				t.Errorf("%s, historyLength %d: status %d, body %s", tc.name, n, status, raw)
			case n < 0 && (r.Error == nil || r.Error.Code != CodeInvalidParams):
				t.Errorf("%s, historyLength %d: %s; want -32602", tc.name, n, raw)
			case n >= 0 && r.Error != nil:
				t.Errorf("%s, historyLength %d: %s; want a result", tc.name, n, raw)
			}
		}
	}
}
