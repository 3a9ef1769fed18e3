package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// refusedField returns the field a -32602 names in its data: {"field"} in
// v0.x, in v1.0 a google.rpc.BadRequest after the ErrorInfo.
func refusedField(t *testing.T, res rpcResult) string {
	t.Helper()
	wantError(t, res, -32602)
	data := res.Error.Data
	if len(data) == 2 && strings.Contains(string(data[0]), `"reason":"INVALID_PARAMS"`) {
		data = data[1:]
	}
	if len(data) != 1 {
		t.Fatalf("error data = %s, want one entry, or ErrorInfo and BadRequest (%s)", res.Error.Data, res.Error.Message)
	}
	var d struct {
		Field      string
		Violations []struct{ Field string } `json:"fieldViolations"`
	}
	if err := json.Unmarshal(data[0], &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Violations) == 1 {
		return d.Violations[0].Field
	}
	return d.Field
}

// Every way of saving a push config, in every dialect, refuses a config
// relay could not deliver as given (a URL with user:password@, a token with
// CR LF, oversized secrets, a scheme that is not an HTTP token, an id with
// a control character), names the field as the client spelled it, and
// stores nothing.
func TestPushConfigFieldsAreValidatedOnEveryPath(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	waiting := demo(map[string]any{"outcome": "input-required"})
	var t01, t03, t10 struct{ ID string }
	r.call("tasks/send", map[string]any{"id": "push-fields-v01", "message": v01Message("x", waiting)}, &t01)
	r.call("message/send", map[string]any{"message": v03Message("push-fields", map[string]any{"metadata": waiting})}, &t03)
	var res10 struct{ Task struct{ ID string } }
	r.call("SendMessage", map[string]any{"message": v10Message("push-fields", map[string]any{"metadata": waiting})}, &res10)
	t10.ID = res10.Task.ID
	var before struct{ TotalSize int }
	r.call("ListTasks", map[string]any{}, &before)

	// bad is one refused config field: its value and its name (v0.x, v1.0).
	type bad struct {
		name, field, field10 string
		set                  func(v0x, v10 map[string]any)
	}
	bads := []bad{
		{"url with userinfo", "url", "url", func(a, b map[string]any) {
			a["url"], b["url"] = "https://alice:s3cret@hooks.example.test/h", "https://alice:s3cret@hooks.example.test/h"
		}},
		{"token with CRLF", "token", "token", func(a, b map[string]any) {
			a["token"], b["token"] = "tok\r\nX-Injected: yes", "tok\r\nX-Injected: yes"
		}},
		{"token over 2 KiB", "token", "token", func(a, b map[string]any) {
			a["token"], b["token"] = strings.Repeat("t", 2049), strings.Repeat("t", 2049)
		}},
		{"credentials with NUL", "authentication.credentials", "authentication.credentials", func(a, b map[string]any) {
			a["authentication"] = map[string]any{"schemes": []string{"Bearer"}, "credentials": "c\x00c"}
			b["authentication"] = map[string]any{"scheme": "Bearer", "credentials": "c\x00c"}
		}},
		{"credentials over 4 KiB", "authentication.credentials", "authentication.credentials", func(a, b map[string]any) {
			a["authentication"] = map[string]any{"schemes": []string{"Bearer"}, "credentials": strings.Repeat("c", 4097)}
			b["authentication"] = map[string]any{"scheme": "Bearer", "credentials": strings.Repeat("c", 4097)}
		}},
		{"scheme with LF", "authentication.schemes[0]", "authentication.scheme", func(a, b map[string]any) {
			a["authentication"] = map[string]any{"schemes": []string{"Bearer\nX"}, "credentials": "c"}
			b["authentication"] = map[string]any{"scheme": "Bearer\nX", "credentials": "c"}
		}},
		{"config id with CR", "id", "id", func(a, b map[string]any) { a["id"], b["id"] = "cfg\r", "cfg\r" }},
	}
	paths := []struct {
		name   string
		prefix string // before the field: "" for v1.0 create, whose config is flat
		v10    bool
		taskID string // the task to list configs of afterwards ("": a new task)
		params func(cfg map[string]any) (string, any)
	}{
		{"v0.1 set", "pushNotificationConfig.", false, t01.ID, func(c map[string]any) (string, any) {
			return "tasks/pushNotification/set", map[string]any{"id": t01.ID, "pushNotificationConfig": c}
		}},
		{"v0.3 set", "pushNotificationConfig.", false, t03.ID, func(c map[string]any) (string, any) {
			return "tasks/pushNotificationConfig/set", map[string]any{"taskId": t03.ID, "pushNotificationConfig": c}
		}},
		{"v1.0 create", "", true, t10.ID, func(c map[string]any) (string, any) {
			c["taskId"] = t10.ID
			return "CreateTaskPushNotificationConfig", c
		}},
		{"v0.1 send, new task", "pushNotification.", false, "", func(c map[string]any) (string, any) {
			return "tasks/send", map[string]any{"id": "push-fields-new", "message": v01Message("x", nil), "pushNotification": c}
		}},
		{"v0.1 send, existing task", "pushNotification.", false, t01.ID, func(c map[string]any) (string, any) {
			return "tasks/send", map[string]any{"id": t01.ID, "message": v01Message("x", nil), "pushNotification": c}
		}},
		{"v0.1 sendSubscribe", "pushNotification.", false, "", func(c map[string]any) (string, any) {
			return "tasks/sendSubscribe", map[string]any{"id": "push-fields-new-2", "message": v01Message("x", nil), "pushNotification": c}
		}},
		{"v0.3 message/send, new task", "configuration.pushNotificationConfig.", false, "", func(c map[string]any) (string, any) {
			return "message/send", map[string]any{"message": v03Message("x", nil), "configuration": map[string]any{"pushNotificationConfig": c}}
		}},
		{"v0.3 message/send, existing task", "configuration.pushNotificationConfig.", false, t03.ID, func(c map[string]any) (string, any) {
			return "message/send", map[string]any{"message": v03Message("x", map[string]any{"taskId": t03.ID}),
				"configuration": map[string]any{"pushNotificationConfig": c}}
		}},
		{"v0.3 message/stream", "configuration.pushNotificationConfig.", false, "", func(c map[string]any) (string, any) {
			return "message/stream", map[string]any{"message": v03Message("x", nil), "configuration": map[string]any{"pushNotificationConfig": c}}
		}},
		{"v1.0 SendMessage, existing task", "configuration.taskPushNotificationConfig.", true, t10.ID, func(c map[string]any) (string, any) {
			return "SendMessage", map[string]any{"message": v10Message("x", map[string]any{"taskId": t10.ID}),
				"configuration": map[string]any{"taskPushNotificationConfig": c}}
		}},
		{"v1.0 SendStreamingMessage", "configuration.taskPushNotificationConfig.", true, "", func(c map[string]any) (string, any) {
			return "SendStreamingMessage", map[string]any{"message": v10Message("x", nil),
				"configuration": map[string]any{"taskPushNotificationConfig": c}}
		}},
	}
	for _, p := range paths {
		for _, b := range bads {
			if b.field == "id" && strings.HasPrefix(p.name, "v0.1") {
				continue // a v0.1 config has no id
			}
			t.Run(p.name+"/"+b.name, func(t *testing.T) {
				v0x := map[string]any{"url": "https://hooks.example.test/h"}
				v10 := map[string]any{"url": "https://hooks.example.test/h"}
				b.set(v0x, v10)
				cfg, want := v0x, p.prefix+b.field
				if p.v10 {
					cfg, want = v10, p.prefix+b.field10
				}
				res := r.callRaw(p.params(cfg))
				if got := refusedField(t, res); got != want {
					t.Errorf("refused field %q (%s), want %q", got, res.Error.Message, want)
				}
				if strings.Contains(res.Error.Message, "s3cret") || strings.Contains(res.Error.Message, "X-Injected") {
					t.Errorf("the error quotes the value: %s", res.Error.Message)
				}
				if p.taskID != "" {
					var list struct{ Configs []json.RawMessage }
					r.call("ListTaskPushNotificationConfigs", map[string]any{"taskId": p.taskID}, &list)
					if len(list.Configs) != 0 {
						t.Errorf("configs stored anyway: %s", list.Configs)
					}
				}
			})
		}
	}
	var after struct{ TotalSize int }
	r.call("ListTasks", map[string]any{}, &after)
	if after.TotalSize != before.TotalSize {
		t.Errorf("%d tasks created by refused sends", after.TotalSize-before.TotalSize)
	}
}
