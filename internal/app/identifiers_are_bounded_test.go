package app

import (
	"strings"
	"testing"
)

// The ids a client chooses are at most 256 bytes without control
// characters, in every dialect; an id at the limit is still taken.
func TestIdentifiersAreBounded(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	long := strings.Repeat("i", 257)
	for _, tc := range []struct {
		name, method string
		params       map[string]any
		field        string
	}{
		{"v0.1 id with CR LF NUL", "tasks/send", map[string]any{"id": "a\r\nb\u0000c{}", "message": v01Message("x", nil)}, "id"},
		{"v0.1 id too long", "tasks/send", map[string]any{"id": long, "message": v01Message("x", nil)}, "id"},
		{"v0.1 sessionId with LF", "tasks/send", map[string]any{"id": "ids-session", "sessionId": "s\n", "message": v01Message("x", nil)}, "sessionId"},
		{"v0.1 sessionId too long", "tasks/send", map[string]any{"id": "ids-session", "sessionId": long, "message": v01Message("x", nil)}, "sessionId"},
		{"v0.3 messageId too long", "message/send", map[string]any{"message": v03Message("x", map[string]any{"messageId": long})}, "message.messageId"},
		{"v0.3 messageId with NUL", "message/send", map[string]any{"message": v03Message("x", map[string]any{"messageId": "m\u0000"})}, "message.messageId"},
		{"v0.3 contextId too long", "message/send", map[string]any{"message": v03Message("x", map[string]any{"contextId": long})}, "message.contextId"},
		{"v0.3 contextId with ESC", "message/stream", map[string]any{"message": v03Message("x", map[string]any{"contextId": "c\u001b[2J"})}, "message.contextId"},
		{"v0.3 taskId with CR", "message/send", map[string]any{"message": v03Message("x", map[string]any{"taskId": "t\r"})}, "message.taskId"},
		{"v0.3 referenceTaskIds", "message/send", map[string]any{"message": v03Message("x", map[string]any{"referenceTaskIds": []string{long}})}, "message.referenceTaskIds[0]"},
		{"v1.0 messageId with LF", "SendMessage", map[string]any{"message": v10Message("x", map[string]any{"messageId": "m\n"})}, "message.messageId"},
		{"v1.0 contextId too long", "SendStreamingMessage", map[string]any{"message": v10Message("x", map[string]any{"contextId": long})}, "message.contextId"},
		{"v0.3 get id with NUL", "tasks/get", map[string]any{"id": "t\u0000"}, "id"},
		{"v1.0 get config id too long", "GetTaskPushNotificationConfig", map[string]any{"taskId": "t", "id": long}, "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := r.callRaw(tc.method, tc.params)
			if got := refusedField(t, res); got != tc.field {
				t.Errorf("refused field %q (%s), want %q", got, res.Error.Message, tc.field)
			}
		})
	}
	at := strings.Repeat("i", 256)
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("x", map[string]any{"messageId": at, "contextId": at})}, &task)
	if task.ContextID != at {
		t.Errorf("contextId at the limit came back as %q", task.ContextID)
	}
	var t01 struct{ ID string }
	r.call("tasks/send", map[string]any{"id": at, "sessionId": at, "message": v01Message("x", nil)}, &t01)
	if t01.ID != at {
		t.Errorf("v0.1 id at the limit came back as %q", t01.ID)
	}
}
