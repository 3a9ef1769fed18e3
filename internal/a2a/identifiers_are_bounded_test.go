package a2a

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIdentifiersAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxIDBytes+1)
	at := strings.Repeat("x", MaxIDBytes)
	for _, tc := range []struct {
		name   string
		change func(p *SendParams)
		field  string // "" when the send is valid
		limit  int
	}{
		{"valid", func(*SendParams) {}, "", 0},
		{"ids at the limit", func(p *SendParams) {
			p.Message.MessageID, p.Message.ContextID, p.Message.TaskID, p.ContextID, p.TaskID = at, at, at, at, at
			p.Message.ReferenceTaskIDs = []string{at}
		}, "", 0},
		{"non-ASCII ids", func(p *SendParams) { p.Message.MessageID, p.ContextID = "méssage-☃", "контекст" }, "", 0},
		{"messageId too long", func(p *SendParams) { p.Message.MessageID = long }, "message.messageId", MaxIDBytes},
		{"messageId CRLF", func(p *SendParams) { p.Message.MessageID = "m\r\n" }, "message.messageId", 0},
		{"message contextId too long", func(p *SendParams) { p.Message.ContextID = long }, "message.contextId", MaxIDBytes},
		{"message contextId NUL", func(p *SendParams) { p.Message.ContextID = "c\x00" }, "message.contextId", 0},
		{"message taskId LF", func(p *SendParams) { p.Message.TaskID = "t\n" }, "message.taskId", 0},
		{"message taskId too long", func(p *SendParams) { p.Message.TaskID = long }, "message.taskId", MaxIDBytes},
		{"referenceTaskIds", func(p *SendParams) { p.Message.ReferenceTaskIDs = []string{"ok", "r\x1b"} }, "message.referenceTaskIds[1]", 0},
		{"v0.1 sessionId too long", func(p *SendParams) { p.ContextID = long }, "contextId", MaxIDBytes},
		{"v0.1 sessionId control", func(p *SendParams) { p.ContextID = "s\u009b" }, "contextId", 0},
		{"v0.1 client-chosen id", func(p *SendParams) { p.TaskID, p.ClientChosenID = "a\r\nb\x00c{}", true }, "taskId", 0},
		{"v0.1 client-chosen id too long", func(p *SendParams) { p.TaskID, p.ClientChosenID = long, true }, "taskId", MaxIDBytes},
		{"inline push config", func(p *SendParams) { p.PushConfig = &PushConfig{URL: "https://h.example.com", Token: "a\nb"} },
			"pushNotificationConfig.token", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := SendParams{Dialect: V03, Message: Message{MessageID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}}
			tc.change(&p)
			err := p.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("valid send refused: %v", err)
				}
				return
			}
			wantFieldError(t, err, tc.field, tc.limit)
		})
	}
}

// The ids a codec takes from params (task ids, v0.1's client-chosen id,
// push config ids of get and delete) refuse control characters as well as
// lengths over the limit.
func TestDecodedIDsRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, params, field string
		decode              func(json.RawMessage) error
	}{
		{"v0.1 send id", `{"id":"a\r\nb\u0000c{}","message":{"role":"user","parts":[{"type":"text","text":"x"}]}}`, "id",
			func(p json.RawMessage) error { _, _, err := v01{}.decodeSend(p); return err }},
		{"v0.1 set id", `{"id":"a\nb","pushNotificationConfig":{"url":"https://h.example.com"}}`, "id",
			func(p json.RawMessage) error { _, err := v01{}.decodePushSet(p); return err }},
		{"v0.3 get id", `{"id":"t\u0000"}`, "id",
			func(p json.RawMessage) error { _, _, err := v03{}.decodeTaskQuery(p); return err }},
		{"v0.3 set taskId", `{"taskId":"t\r","pushNotificationConfig":{"url":"https://h.example.com"}}`, "taskId",
			func(p json.RawMessage) error { _, err := v03{}.decodePushSet(p); return err }},
		{"v0.3 get config id", `{"id":"t","pushNotificationConfigId":"` + strings.Repeat("c", MaxIDBytes+1) + `"}`, "pushNotificationConfigId",
			func(p json.RawMessage) error { _, _, err := v03{}.decodePushRef(p); return err }},
		{"v1.0 delete config id", `{"taskId":"t","id":"c\u007f"}`, "id",
			func(p json.RawMessage) error { _, _, err := v10{}.decodePushRef(p); return err }},
		{"v1.0 create taskId", `{"taskId":"t\u0085","url":"https://h.example.com"}`, "taskId",
			func(p json.RawMessage) error { _, err := v10{}.decodePushSet(p); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.decode(json.RawMessage(tc.params))
			var limit int
			if strings.Contains(tc.params, strings.Repeat("c", MaxIDBytes+1)) {
				limit = MaxIDBytes
			}
			wantFieldError(t, err, tc.field, limit)
		})
	}
}

func FuzzSendIdentifiers(f *testing.F) {
	f.Add("m1", "c1", "t1", "", "", "r1")
	f.Add("a\r\nb\x00c{}", "", "", "a\r\nb\x00c{}", "s", "")
	f.Add(strings.Repeat("m", 257), "c\u0085", "t\x7f", strings.Repeat("i", 256), strings.Repeat("s", 257), "\t")
	f.Fuzz(func(t *testing.T, messageID, contextID, taskID, clientID, sessionID, refID string) {
		p := SendParams{Dialect: V03, TaskID: clientID, ContextID: sessionID,
			Message: Message{MessageID: messageID, ContextID: contextID, TaskID: taskID, ReferenceTaskIDs: []string{refID}}}
		err := p.Validate()
		if err != nil {
			checkRefusal(t, err, "")
			return
		}
		for _, id := range []string{messageID, contextID, taskID, clientID, sessionID, refID} {
			if len(id) > MaxIDBytes || !headerSafeText(id) {
				t.Fatalf("accepted id %q", id)
			}
		}
	})
}
