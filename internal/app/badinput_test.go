package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/config"
)

func TestBadInput(t *testing.T) {
	t.Parallel()
	r := startRelay(t, func(c *config.Config) { c.MaxBodyBytes = 64 << 10 })
	for _, tc := range []struct {
		name, body string
		headers    []string
		status     int
		code       int
		id         string
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, nil, 200, -32700, "null"},
		{"not an object", `"hello"`, nil, 200, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, nil, 200, -32600, "null"},
		{"no jsonrpc", `{"id":"abc","method":"tasks/get","params":{"id":"x"}}`, nil, 200, -32600, `"abc"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tasks/get"}`, nil, 200, -32600, "null"},
		{"no method", `{"jsonrpc":"2.0","id":5}`, nil, 200, -32600, "5"},
		{"unknown method number id", `{"jsonrpc":"2.0","id":7,"method":"tasks/explode"}`, nil, 200, -32601, "7"},
		{"unknown method string id", `{"jsonrpc":"2.0","id":"7","method":"tasks/explode"}`, nil, 200, -32601, `"7"`},
		{"params array", `{"jsonrpc":"2.0","id":8,"method":"GetTask","params":[1]}`, nil, 200, -32602, "8"},
		{"params wrong type", `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":12}}`, nil, 200, -32602, "9"},
		{"missing params", `{"jsonrpc":"2.0","id":10,"method":"message/send"}`, nil, 200, -32602, "10"},
		{"empty parts", `{"jsonrpc":"2.0","id":11,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[]}}}`, nil, 200, -32602, "11"},
		{"agent role", `{"jsonrpc":"2.0","id":12,"method":"message/send","params":{"message":{"role":"agent","messageId":"m","parts":[{"kind":"text","text":"x"}]}}}`, nil, 200, -32602, "12"},
		{"v0.1 id with control characters", `{"jsonrpc":"2.0","id":16,"method":"tasks/send","params":{"id":"a\r\nb\u0000c{}","message":{"role":"user","parts":[{"type":"text","text":"x"}]}}}`, nil, 200, -32602, "16"},
		{"messageId too long", `{"jsonrpc":"2.0","id":17,"method":"message/send","params":{"message":{"role":"user","messageId":"` + strings.Repeat("m", 257) + `","parts":[{"kind":"text","text":"x"}]}}}`, nil, 200, -32602, "17"},
		{"webhook URL with userinfo", `{"jsonrpc":"2.0","id":18,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"url":"https://user:pw@hooks.example.test/h"}}}}`, nil, 200, -32602, "18"},
		{"push token with CRLF", `{"jsonrpc":"2.0","id":19,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://hooks.example.test/h","token":"a\r\nb"}}}}`, []string{"A2A-Version", "1.0"}, 200, -32602, "19"},
		{"push token too long", `{"jsonrpc":"2.0","id":20,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"url":"https://hooks.example.test/h","token":"` + strings.Repeat("t", 3000) + `"}}}}`, nil, 200, -32602, "20"},
		{"version", `{"jsonrpc":"2.0","id":13,"method":"GetTask","params":{"id":"x"}}`, []string{"A2A-Version", "9.9"}, 200, -32009, "13"},
		{"extended card", `{"jsonrpc":"2.0","id":14,"method":"GetExtendedAgentCard","params":{}}`, nil, 200, -32004, "14"},
		{"extended card v0.3 no params", `{"jsonrpc":"2.0","id":15,"method":"agent/getAuthenticatedExtendedCard"}`, nil, 200, -32007, "15"},
		{"content type", `{"jsonrpc":"2.0","id":1,"method":"GetTask"}`, []string{"Content-Type", "text/plain"}, 415, -32600, "null"},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", 70<<10) + `"}}`, nil, 413, -32600, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := r.post(tc.body, tc.headers...)
			if res.Status != tc.status {
				t.Errorf("status %d, want %d", res.Status, tc.status)
			}
			if res.RPC != "2.0" {
				t.Errorf("jsonrpc = %q", res.RPC)
			}
			wantError(t, res, tc.code)
			if string(res.ID) != tc.id {
				t.Errorf("id = %s, want %s", res.ID, tc.id)
			}
			if status, _, _ := get(t, r.url+"/healthz"); status != http.StatusOK {
				t.Fatalf("relay unhealthy after %s", tc.name)
			}
		})
	}
}
