package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
)

// validatingService is fakeService checking what it would store, as
// ingest.Service does.
type validatingService struct{ fakeService }

func (v validatingService) Send(ctx context.Context, p a2a.SendParams) (a2a.TaskView, error) {
	if err := p.Validate(); err != nil {
		return a2a.TaskView{}, err
	}
	return v.fakeService.Send(ctx, p)
}

func (v validatingService) SetPushConfig(ctx context.Context, c a2a.PushConfig) (a2a.PushConfig, error) {
	if err := c.Validate(); err != nil {
		return a2a.PushConfig{}, err
	}
	return v.fakeService.SetPushConfig(ctx, c)
}

// Each dialect's client is told the field it sent, spelled as it sent it,
// and the limit, in error.data (v1.0: a google.rpc.BadRequest).
func TestRefusedFieldsAreNamedAsTheDialectSpellsThem(t *testing.T) {
	t.Parallel()
	app := newTestAppWith(validatingService{}, nil)
	long := strings.Repeat("t", a2a.MaxTokenBytes+1)
	v10 := map[string]string{"A2A-Version": "1.0"}
	for _, tc := range []struct {
		name, method, params string
		header               map[string]string
		data                 string
	}{
		{"v0.1 set token", "tasks/pushNotification/set",
			`{"id":"v01","pushNotificationConfig":{"url":"https://h.example.com","token":"` + long + `"}}`, nil,
			`{"field":"pushNotificationConfig.token","limit":2048}`},
		{"v0.1 send inline credentials", "tasks/send",
			`{"id":"new","message":{"role":"user","parts":[{"type":"text","text":"x"}]},"pushNotification":{"url":"https://h.example.com","authentication":{"schemes":["Bearer"],"credentials":"a\r\nb"}}}`, nil,
			`{"field":"pushNotification.authentication.credentials"}`},
		{"v0.1 send sessionId", "tasks/send",
			`{"id":"new","sessionId":"s\u0000","message":{"role":"user","parts":[{"type":"text","text":"x"}]}}`, nil,
			`{"field":"sessionId"}`},
		{"v0.3 set userinfo", "tasks/pushNotificationConfig/set",
			`{"taskId":"v03","pushNotificationConfig":{"url":"https://u:p@h.example.com"}}`, nil,
			`{"field":"pushNotificationConfig.url"}`},
		{"v0.3 send inline token", "message/send",
			`{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},"configuration":{"pushNotificationConfig":{"url":"https://h.example.com","token":"` + long + `"}}}`, nil,
			`{"field":"configuration.pushNotificationConfig.token","limit":2048}`},
		{"v0.3 send messageId", "message/send",
			`{"message":{"role":"user","messageId":"` + strings.Repeat("m", 257) + `","parts":[{"kind":"text","text":"x"}]}}`, nil,
			`{"field":"message.messageId","limit":256}`},
		{"v1.0 create scheme", "CreateTaskPushNotificationConfig",
			`{"taskId":"v10","url":"https://h.example.com","authentication":{"scheme":"Bearer x","credentials":"c"}}`, v10,
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"authentication.scheme","description":"authentication.scheme must be an HTTP auth scheme such as Bearer or Basic (letters, digits and !#$%&'*+-.^_` + "`" + `|~), byte 6 is not"}]}]`},
		{"v1.0 send inline id", "SendMessage",
			`{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"id":"c\n","url":"https://h.example.com"}}}`, v10,
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"configuration.taskPushNotificationConfig.id","description":"configuration.taskPushNotificationConfig.id contains a control character (U+000A) at byte 1"}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, body, r := post(t, app, rpcBody("1", tc.method, tc.params), tc.header)
			if r.Error == nil || r.Error.Code != CodeInvalidParams {
				t.Fatalf("answer %s, want -32602", body)
			}
			if !sameJSON(r.Error.Data, []byte(tc.data)) {
				t.Fatalf("data = %s\nwant   %s", r.Error.Data, tc.data)
			}
			var field string
			if d := string(r.Error.Data); strings.HasPrefix(d, "{") {
				var fd fieldData
				_ = json.Unmarshal(r.Error.Data, &fd)
				field = fd.Field
			} else {
				var details []a2a.BadRequest // the ErrorInfo, then the BadRequest
				_ = json.Unmarshal(r.Error.Data, &details)
				field = details[len(details)-1].FieldViolations[0].Field
			}
			if !strings.HasPrefix(r.Error.Message, "invalid params: "+field+" ") {
				t.Errorf("message %q does not start with the field %s", r.Error.Message, field)
			}
		})
	}
}
