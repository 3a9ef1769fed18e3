package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func validPush() PushConfig {
	return PushConfig{ID: "c1", TaskID: "t1", URL: "https://hooks.example.com/h", Token: "tok",
		Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: "cred"}}
}

// wantFieldError checks that err is a *FieldError for field with limit.
func wantFieldError(t *testing.T, err error, field string, limit int) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *FieldError for %s", err, err, field)
	}
	if fe.Field != field || fe.Limit != limit {
		t.Fatalf("refused %s (limit %d): %v; want %s (limit %d)", fe.Field, fe.Limit, err, field, limit)
	}
	if e, known := AsError(err); !known || e.Code != CodeInvalidParams || !strings.Contains(e.Message, field) {
		t.Fatalf("answered as %+v, want -32602 naming %s", e, field)
	}
}

func TestPushConfigFieldsAreValidated(t *testing.T) {
	t.Parallel()
	const p = "pushNotificationConfig."
	for _, tc := range []struct {
		name   string
		change func(c *PushConfig)
		field  string // "" when the config is valid
		limit  int
	}{
		{"valid", func(*PushConfig) {}, "", 0},
		{"everything at its limit", func(c *PushConfig) {
			c.ID, c.Token = strings.Repeat("i", MaxIDBytes), strings.Repeat("t", MaxTokenBytes)
			c.Auth = &PushAuth{Schemes: []string{strings.Repeat("S", MaxSchemeBytes)}, Credentials: strings.Repeat("c", MaxCredentialsBytes)}
			c.URL = "https://hooks.example.com/" + strings.Repeat("u", MaxURLBytes-len("https://hooks.example.com/"))
		}, "", 0},
		{"no id, token or authentication", func(c *PushConfig) { c.ID, c.Token, c.Auth = "", "", nil }, "", 0},
		{"empty scheme (Bearer)", func(c *PushConfig) { c.Auth.Schemes = []string{""} }, "", 0},
		{"token with non-ASCII text", func(c *PushConfig) { c.Token = "jeton-é-☃" }, "", 0},
		{"@ in path and query", func(c *PushConfig) { c.URL = "https://hooks.example.com/a@b?c=d@e" }, "", 0},

		{"token too long", func(c *PushConfig) { c.Token = strings.Repeat("t", MaxTokenBytes+1) }, p + "token", MaxTokenBytes},
		{"token 2 MB", func(c *PushConfig) { c.Token = strings.Repeat("t", 2<<20) }, p + "token", MaxTokenBytes},
		{"token CRLF", func(c *PushConfig) { c.Token = "abc\r\nX-Injected: 1" }, p + "token", 0},
		{"token LF", func(c *PushConfig) { c.Token = "abc\ndef" }, p + "token", 0},
		{"token NUL", func(c *PushConfig) { c.Token = "abc\x00" }, p + "token", 0},
		{"token tab", func(c *PushConfig) { c.Token = "a\tb" }, p + "token", 0},
		{"token DEL", func(c *PushConfig) { c.Token = "a\x7fb" }, p + "token", 0},
		{"token C1 control", func(c *PushConfig) { c.Token = "a\u0085b" }, p + "token", 0},
		{"credentials too long", func(c *PushConfig) { c.Auth.Credentials = strings.Repeat("c", MaxCredentialsBytes+1) },
			p + "authentication.credentials", MaxCredentialsBytes},
		{"credentials CR", func(c *PushConfig) { c.Auth.Credentials = "x\ry" }, p + "authentication.credentials", 0},
		{"scheme too long", func(c *PushConfig) { c.Auth.Schemes = []string{strings.Repeat("S", MaxSchemeBytes+1)} },
			p + "authentication.schemes[0]", MaxSchemeBytes},
		{"scheme with a space", func(c *PushConfig) { c.Auth.Schemes = []string{"Bearer x"} }, p + "authentication.schemes[0]", 0},
		{"scheme LF, second", func(c *PushConfig) { c.Auth.Schemes = []string{"Bearer", "Basic\n"} }, p + "authentication.schemes[1]", 0},
		{"too many schemes", func(c *PushConfig) { c.Auth.Schemes = make([]string, MaxSchemes+1) }, p + "authentication.schemes", 0},
		{"config id too long", func(c *PushConfig) { c.ID = strings.Repeat("i", MaxIDBytes+1) }, p + "id", MaxIDBytes},
		{"config id NUL", func(c *PushConfig) { c.ID = "a\x00b" }, p + "id", 0},
		{"task id CRLF", func(c *PushConfig) { c.TaskID = "t\r\n" }, p + "taskId", 0},
		{"url too long", func(c *PushConfig) { c.URL = "https://hooks.example.com/" + strings.Repeat("u", MaxURLBytes) }, p + "url", MaxURLBytes},
		{"url not http", func(c *PushConfig) { c.URL = "ftp://hooks.example.com/h" }, p + "url", 0},
		{"url relative", func(c *PushConfig) { c.URL = "/h" }, p + "url", 0},
		{"url with a control character", func(c *PushConfig) { c.URL = "https://hooks.example.com/\r\nh" }, p + "url", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validPush()
			tc.change(&c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			wantFieldError(t, err, tc.field, tc.limit)
		})
	}
}

func TestWebhookURLsWithUserinfoAreRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://alice:s3cretpw@hooks.example.com/h",
		"https://alice@hooks.example.com/h",
		"http://:s3cretpw@hooks.example.com:8080/h",
		"https://@hooks.example.com/h",
		"HTTPS://alice:s3cretpw@hooks.example.com/h",
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			c := validPush()
			c.URL = u
			err := c.Validate()
			wantFieldError(t, err, "pushNotificationConfig.url", 0)
			if strings.Contains(err.Error(), "s3cretpw") || strings.Contains(err.Error(), "alice") {
				t.Errorf("the error quotes the URL's credentials: %v", err)
			}
		})
	}
}

// validatingService is fakeService checking what it would store, as
// ingest.Service does.
type validatingService struct{ fakeService }

func (v validatingService) Send(ctx context.Context, p SendParams) (TaskView, error) {
	if err := p.Validate(); err != nil {
		return TaskView{}, err
	}
	return v.fakeService.Send(ctx, p)
}

func (v validatingService) SetPushConfig(ctx context.Context, c PushConfig) (PushConfig, error) {
	if err := c.Validate(); err != nil {
		return PushConfig{}, err
	}
	return v.fakeService.SetPushConfig(ctx, c)
}

// Each dialect's client is told the field it sent, spelled as it sent it,
// and the limit, in error.data (v1.0: a google.rpc.BadRequest).
func TestRefusedFieldsAreNamedAsTheDialectSpellsThem(t *testing.T) {
	t.Parallel()
	app := newTestAppWith(validatingService{}, nil)
	long := strings.Repeat("t", MaxTokenBytes+1)
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
			`[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"authentication.scheme","description":"authentication.scheme must be an HTTP auth scheme such as Bearer or Basic (letters, digits and !#$%&'*+-.^_` + "`" + `|~), byte 6 is not"}]}]`},
		{"v1.0 send inline id", "SendMessage",
			`{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"id":"c\n","url":"https://h.example.com"}}}`, v10,
			`[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"configuration.taskPushNotificationConfig.id","description":"configuration.taskPushNotificationConfig.id contains a control character (U+000A) at byte 1"}]}]`},
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
				var br []badRequest
				_ = json.Unmarshal(r.Error.Data, &br)
				field = br[0].FieldViolations[0].Field
			}
			if !strings.HasPrefix(r.Error.Message, "invalid params: "+field+" ") {
				t.Errorf("message %q does not start with the field %s", r.Error.Message, field)
			}
		})
	}
}

// problemRE matches every FieldError.Problem relay writes: numbers and
// fixed text only, never a part of the refused value.
var problemRE = regexp.MustCompile(`^(is longer than \d+ bytes|contains a control character \(U\+[0-9A-F]{4,6}\) at byte \d+|` +
	`has more than \d+ entries|must be an absolute http or https URL|` +
	regexp.QuoteMeta("must not carry user:password@ (give credentials in authentication.credentials)") + `|` +
	regexp.QuoteMeta("must be an HTTP auth scheme such as Bearer or Basic (letters, digits and !#$%&'*+-.^_`|~), byte ") + `\d+ is not)$`)

// checkRefusal fails unless err is a *FieldError that quotes nothing the
// client sent and that every dialect can answer.
func checkRefusal(t *testing.T, err error, prefix string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want *FieldError", err, err)
	}
	if !strings.HasPrefix(fe.Field, prefix) || !problemRE.MatchString(fe.Problem) {
		t.Fatalf("unexpected refusal %q / %q", fe.Field, fe.Problem)
	}
	for _, cd := range []codec{v01{}, v03{}, v10{}} {
		for _, send := range []bool{true, false} {
			e, known := AsError(inWire(cd, send, err))
			if !known || e.Code != CodeInvalidParams {
				t.Fatalf("%T answers %+v", cd, e)
			}
			if _, merr := json.Marshal(e.toWire(dialectOf(cd))); merr != nil {
				t.Fatal(merr)
			}
		}
	}
}

// headerSafeText reports whether s can go in a header value as it is.
func headerSafeText(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func FuzzPushConfigValidate(f *testing.F) {
	f.Add("c1", "t1", "https://hooks.example.com/h", "tok", "Bearer", "cred")
	f.Add("", "", "https://alice:pw@hooks.example.com/h", "", "", "")
	f.Add("a\r\nb", "t\x00", "http://h.example.com:8080/a@b?c", "a\tb", "Bearer x", "x\u0085y")
	f.Add(strings.Repeat("i", 257), "t", "HTTPS://@h/", strings.Repeat("t", 2049), strings.Repeat("S", 65), "")
	f.Fuzz(func(t *testing.T, id, taskID, rawURL, token, scheme, creds string) {
		c := PushConfig{ID: id, TaskID: taskID, URL: rawURL, Token: token, Auth: &PushAuth{Schemes: []string{scheme}, Credentials: creds}}
		err := c.Validate()
		if err != nil {
			checkRefusal(t, err, "pushNotificationConfig.")
			return
		}
		for _, v := range []struct {
			s     string
			limit int
		}{{id, MaxIDBytes}, {taskID, MaxIDBytes}, {token, MaxTokenBytes}, {creds, MaxCredentialsBytes}, {scheme, MaxSchemeBytes}} {
			if len(v.s) > v.limit || !headerSafeText(v.s) {
				t.Fatalf("accepted %q (limit %d)", v.s, v.limit)
			}
		}
		if strings.ContainsAny(scheme, " \t\"(),/:;<=>?@[\\]{}") {
			t.Fatalf("accepted scheme %q", scheme)
		}
		u, perr := url.Parse(rawURL)
		if perr != nil || u.User != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || len(rawURL) > MaxURLBytes {
			t.Fatalf("accepted url %q", rawURL)
		}
	})
}
