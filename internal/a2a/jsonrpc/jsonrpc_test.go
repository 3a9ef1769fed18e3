package jsonrpc

import (
	"encoding/json"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

func TestParseRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		body   string
		code   int    // 0: no error
		id     string // the id to answer under, exactly
		method string
		params string
	}{
		{"number id", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`, 0, `1`, "tasks/get", `{"id":"t1"}`},
		{"string id", `{"jsonrpc":"2.0","id":"1","method":"message/send","params":{}}`, 0, `"1"`, "message/send", `{}`},
		{"negative fraction id", `{"jsonrpc":"2.0","id":-2.5,"method":"GetTask","params":{"id":"t"}}`, 0, `-2.5`, "GetTask", `{"id":"t"}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"GetTask"}`, 0, `null`, "GetTask", ``},
		{"zero id", `{"id":0,"method":"ListTasks","jsonrpc":"2.0","params":null}`, 0, `0`, "ListTasks", `null`},
		{"id kept byte for byte", `{"jsonrpc":"2.0","id":1.50,"method":"m"}`, 0, `1.50`, "m", ``},
		{"escaped string id", `{"jsonrpc":"2.0","id":"a\u0062\"c","method":"m"}`, 0, `"a\u0062\"c"`, "m", ``},
		{"uuid id, whitespace", "\n {\"jsonrpc\" : \"2.0\", \"id\" :  \"0b6c\" ,\n \"method\":\"m\"}\n", 0, `"0b6c"`, "m", ``},
		{"big id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`, 0, `123456789012345678901234567890`, "m", ``},
		{"extra fields", `{"jsonrpc":"2.0","id":3,"method":"m","extra":[1]}`, 0, `3`, "m", ``},

		{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, CodeParseError, `null`, "", ""},
		{"not JSON", `hello`, CodeParseError, `null`, "", ""},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"m"} x`, CodeParseError, `null`, "", ""},
		{"empty batch", `[]`, CodeInvalidRequest, `null`, "", ""},
		{"batch", ` [{"jsonrpc":"2.0","id":1,"method":"m"}]`, CodeInvalidRequest, `null`, "", ""},
		{"string body", `"str"`, CodeInvalidRequest, `null`, "", ""},
		{"number body", `42`, CodeInvalidRequest, `null`, "", ""},
		{"null body", `null`, CodeInvalidRequest, `null`, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`, CodeInvalidRequest, `null`, "", ""},
		{"array id", `{"jsonrpc":"2.0","id":[],"method":"m"}`, CodeInvalidRequest, `null`, "", ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, CodeInvalidRequest, `null`, "", ""},
		{"no id, jsonrpc 1.0", `{"jsonrpc":"1.0","method":"m"}`, CodeInvalidRequest, `null`, "", ""},
		{"no id, no jsonrpc", `{"method":"m"}`, CodeInvalidRequest, `null`, "", ""},
		{"no id, no method", `{"jsonrpc":"2.0"}`, CodeInvalidRequest, `null`, "", ""},
		{"missing jsonrpc", `{"id":5,"method":"m"}`, CodeInvalidRequest, `5`, "", ""},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"x","method":"m"}`, CodeInvalidRequest, `"x"`, "", ""},
		{"jsonrpc null", `{"jsonrpc":null,"id":"x","method":"m"}`, CodeInvalidRequest, `"x"`, "", ""},
		{"missing method", `{"jsonrpc":"2.0","id":9}`, CodeInvalidRequest, `9`, "", ""},
		{"number method", `{"jsonrpc":"2.0","id":9,"method":1}`, CodeInvalidRequest, `9`, "", ""},
		{"empty method", `{"jsonrpc":"2.0","id":"9","method":""}`, CodeInvalidRequest, `"9"`, "", ""},
		{"null method", `{"jsonrpc":"2.0","id":"9","method":null}`, CodeInvalidRequest, `"9"`, "", ""},
		{"array params", `{"jsonrpc":"2.0","id":4,"method":"m","params":[1,2]}`, CodeInvalidParams, `4`, "", ""},
		{"string params", `{"jsonrpc":"2.0","id":"4","method":"m","params":"x"}`, CodeInvalidParams, `"4"`, "", ""},
		{"number params", `{"jsonrpc":"2.0","id":4,"method":"m","params":0}`, CodeInvalidParams, `4`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, id, err := parseRequest([]byte(tc.body))
			if string(id) != tc.id {
				t.Errorf("id = %s, want %s", id, tc.id)
			}
			if tc.code != 0 {
				if err == nil || err.Code != tc.code {
					t.Fatalf("err = %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if string(req.ID) != tc.id || req.Method != tc.method || string(req.Params) != tc.params {
				t.Errorf("request = {%s %q %s}, want {%s %q %s}", req.ID, req.Method, req.Params, tc.id, tc.method, tc.params)
			}
			// The id goes back in type and value: "1" stays a string, 1 a number.
			b, merr := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: json.RawMessage("null")})
			var back struct{ ID json.RawMessage }
			if merr != nil || json.Unmarshal(b, &back) != nil || string(back.ID) != tc.id {
				t.Errorf("response %s does not echo id %s (%v)", b, tc.id, merr)
			}
		})
	}
}

func TestParseRequestEmpty(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "   ", "\n\t"} {
		_, id, err := parseRequest([]byte(body))
		if err == nil || string(id) != "null" {
			t.Errorf("parseRequest(%q) = %s, %v; want an error under id null", body, id, err)
		}
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		``: true, `null`: true, `1`: true, `-1`: true, `0.5`: true, `"x"`: true, `""`: true,
		`{}`: false, `[]`: false, `true`: false, `false`: false,
	} {
		if got := validID(json.RawMessage(raw)); got != want {
			t.Errorf("validID(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		h  string
		d  a2a.Dialect
		ok bool
	}{
		{"", "", true}, {"  ", "", true},
		{"0.1", a2a.V01, true}, {"0.1.0", a2a.V01, true}, {"0.2", a2a.V01, true}, {"0.2.5", a2a.V01, true},
		{"0.3", a2a.V03, true}, {"0.3.0", a2a.V03, true}, {" 0.3 ", a2a.V03, true},
		{"1", a2a.V10, true}, {"1.0", a2a.V10, true}, {"1.0.0", a2a.V10, true}, {"1.0.1", a2a.V10, true},
		{"2.0", "", false}, {"0.4", "", false}, {"v1.0", "", false}, {"1.0,0.3", "", false}, {"latest", "", false},
	}
	for _, tc := range cases {
		d, ok := a2a.ParseVersion(tc.h)
		if d != tc.d || ok != tc.ok {
			t.Errorf("a2a.ParseVersion(%q) = %q, %v; want %q, %v", tc.h, d, ok, tc.d, tc.ok)
		}
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	want := map[a2a.Dialect][]string{
		a2a.V01: {"tasks/send", "tasks/sendSubscribe", "tasks/pushNotification/set", "tasks/pushNotification/get"},
		a2a.V03: {"tasks/get", "tasks/cancel", "tasks/resubscribe", "message/send", "message/stream",
			"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
			"tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"},
		a2a.V10: {"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
			"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
			"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"},
	}
	n := 0
	for d, methods := range want {
		for _, m := range methods {
			n++
			rt, ok := routes[m]
			if !ok || rt.dialect != d {
				t.Errorf("routes[%s] = %+v, %v; want dialect %s", m, rt, ok, d)
			}
			shared := m == "tasks/get" || m == "tasks/cancel" || m == "tasks/resubscribe"
			if rt.shared != shared {
				t.Errorf("routes[%s].shared = %v, want %v", m, rt.shared, shared)
			}
		}
	}
	if len(routes) != n {
		t.Errorf("routes has %d methods, want %d", len(routes), n)
	}
	ops := map[string]a2a.Op{"tasks/send": a2a.OpSend, "message/send": a2a.OpSend, "SendMessage": a2a.OpSend,
		"tasks/pushNotification/get": a2a.OpPushGet, "ListTaskPushNotificationConfigs": a2a.OpPushList,
		"tasks/pushNotificationConfig/delete": a2a.OpPushDelete, "GetExtendedAgentCard": a2a.OpExtendedCard,
		"SubscribeToTask": a2a.OpSubscribe, "ListTasks": a2a.OpList, "CancelTask": a2a.OpCancel}
	for m, o := range ops {
		if routes[m].op != o {
			t.Errorf("routes[%s].op = %d, want %d", m, routes[m].op, o)
		}
	}
}
