package a2a

import (
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
	if e, known := AsError(err); !known || e.Kind != KindInvalidParams || !strings.Contains(e.Message, field) {
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
			if !known || e.Kind != KindInvalidParams {
				t.Fatalf("%T answers %+v", cd, e)
			}
			if _, merr := json.Marshal(e.Details()); merr != nil {
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
