package jsonrpc

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"

	"github.com/a2arelay/relay/internal/secrets"
)

const (
	maskToken = "tok-0123456789-WXYZ" // long: masked to its last 4
	maskCred  = "s3cr"                // short: masked entirely
)

// secretService is fakeService whose stored push configs carry secrets:
// config "with" has a token and credentials, "none" has neither (its
// authentication has a scheme only). Set answers what it was given.
type secretService struct{ fakeService }

func secretConfigs(taskID string) map[string]a2a.PushConfig {
	return map[string]a2a.PushConfig{
		"with": {ID: "with", TaskID: taskID, URL: "https://hooks.example.com/with", Token: maskToken,
			Auth: &a2a.PushAuth{Schemes: []string{"Bearer"}, Credentials: maskCred}},
		"none": {ID: "none", TaskID: taskID, URL: "https://hooks.example.com/none",
			Auth: &a2a.PushAuth{Schemes: []string{"Bearer"}}},
	}
}

func (s secretService) GetPushConfig(_ context.Context, taskID, id string) (a2a.PushConfig, error) {
	if _, err := s.lookup(taskID); err != nil {
		return a2a.PushConfig{}, err
	}
	if id == "" { // v0.1 names no config
		id = "with"
	}
	c, ok := secretConfigs(taskID)[id]
	if !ok {
		return a2a.PushConfig{}, a2a.ErrTaskNotFound(taskID)
	}
	return c, nil
}

func (s secretService) ListPushConfigs(_ context.Context, taskID string) ([]a2a.PushConfig, error) {
	if _, err := s.lookup(taskID); err != nil {
		return nil, err
	}
	cs := secretConfigs(taskID)
	return []a2a.PushConfig{cs["with"], cs["none"]}, nil
}

// secretFields collects the values of every "token" and "credentials"
// member anywhere in v, and counts the objects that have a "url".
func secretFields(v any, tokens, creds *[]string, configs *int) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["url"]; ok {
			*configs++
		}
		for k, x := range v {
			switch s, _ := x.(string); k {
			case "token":
				*tokens = append(*tokens, s)
			case "credentials":
				*creds = append(*creds, s)
			default:
				secretFields(x, tokens, creds, configs)
			}
		}
	case []any:
		for _, x := range v {
			secretFields(x, tokens, creds, configs)
		}
	}
}

// TestPushAnswersMaskSecrets: the set, get and list answers of every
// dialect show the token and credentials masked, and a config without them
// shows none.
func TestPushAnswersMaskSecrets(t *testing.T) {
	t.Parallel()
	app := newTestAppWith(secretService{}, nil)
	masked := []string{secrets.Mask(maskToken)}
	maskedCred := []string{secrets.Mask(maskCred)}
	if masked[0] != "****WXYZ" || maskedCred[0] != "****" {
		t.Fatalf("Mask = %q, %q", masked, maskedCred)
	}
	v01Set := func(token, creds string) string {
		return `{"id":"v01","pushNotificationConfig":{"url":"https://hooks.example.com/1"` + token +
			`,"authentication":{"schemes":["Bearer"]` + creds + `}}}`
	}
	v03Set := func(token, creds string) string {
		return `{"taskId":"v03","pushNotificationConfig":{"id":"c","url":"https://hooks.example.com/3"` + token +
			`,"authentication":{"schemes":["Bearer"]` + creds + `}}}`
	}
	v10Set := func(token, creds string) string {
		return `{"taskId":"v10","id":"c","url":"https://hooks.example.com/10"` + token +
			`,"authentication":{"scheme":"Bearer"` + creds + `}}`
	}
	tok, cred := `,"token":"`+maskToken+`"`, `,"credentials":"`+maskCred+`"`
	for _, tt := range []struct {
		name, method, params string
		secret               bool // the token and credentials are there, masked
		configs              int
	}{
		{"v0.1 set", "tasks/pushNotification/set", v01Set(tok, cred), true, 1},
		{"v0.1 set, no token", "tasks/pushNotification/set", v01Set("", ""), false, 1},
		{"v0.1 get", "tasks/pushNotification/get", `{"id":"v01"}`, true, 1},
		{"v0.3 set", "tasks/pushNotificationConfig/set", v03Set(tok, cred), true, 1},
		{"v0.3 set, no token", "tasks/pushNotificationConfig/set", v03Set("", ""), false, 1},
		{"v0.3 get", "tasks/pushNotificationConfig/get", `{"id":"v03","pushNotificationConfigId":"with"}`, true, 1},
		{"v0.3 get, no token", "tasks/pushNotificationConfig/get", `{"id":"v03","pushNotificationConfigId":"none"}`, false, 1},
		{"v0.3 list", "tasks/pushNotificationConfig/list", `{"id":"v03"}`, true, 2},
		{"v1.0 create", "CreateTaskPushNotificationConfig", v10Set(tok, cred), true, 1},
		{"v1.0 create, no token", "CreateTaskPushNotificationConfig", v10Set("", ""), false, 1},
		{"v1.0 get", "GetTaskPushNotificationConfig", `{"taskId":"v10","id":"with"}`, true, 1},
		{"v1.0 get, no token", "GetTaskPushNotificationConfig", `{"taskId":"v10","id":"none"}`, false, 1},
		{"v1.0 list", "ListTaskPushNotificationConfigs", `{"taskId":"v10"}`, true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, raw, r := post(t, app, rpcBody("1", tt.method, tt.params), nil)
			if r.Error != nil {
				t.Fatalf("error answer: %s", raw)
			}
			if strings.Contains(raw, maskToken) || strings.Contains(raw, "0123456789") || strings.Contains(raw, maskCred) {
				t.Fatalf("answer shows a secret: %s", raw)
			}
			var res any
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			var tokens, creds []string
			configs := 0
			secretFields(res, &tokens, &creds, &configs)
			if configs != tt.configs {
				t.Fatalf("%d configs in %s, want %d", configs, r.Result, tt.configs)
			}
			wantTok, wantCred := masked, maskedCred
			if !tt.secret {
				wantTok, wantCred = nil, nil
			}
			if !slices.Equal(tokens, wantTok) || !slices.Equal(creds, wantCred) {
				t.Fatalf("tokens %q, credentials %q in %s; want %q, %q", tokens, creds, r.Result, wantTok, wantCred)
			}
		})
	}
}
