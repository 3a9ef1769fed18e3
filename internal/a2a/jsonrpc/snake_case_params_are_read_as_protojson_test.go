package jsonrpc

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// v1.0 params are ProtoJSON: a field may be named in lowerCamel (taskId)
// or as the proto names it (task_id), in every object of the params, and
// relay reads both (it refused task_id and ignored history_length). The
// keys of metadata and of a part's data are the client's own, passed on as
// they came. A field named twice, in either spelling, is refused.
func TestSnakeCaseParamsAreReadAsProtoJSON(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	for _, tc := range []struct {
		name, method, params string
		version              string
		code                 int      // 0: a result
		want, notWant        []string // in the raw reply
	}{
		{"GetTask history_length", "GetTask", `{"id":"v10","history_length":0}`, "", 0,
			[]string{`"id":"v10"`}, []string{`"history"`}},
		{"tasks/get under v1.0, history_length", "tasks/get", `{"id":"v03","history_length":0}`, "1.0", 0,
			[]string{`"id":"v03"`}, []string{`"history"`}},
		{"ListTasks history_length", "ListTasks", `{"history_length":0,"context_id":"c","include_artifacts":true}`, "", 0,
			[]string{`"tasks":[{`}, []string{`"history"`}},
		{"ListTasks page_size out of range", "ListTasks", `{"page_size":0}`, "", CodeInvalidParams, nil, nil},
		{"ListTasks page_token", "ListTasks", `{"page_token":"x","status_timestamp_after":"2025-01-01T00:00:00Z"}`, "", 0, nil, nil},
		{"SendMessage, snake_case everywhere", "SendMessage", `{"message":{"message_id":"m-snake","context_id":"ctx-snake",
			"role":"ROLE_USER","reference_task_ids":["r1"],"parts":[{"raw":"aGk=","media_type":"text/plain","filename":"a.txt"},
			{"data":{"inner_key":{"deep_key":1}}}],"metadata":{"client_key":1,"clientKey":2}},
			"configuration":{"history_length":1,"return_immediately":true,"accepted_output_modes":["text/plain"],
			"task_push_notification_config":{"task_id":"","url":"https://hooks.example.com/x"}},
			"metadata":{"send_key":{"nested_key":true}}}`, "", 0,
			[]string{`"messageId":"m-snake"`, `"contextId":"ctx-snake"`, `"referenceTaskIds":["r1"]`, `"mediaType":"text/plain"`,
				`"inner_key":{"deep_key":1}`, `"client_key":1`, `"clientKey":2`, `"send_key":{"nested_key":true}`}, nil},
		{"CreateTaskPushNotificationConfig task_id", "CreateTaskPushNotificationConfig",
			`{"task_id":"v10","url":"https://hooks.example.com/x","authentication":{"scheme":"Bearer","credentials":"c"}}`, "", 0,
			[]string{`"taskId":"v10"`, `"scheme":"Bearer"`}, nil},
		{"GetTaskPushNotificationConfig task_id", "GetTaskPushNotificationConfig", `{"task_id":"v10","id":"c1"}`, "", 0,
			[]string{`"taskId":"v10"`}, nil},
		{"ListTaskPushNotificationConfigs task_id", "ListTaskPushNotificationConfigs", `{"task_id":"v10","page_size":null}`, "", 0,
			[]string{`"configs":[{`}, nil},
		{"DeleteTaskPushNotificationConfig task_id", "DeleteTaskPushNotificationConfig", `{"task_id":"v10","id":"c1"}`, "", 0, nil, nil},

		{"both spellings", "GetTask", `{"id":"v10","historyLength":1,"history_length":0}`, "", CodeInvalidParams, nil, nil},
		{"both spellings, nested", "SendMessage", `{"message":{"messageId":"m","message_id":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "",
			CodeInvalidParams, nil, nil},
		{"one name twice", "CreateTaskPushNotificationConfig", `{"taskId":"v10","taskId":"v10","url":"https://hooks.example.com/x"}`, "",
			CodeInvalidParams, nil, nil},
		{"names that differ in case", "GetTask", `{"id":"v10","historyLength":1,"HistoryLength":0}`, "", CodeInvalidParams, nil, nil},
	} {
		h := map[string]string{}
		if tc.version != "" {
			h["A2A-Version"] = tc.version
		}
		status, raw, r := post(t, app, rpcBody(`1`, tc.method, tc.params), h)
		switch {
		case status != http.StatusOK:
			t.Errorf("%s: status %d, body %s", tc.name, status, raw)
			continue
		case tc.code == 0 && r.Error != nil:
			t.Errorf("%s: %s; want a result", tc.name, raw)
			continue
		case tc.code != 0 && (r.Error == nil || r.Error.Code != tc.code):
			t.Errorf("%s: %s; want %d", tc.name, raw, tc.code)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(raw, w) {
				t.Errorf("%s: reply lacks %s: %s", tc.name, w, raw)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(raw, w) {
				t.Errorf("%s: reply has %s: %s", tc.name, w, raw)
			}
		}
	}
}

// The earlier dialects are JSON-RPC with camelCase names only: their
// params are not rewritten (a v0.3 client's metadata-like snake_case name
// is not a field of another spelling).
func TestSnakeCaseNamesAreLeftAloneOutsideV10(t *testing.T) {
	t.Parallel()
	app := newTestApp(nil)
	_, raw, r := post(t, app, rpcBody(`1`, "tasks/get", `{"id":"v03","history_length":0}`), nil)
	var task struct{ History []json.RawMessage }
	if r.Error != nil || json.Unmarshal(r.Result, &task) != nil || len(task.History) != 1 {
		t.Errorf("v0.3 tasks/get with history_length: %s; want the whole history", raw)
	}
}
