package a2a

import (
	"encoding/json"
	"strings"
	"testing"
)

// goNames are fragments of Go type names that must never reach a client.
var goNames = []string{"struct", "a2a.", "map[", "RawMessage", "reflect", "*int", "*bool"}

// jsonEq reports whether a and b are the same JSON value.
func jsonEq(t testing.TB, got, want any) {
	t.Helper()
	norm := func(v any) string {
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		default:
			var err error
			if b, err = json.Marshal(x); err != nil {
				t.Fatalf("marshal %T: %v", v, err)
			}
		}
		var a any
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		out, _ := json.Marshal(a)
		return string(out)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", g, w)
	}
}

// wantInvalidParams checks err is a client-safe -32602 (an *Error or a
// *FieldError) containing substr.
func wantInvalidParams(t testing.TB, err error, substr string) {
	t.Helper()
	e, known := AsError(err)
	if !known {
		t.Fatalf("err = %v (%T), want *Error or *FieldError", err, err)
	}
	if e.Kind != KindInvalidParams {
		t.Fatalf("kind = %s, want %s (%s)", e.Kind, KindInvalidParams, e.Message)
	}
	if !strings.Contains(e.Message, substr) {
		t.Errorf("message %q does not contain %q", e.Message, substr)
	}
	for _, n := range goNames {
		if strings.Contains(e.Message, n) {
			t.Errorf("message %q leaks Go name %q", e.Message, n)
		}
	}
}

func intp(n int) *int { return &n }

func TestDecodeSend(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		c      codec
		params string
		want   SendParams
		wantHL *int
	}{{
		name: "v0.1 tasks/send",
		c:    v01{},
		params: `{"id":"t-01","sessionId":"s-01","acceptedOutputModes":["text"],"historyLength":2,
			"message":{"role":"user","parts":[{"type":"text","text":"hello"},
				{"type":"file","file":{"name":"a.txt","mimeType":"text/plain","bytes":"aGk="}},
				{"type":"data","data":{"k":1}}],"metadata":{"m":1}},
			"pushNotification":{"url":"https://hooks.example.com/a2a","token":"tok",
				"authentication":{"schemes":["Bearer"],"credentials":"secret"}},
			"metadata":{"x":"y"}}`,
		want: SendParams{Dialect: V01, TaskID: "t-01", ClientChosenID: true, ContextID: "s-01", Blocking: true,
			Message: Message{Role: RoleUser, Metadata: json.RawMessage(`{"m":1}`), Parts: []Part{
				{Kind: PartText, Text: "hello"},
				{Kind: PartFile, File: &File{Name: "a.txt", MimeType: "text/plain", Bytes: "aGk="}},
				{Kind: PartData, Data: json.RawMessage(`{"k":1}`)}}},
			PushConfig: &PushConfig{URL: "https://hooks.example.com/a2a", Token: "tok",
				Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: "secret"}},
			Metadata: json.RawMessage(`{"x":"y"}`)},
		wantHL: intp(2),
	}, {
		name: "v0.3 message/send",
		c:    v03{},
		params: `{"message":{"kind":"message","messageId":"msg-1","role":"user","contextId":"ctx-3","taskId":"task-3",
				"referenceTaskIds":["t0"],"parts":[{"kind":"text","text":"hi"},
				{"kind":"file","file":{"uri":"https://example.com/f.png","mimeType":"image/png"}},
				{"kind":"data","data":{"a":[1,2]}}]},
			"configuration":{"acceptedOutputModes":["text/plain"],"blocking":false,"historyLength":0,
				"pushNotificationConfig":{"id":"cfg-1","url":"https://hooks.example.com/x","token":"tk",
					"authentication":{"schemes":["Bearer"],"credentials":"c"}}},
			"metadata":{"k":"v"}}`,
		want: SendParams{Dialect: V03, TaskID: "task-3", ContextID: "ctx-3",
			Message: Message{MessageID: "msg-1", Role: RoleUser, TaskID: "task-3", ContextID: "ctx-3",
				ReferenceTaskIDs: []string{"t0"}, Parts: []Part{
					{Kind: PartText, Text: "hi"},
					{Kind: PartFile, File: &File{URI: "https://example.com/f.png", MimeType: "image/png"}},
					{Kind: PartData, Data: json.RawMessage(`{"a":[1,2]}`)}}},
			PushConfig: &PushConfig{ID: "cfg-1", URL: "https://hooks.example.com/x", Token: "tk",
				Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: "c"}},
			Metadata: json.RawMessage(`{"k":"v"}`)},
		wantHL: intp(0),
	}, {
		name:   "v0.3 defaults to blocking",
		c:      v03{},
		params: `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]}}`,
		want: SendParams{Dialect: V03, Blocking: true,
			Message: Message{MessageID: "m", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}},
	}, {
		name: "v1.0 SendMessage",
		c:    v10{},
		params: `{"tenant":"","message":{"messageId":"msg-10","role":"ROLE_USER","contextId":"ctx-10",
				"extensions":["https://ext.example.com"],"unknownField":true,"parts":[{"text":"hello"},
				{"raw":"aGk=","mediaType":"text/plain","filename":"a.txt"},
				{"url":"https://example.com/b.png","mediaType":"image/png"},
				{"data":{"n":1},"metadata":{"p":true}}]},
			"configuration":{"acceptedOutputModes":["text/plain"],"returnImmediately":true,"historyLength":null,
				"pageSize":null,"taskPushNotificationConfig":{"taskId":"","id":"","url":"https://hooks.example.com/v1",
					"token":"tk","authentication":{"scheme":"Bearer","credentials":"cr"}}},
			"metadata":{}}`,
		want: SendParams{Dialect: V10, ContextID: "ctx-10",
			Message: Message{MessageID: "msg-10", Role: RoleUser, ContextID: "ctx-10",
				Extensions: []string{"https://ext.example.com"}, Parts: []Part{
					{Kind: PartText, Text: "hello"},
					{Kind: PartFile, File: &File{Bytes: "aGk=", MimeType: "text/plain", Name: "a.txt"}},
					{Kind: PartFile, File: &File{URI: "https://example.com/b.png", MimeType: "image/png"}},
					{Kind: PartData, Data: json.RawMessage(`{"n":1}`), Metadata: json.RawMessage(`{"p":true}`)}}},
			PushConfig: &PushConfig{URL: "https://hooks.example.com/v1", Token: "tk", Dialect: V10,
				Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: "cr"}},
			Metadata: json.RawMessage(`{}`)},
	}, {
		name:   "v1.0 continue a task, blocking by default",
		c:      v10{},
		params: `{"message":{"messageId":"m2","role":"ROLE_USER","taskId":"task-9","parts":[{"text":""}]},"configuration":{}}`,
		want: SendParams{Dialect: V10, TaskID: "task-9", Blocking: true,
			Message: Message{MessageID: "m2", Role: RoleUser, TaskID: "task-9", Parts: []Part{{Kind: PartText}}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, hl, err := tc.c.decodeSend(json.RawMessage(tc.params))
			if err != nil {
				t.Fatalf("decodeSend: %v", err)
			}
			if tc.c == (v01{}) {
				if got.Message.MessageID == "" {
					t.Error("v0.1 message got no generated messageId")
				}
				got.Message.MessageID = ""
			}
			jsonEq(t, got, tc.want)
			if (hl == nil) != (tc.wantHL == nil) || (hl != nil && *hl != *tc.wantHL) {
				t.Errorf("historyLength = %v, want %v", hl, tc.wantHL)
			}
		})
	}
}

func TestDecodeSendErrors(t *testing.T) {
	t.Parallel()
	const msg01 = `"message":{"role":"user","parts":[{"type":"text","text":"x"}]}`
	const msg03 = `"message":{"role":"user","parts":[{"kind":"text","text":"x"}]}`
	cases := []struct {
		name, params, substr string
		c                    codec
	}{
		{"v0.1 no message", `{"id":"t"}`, "message is required", v01{}},
		{"v0.1 no id", `{` + msg01 + `}`, "id is required", v01{}},
		{"v0.1 long id", `{"id":"` + strings.Repeat("x", 257) + `",` + msg01 + `}`, "longer than 256", v01{}},
		{"v0.1 empty type", `{"id":"t","message":{"role":"user","parts":[{"type":"","text":"x"}]}}`, "unknown part kind", v01{}},
		{"v0.1 id number", `{"id":5,` + msg01 + `}`, "id: unexpected JSON number", v01{}},
		{"v0.3 no message", `{}`, "message is required", v03{}},
		{"v0.3 message null", `{"message":null}`, "message is required", v03{}},
		{"v0.3 empty kind", `{"message":{"role":"user","parts":[{"kind":"","text":"x"}]}}`, "message.parts[0]: unknown part kind", v03{}},
		{"v0.3 file without content", `{"message":{"role":"user","parts":[{"kind":"file","file":{}}]}}`, "file.bytes or file.uri", v03{}},
		{"v0.3 data without data", `{"message":{"role":"user","parts":[{"kind":"data"}]}}`, "needs data", v03{}},
		{"v0.3 message string", `{"message":"hello"}`, "message: unexpected JSON string", v03{}},
		{"v0.3 parts object", `{"message":{"parts":{}}}`, "unexpected JSON object", v03{}},
		{"v0.3 historyLength string", `{` + msg03 + `,"configuration":{"historyLength":"5"}}`, "historyLength", v03{}},
		{"v0.3 blocking string", `{` + msg03 + `,"configuration":{"blocking":"no"}}`, "blocking", v03{}},
		{"v0.3 params array", `[]`, "expected an object, got a JSON array", v03{}},
		{"v0.3 params null", `null`, "params are required", v03{}},
		{"v0.3 malformed", `{"message":`, "malformed JSON", v03{}},
		{"v1.0 no message", `{"configuration":{"returnImmediately":true}}`, "message is required", v10{}},
		{"v1.0 empty part", `{"message":{"role":"ROLE_USER","parts":[{}]}}`, "needs one of text, raw, url or data", v10{}},
		{"v1.0 text number", `{"message":{"role":"ROLE_USER","parts":[{"text":5}]}}`, "text: unexpected JSON number", v10{}},
		{"v1.0 returnImmediately string", `{"message":{"parts":[{"text":"x"}]},"configuration":{"returnImmediately":"yes"}}`, "returnImmediately", v10{}},
		{"v1.0 params string", `"x"`, "got a JSON string", v10{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := tc.c.decodeSend(json.RawMessage(tc.params))
			wantInvalidParams(t, err, tc.substr)
		})
	}
}

// sampleTask is one canonical task with everything a codec has to map.
func sampleTask() Task {
	return Task{ID: "task-1", ContextID: "ctx-1",
		Status: TaskStatus{State: StateInputRequired, Timestamp: "2025-01-02T03:04:05Z",
			Message: &Message{MessageID: "m-2", Role: RoleAgent, TaskID: "task-1", ContextID: "ctx-1",
				Parts: []Part{{Kind: PartText, Text: "Which city?"}}}},
		History: []Message{{MessageID: "m-1", Role: RoleUser, TaskID: "task-1", ContextID: "ctx-1",
			Parts: []Part{{Kind: PartText, Text: "Book a flight"}}}},
		Artifacts: []Artifact{{ArtifactID: "a-1", Name: "itinerary", Parts: []Part{
			{Kind: PartText, Text: "Draft"},
			{Kind: PartFile, File: &File{Name: "plan.pdf", MimeType: "application/pdf", Bytes: "JVBERi0="}},
			{Kind: PartFile, File: &File{URI: "https://example.com/x.png", MimeType: "image/png"}},
			{Kind: PartData, Data: json.RawMessage(`{"price":120}`)}}},
			{ArtifactID: "a-2", Parts: []Part{{Kind: PartText, Text: "second"}}}},
		Metadata: json.RawMessage(`{"trace":"abc"}`),
	}
}

const (
	wantTaskV01 = `{"id":"task-1","sessionId":"ctx-1",
		"status":{"state":"input-required","timestamp":"2025-01-02T03:04:05Z",
			"message":{"role":"agent","parts":[{"type":"text","text":"Which city?"}]}},
		"history":[{"role":"user","parts":[{"type":"text","text":"Book a flight"}]}],
		"artifacts":[{"name":"itinerary","index":0,"parts":[{"type":"text","text":"Draft"},
			{"type":"file","file":{"name":"plan.pdf","mimeType":"application/pdf","bytes":"JVBERi0="}},
			{"type":"file","file":{"mimeType":"image/png","uri":"https://example.com/x.png"}},
			{"type":"data","data":{"price":120}}]},
			{"index":1,"parts":[{"type":"text","text":"second"}]}],
		"metadata":{"trace":"abc"}}`
	wantTaskV03 = `{"kind":"task","id":"task-1","contextId":"ctx-1",
		"status":{"state":"input-required","timestamp":"2025-01-02T03:04:05Z",
			"message":{"kind":"message","messageId":"m-2","role":"agent","taskId":"task-1","contextId":"ctx-1",
				"parts":[{"kind":"text","text":"Which city?"}]}},
		"history":[{"kind":"message","messageId":"m-1","role":"user","taskId":"task-1","contextId":"ctx-1",
			"parts":[{"kind":"text","text":"Book a flight"}]}],
		"artifacts":[{"artifactId":"a-1","name":"itinerary","parts":[{"kind":"text","text":"Draft"},
			{"kind":"file","file":{"name":"plan.pdf","mimeType":"application/pdf","bytes":"JVBERi0="}},
			{"kind":"file","file":{"mimeType":"image/png","uri":"https://example.com/x.png"}},
			{"kind":"data","data":{"price":120}}]},
			{"artifactId":"a-2","parts":[{"kind":"text","text":"second"}]}],
		"metadata":{"trace":"abc"}}`
	wantTaskV10 = `{"id":"task-1","contextId":"ctx-1",
		"status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2025-01-02T03:04:05Z",
			"message":{"messageId":"m-2","role":"ROLE_AGENT","taskId":"task-1","contextId":"ctx-1",
				"parts":[{"text":"Which city?"}]}},
		"history":[{"messageId":"m-1","role":"ROLE_USER","taskId":"task-1","contextId":"ctx-1",
			"parts":[{"text":"Book a flight"}]}],
		"artifacts":[{"artifactId":"a-1","name":"itinerary","parts":[{"text":"Draft"},
			{"raw":"JVBERi0=","mediaType":"application/pdf","filename":"plan.pdf"},
			{"url":"https://example.com/x.png","mediaType":"image/png"},
			{"data":{"price":120}}]},
			{"artifactId":"a-2","parts":[{"text":"second"}]}],
		"metadata":{"trace":"abc"}}`
)

func TestEncodeTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		c          codec
		task, send string
	}{
		{"v0.1", v01{}, wantTaskV01, wantTaskV01},
		{"v0.3", v03{}, wantTaskV03, wantTaskV03},
		{"v1.0", v10{}, wantTaskV10, `{"task":` + wantTaskV10 + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jsonEq(t, tc.c.encodeTask(sampleTask()), tc.task)
			jsonEq(t, tc.c.encodeSendResult(sampleTask()), tc.send)
		})
	}
}

// TestMessageRoundTrip encodes a canonical message in each dialect (as a
// task's history) and decodes it back as a client would send it.
func TestMessageRoundTrip(t *testing.T) {
	t.Parallel()
	msg := Message{MessageID: "m-7", Role: RoleUser, TaskID: "task-7", ContextID: "ctx-7",
		ReferenceTaskIDs: []string{"task-6"}, Extensions: []string{"urn:x"}, Metadata: json.RawMessage(`{"a":1}`),
		Parts: []Part{
			{Kind: PartText, Text: "look at these", Metadata: json.RawMessage(`{"lang":"en"}`)},
			{Kind: PartFile, File: &File{Name: "a.bin", MimeType: "application/octet-stream", Bytes: "AAE="}},
			{Kind: PartFile, File: &File{MimeType: "image/png", URI: "https://example.com/c.png"}},
			{Kind: PartData, Data: json.RawMessage(`{"rows":[1,2,3]}`)}}}
	for _, tc := range []struct {
		name string
		c    codec
		wrap func(m string) string
		want Message
	}{
		{"v0.1", v01{}, func(m string) string { return `{"id":"task-7","message":` + m + `}` },
			Message{Role: msg.Role, Parts: msg.Parts, Metadata: msg.Metadata}},
		{"v0.3", v03{}, func(m string) string { return `{"message":` + m + `}` }, msg},
		{"v1.0", v10{}, func(m string) string { return `{"message":` + m + `}` }, msg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tc.c.encodeTask(Task{ID: "task-7", History: []Message{msg}}))
			if err != nil {
				t.Fatal(err)
			}
			var task struct{ History []json.RawMessage }
			if err := json.Unmarshal(b, &task); err != nil || len(task.History) != 1 {
				t.Fatalf("history of %s: %v", b, err)
			}
			p, _, err := tc.c.decodeSend(json.RawMessage(tc.wrap(string(task.History[0]))))
			if err != nil {
				t.Fatalf("decode %s: %v", task.History[0], err)
			}
			if tc.c == (v01{}) {
				p.Message.MessageID = "" // v0.1 messages have no id: a fresh one is made
			}
			jsonEq(t, p.Message, tc.want)
		})
	}
}

func TestDecodePushSet(t *testing.T) {
	t.Parallel()
	auth := &PushAuth{Schemes: []string{"Bearer"}, Credentials: "s3cret"}
	for _, tc := range []struct {
		name, params string
		c            codec
		want         PushConfig
	}{
		{"v0.1", `{"id":"t1","pushNotificationConfig":{"url":"https://h.example.com","token":"tk",
			"authentication":{"schemes":["Bearer"],"credentials":"s3cret"}}}`, v01{},
			PushConfig{TaskID: "t1", URL: "https://h.example.com", Token: "tk", Auth: auth, Dialect: V01}},
		{"v0.3", `{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example.com","token":"tk",
			"authentication":{"schemes":["Bearer"],"credentials":"s3cret"}}}`, v03{},
			PushConfig{ID: "c1", TaskID: "t1", URL: "https://h.example.com", Token: "tk", Auth: auth, Dialect: V03}},
		{"v1.0 flat", `{"taskId":"t1","id":"c1","url":"https://h.example.com","token":"tk","tenant":"",
			"authentication":{"scheme":"Bearer","credentials":"s3cret"}}`, v10{},
			PushConfig{ID: "c1", TaskID: "t1", URL: "https://h.example.com", Token: "tk", Auth: auth, Dialect: V10}},
		{"v1.0 config shape", `{"taskId":"t1","configId":"c1","config":{"url":"https://h.example.com","token":"tk",
			"authentication":{"scheme":"Bearer","credentials":"s3cret"}}}`, v10{},
			PushConfig{ID: "c1", TaskID: "t1", URL: "https://h.example.com", Token: "tk", Auth: auth, Dialect: V10}},
		{"v1.0 config shape, inner id wins", `{"taskId":"t1","configId":"outer","config":{"id":"inner","taskId":"",
			"url":"https://h.example.com"}}`, v10{},
			PushConfig{ID: "inner", TaskID: "t1", URL: "https://h.example.com", Dialect: V10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.c.decodePushSet(json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, got, tc.want)
		})
	}
	for _, tc := range []struct {
		name, params, substr string
		c                    codec
	}{
		{"v0.1 no id", `{"pushNotificationConfig":{"url":"u"}}`, "id is required", v01{}},
		{"v0.3 no taskId", `{"pushNotificationConfig":{"url":"u"}}`, "taskId is required", v03{}},
		{"v0.3 config array", `{"taskId":"t","pushNotificationConfig":[]}`, "unexpected JSON array", v03{}},
		{"v1.0 empty taskId", `{"taskId":"","url":"u"}`, "taskId is required", v10{}},
		{"v1.0 url number", `{"taskId":"t","url":5}`, "url: unexpected JSON number", v10{}},
		{"v1.0 config string", `{"taskId":"t","config":"x"}`, "config: unexpected JSON string", v10{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.c.decodePushSet(json.RawMessage(tc.params))
			wantInvalidParams(t, err, tc.substr)
		})
	}
}

func TestDecodeRefsAndQueries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, params, task, cfg string
		c                       codec
	}{
		{"v0.1", `{"id":"t1"}`, "t1", "", v01{}},
		{"v0.3", `{"id":"t1","pushNotificationConfigId":"c1"}`, "t1", "c1", v03{}},
		{"v0.3 no config id", `{"id":"t1","metadata":{}}`, "t1", "", v03{}},
		{"v1.0", `{"taskId":"t1","id":"c1","pageSize":null,"pageToken":""}`, "t1", "c1", v10{}},
	} {
		task, cfg, err := tc.c.decodePushRef(json.RawMessage(tc.params))
		if err != nil || task != tc.task || cfg != tc.cfg {
			t.Errorf("%s: decodePushRef = %q, %q, %v; want %q, %q", tc.name, task, cfg, err, tc.task, tc.cfg)
		}
	}
	_, _, err := v10{}.decodePushRef(json.RawMessage(`{"id":"c1"}`))
	wantInvalidParams(t, err, "taskId is required")
	_, _, err = v03{}.decodePushRef(json.RawMessage(`{"id":7}`))
	wantInvalidParams(t, err, "id: unexpected JSON number")

	for _, c := range []codec{v01{}, v03{}, v10{}} {
		id, hl, err := c.decodeTaskQuery(json.RawMessage(`{"id":"t1","historyLength":3,"metadata":null}`))
		if err != nil || id != "t1" || hl == nil || *hl != 3 {
			t.Errorf("%T decodeTaskQuery = %q, %v, %v", c, id, hl, err)
		}
		_, _, err = c.decodeTaskQuery(json.RawMessage(`{"historyLength":3}`))
		wantInvalidParams(t, err, "id is required")
		_, _, err = c.decodeTaskQuery(json.RawMessage(`{"id":"t1","historyLength":1.5}`))
		wantInvalidParams(t, err, "historyLength")
	}
}

func TestEncodePush(t *testing.T) {
	t.Parallel()
	cfgs := []PushConfig{
		{ID: "c1", TaskID: "t1", URL: "https://h.example.com/1", Token: "tk",
			Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: "cr"}},
		{ID: "c2", TaskID: "t1", URL: "https://h.example.com/2"},
	}
	for _, tc := range []struct {
		name          string
		c             codec
		one, list, rm string
	}{
		{"v0.1", v01{},
			`{"id":"t1","pushNotificationConfig":{"url":"https://h.example.com/1","token":"****","authentication":{"schemes":["Bearer"],"credentials":"****"}}}`,
			`[{"id":"t1","pushNotificationConfig":{"url":"https://h.example.com/1","token":"****","authentication":{"schemes":["Bearer"],"credentials":"****"}}},
			  {"id":"t1","pushNotificationConfig":{"url":"https://h.example.com/2"}}]`, `null`},
		{"v0.3", v03{},
			`{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example.com/1","token":"****","authentication":{"schemes":["Bearer"],"credentials":"****"}}}`,
			`[{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h.example.com/1","token":"****","authentication":{"schemes":["Bearer"],"credentials":"****"}}},
			  {"taskId":"t1","pushNotificationConfig":{"id":"c2","url":"https://h.example.com/2"}}]`, `null`},
		{"v1.0", v10{},
			`{"id":"c1","taskId":"t1","url":"https://h.example.com/1","token":"****","authentication":{"scheme":"Bearer","credentials":"****"}}`,
			`{"configs":[{"id":"c1","taskId":"t1","url":"https://h.example.com/1","token":"****","authentication":{"scheme":"Bearer","credentials":"****"}},
			  {"id":"c2","taskId":"t1","url":"https://h.example.com/2"}],"nextPageToken":""}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jsonEq(t, tc.c.encodePush(cfgs[0]), tc.one)
			jsonEq(t, tc.c.encodePushList(cfgs), tc.list)
			jsonEq(t, tc.c.encodeDeleted(), tc.rm)
		})
	}
	// An empty list is [] (or configs: []), never null.
	jsonEq(t, v03{}.encodePushList(nil), `[]`)
	jsonEq(t, v10{}.encodePushList(nil), `{"configs":[],"nextPageToken":""}`)
}

func TestStates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    TaskState
		wire string
	}{
		{StateSubmitted, "TASK_STATE_SUBMITTED"}, {StateWorking, "TASK_STATE_WORKING"},
		{StateInputRequired, "TASK_STATE_INPUT_REQUIRED"}, {StateAuthRequired, "TASK_STATE_AUTH_REQUIRED"},
		{StateCompleted, "TASK_STATE_COMPLETED"}, {StateFailed, "TASK_STATE_FAILED"},
		{StateCanceled, "TASK_STATE_CANCELED"}, {StateRejected, "TASK_STATE_REJECTED"},
		{StateUnknown, "TASK_STATE_UNSPECIFIED"},
	} {
		if got := v10State(tc.s); got != tc.wire {
			t.Errorf("v10State(%s) = %s, want %s", tc.s, got, tc.wire)
		}
		if got := stateFromWire(tc.wire); got != tc.s {
			t.Errorf("stateFromWire(%s) = %s, want %s", tc.wire, got, tc.s)
		}
		if got := stateFromWire(string(tc.s)); got != tc.s {
			t.Errorf("stateFromWire(%s) = %s (v0.x spelling)", tc.s, got)
		}
	}
	for in, want := range map[string]TaskState{
		"TASK_STATE_CANCELLED": StateCanceled, "cancelled": StateCanceled, "task_state_completed": StateCompleted,
		"": StateUnknown, "bogus": StateUnknown, "TASK_STATE_": StateUnknown, "input_required": StateInputRequired,
	} {
		if got := stateFromWire(in); got != want {
			t.Errorf("stateFromWire(%q) = %q, want %q", in, got, want)
		}
	}
	if got := v10State(""); got != "TASK_STATE_UNSPECIFIED" {
		t.Errorf(`v10State("") = %s`, got)
	}
	for in, want := range map[string]Role{"ROLE_USER": RoleUser, "ROLE_AGENT": RoleAgent, "user": RoleUser, "agent": RoleAgent} {
		if got := roleFromWire(in); got != want {
			t.Errorf("roleFromWire(%s) = %s, want %s", in, got, want)
		}
	}
}
