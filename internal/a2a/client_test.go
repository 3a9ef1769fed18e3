package a2a

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// clientEvents are canonical events of every kind, with Final set as the
// relay sets it (terminal or interrupted), so that v1.0 (which derives it)
// and v0.3 (which carries it) decode to the same event.
func clientEvents() []Event {
	task := sampleTask()
	agentMsg := &Message{MessageID: "m-9", Role: RoleAgent, TaskID: "task-1", ContextID: "ctx-1",
		Parts: []Part{{Kind: PartText, Text: "thinking", Metadata: json.RawMessage(`{"lang":"en"}`)}}}
	return []Event{
		{Kind: EventTask, TaskID: task.ID, ContextID: task.ContextID, Task: &task},
		{Kind: EventStatus, TaskID: "task-1", ContextID: "ctx-1", Metadata: json.RawMessage(`{"seq":1}`),
			Status: &TaskStatus{State: StateWorking, Message: agentMsg, Timestamp: "2025-01-02T03:04:06Z"}},
		{Kind: EventStatus, TaskID: "task-1", ContextID: "ctx-1", Final: true, Status: &TaskStatus{State: StateInputRequired}},
		{Kind: EventStatus, TaskID: "task-1", ContextID: "ctx-1", Final: true,
			Status: &TaskStatus{State: StateCanceled, Timestamp: "2025-01-02T03:04:07Z"}},
		{Kind: EventArtifact, TaskID: "task-1", ContextID: "ctx-1", Append: true, LastChunk: true,
			Metadata: json.RawMessage(`{"chunk":2}`),
			Artifact: &Artifact{ArtifactID: "a-1", Name: "report", Description: "the report", Extensions: []string{"urn:e"},
				Metadata: json.RawMessage(`{"v":1}`), Parts: []Part{
					{Kind: PartText, Text: "part two"},
					{Kind: PartFile, File: &File{Name: "r.pdf", MimeType: "application/pdf", Bytes: "JVBERi0="}},
					{Kind: PartFile, File: &File{URI: "https://example.com/r.png", MimeType: "image/png"}},
					{Kind: PartData, Data: json.RawMessage(`{"rows":[1,2]}`), Metadata: json.RawMessage(`{"schema":"s"}`)}}}},
		{Kind: EventArtifact, TaskID: "task-1", Artifact: &Artifact{ArtifactID: "a-2", Parts: []Part{{Kind: PartText, Text: "x"}}}},
		{Kind: EventMessage, TaskID: "task-1", ContextID: "ctx-1", Message: agentMsg},
	}
}

// serverRenderings renders ev every way the server side does in dialect d:
// as a stream event and, where it is one event, as a webhook body.
func serverRenderings(t *testing.T, d Dialect, ev Event) map[string][]byte {
	t.Helper()
	b, err := renderStreamEvent(d, ev)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"stream": b}
	if d == V10 && ev.Kind != EventMessage {
		snapshot := Task{}
		if ev.Task != nil {
			snapshot = *ev.Task
		}
		n, err := EncodeNotification(d, ev, snapshot)
		if err != nil {
			t.Fatal(err)
		}
		out["webhook"] = n.Body
	}
	return out
}

// renderStreamEvent renders ev as the server streams it in dialect d.
func renderStreamEvent(d Dialect, ev Event) ([]byte, error) {
	sub := &subscription{d: d, indexes: map[string]int{}}
	var v any
	switch ev.Kind {
	case EventTask:
		v = sub.renderTask(*ev.Task)
	case EventMessage: // the server never streams a bare message: shape it with its encoders
		v = map[string]any{"message": v10Msg(ev.Message)}
		if d == V03 {
			v = v03Msg(ev.Message)
		}
	default:
		v = sub.renderEvent(ev)
	}
	return json.Marshal(v)
}

func TestDecodeEventRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{V10, V03} {
		for _, ev := range clientEvents() {
			for how, raw := range serverRenderings(t, d, ev) {
				t.Run(string(d)+"/"+string(ev.Kind)+"/"+how, func(t *testing.T) {
					got, err := DecodeEvent(d, raw)
					if err != nil {
						t.Fatalf("DecodeEvent(%s): %v", raw, err)
					}
					jsonEq(t, got, ev)
				})
			}
		}
	}
}

// TestDecodeEventV03Webhook: a v0.3 webhook receives the task snapshot,
// which decodes as a task event.
func TestDecodeEventV03Webhook(t *testing.T) {
	t.Parallel()
	task := sampleTask()
	n, err := EncodeNotification(V03, Event{Kind: EventStatus, TaskID: task.ID, Status: &task.Status}, task)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeEvent(V03, n.Body)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, Event{Kind: EventTask, TaskID: task.ID, ContextID: task.ContextID, Task: &task})
}

// TestDecodeEventApply drives a task through decoded events with Apply.
func TestDecodeEventApply(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{V10, V03} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			var task Task
			for i, raw := range clientStream(d) {
				ev, err := DecodeEvent(d, []byte(raw))
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.Kind == EventTask {
					task = *ev.Task
					continue
				}
				if err := Apply(&task, ev); err != nil {
					t.Fatalf("event %d: Apply: %v", i, err)
				}
			}
			want := Task{ID: "t1", ContextID: "c1", Status: TaskStatus{State: StateCompleted},
				Artifacts: []Artifact{{ArtifactID: "a", Parts: []Part{{Kind: PartText, Text: "Hel"}, {Kind: PartText, Text: "lo"}}}}}
			jsonEq(t, task, want)
		})
	}
}

// clientStream is a stream as an agent of dialect d sends it.
func clientStream(d Dialect) []string {
	if d == V10 {
		return []string{
			`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
			`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`,
			`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a","parts":[{"text":"Hel"}]}}}`,
			`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"a","parts":[{"text":"lo"}]},"append":true,"lastChunk":true}}`,
			`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`,
		}
	}
	return []string{
		`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}`,
		`{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}`,
		`{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"Hel"}]}}`,
		`{"kind":"artifact-update","taskId":"t1","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"lo"}]},"append":true,"lastChunk":true}`,
		`{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}`,
	}
}

func TestDecodeTaskRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d Dialect
		c codec
	}{{V10, v10{}}, {V03, v03{}}} {
		t.Run(string(tc.d), func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tc.c.encodeTask(sampleTask()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeTask(tc.d, b)
			if err != nil {
				t.Fatalf("DecodeTask(%s): %v", b, err)
			}
			jsonEq(t, got, sampleTask())
			if b, err = json.Marshal(tc.c.encodeSendResult(sampleTask())); err != nil {
				t.Fatal(err)
			}
			task, msg, err := DecodeSendResult(tc.d, b)
			if err != nil || msg != nil {
				t.Fatalf("DecodeSendResult(%s) = %v, %v", b, msg, err)
			}
			jsonEq(t, task, sampleTask())
		})
	}
}

func TestDecodeSendResultMessage(t *testing.T) {
	t.Parallel()
	m := Message{MessageID: "m-1", Role: RoleAgent, ContextID: "ctx", ReferenceTaskIDs: []string{"t0"},
		Parts: []Part{{Kind: PartText, Text: "10 USD is 8.5 EUR"}, {Kind: PartData, Data: json.RawMessage(`{"eur":8.5}`)}}}
	for d, v := range map[Dialect]any{V10: map[string]any{"message": v10Msg(&m)}, V03: v03Msg(&m)} {
		b, _ := json.Marshal(v)
		task, msg, err := DecodeSendResult(d, b)
		if err != nil || msg == nil || task.ID != "" {
			t.Fatalf("%s: DecodeSendResult(%s) = %+v, %v, %v", d, b, task, msg, err)
		}
		jsonEq(t, msg, m)
	}
}

// TestDecodeLenient: what the decoders accept beyond what the server emits.
func TestDecodeLenient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    Dialect
		raw  string
		want Event
	}{
		{V10, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_CANCELLED"}},"metadata":null}`,
			Event{Kind: EventStatus, TaskID: "t", Final: true, Status: &TaskStatus{State: StateCanceled}}},
		{V10, `{"statusUpdate":{"taskId":"t","status":{"state":"working"},"final":true}}`, // a pre-1.0 draft
			Event{Kind: EventStatus, TaskID: "t", Final: true, Status: &TaskStatus{State: StateWorking}}},
		{V10, `{"task":null,"message":{"messageId":"m","role":"agent","parts":[{"data":null}]}}`,
			Event{Kind: EventMessage, Message: &Message{MessageID: "m", Role: RoleAgent, Parts: []Part{{Kind: PartData, Data: json.RawMessage(`null`)}}}}},
		{V03, `{"kind":"status-update","taskId":"t","status":{"state":"TASK_STATE_AUTH_REQUIRED"},"final":true,"extra":1}`,
			Event{Kind: EventStatus, TaskID: "t", Final: true, Status: &TaskStatus{State: StateAuthRequired}}},
		{V03, `{"kind":"message","messageId":"m","role":"AGENT","parts":[]}`,
			Event{Kind: EventMessage, Message: &Message{MessageID: "m", Role: RoleAgent, Parts: []Part{}}}},
		{V03, `{"kind":"task","id":"t","status":{"state":"rejected"},"history":[{"messageId":"m","role":"user","parts":[]}]}`,
			Event{Kind: EventTask, TaskID: "t", Task: &Task{ID: "t", Status: TaskStatus{State: StateRejected},
				History: []Message{{MessageID: "m", Role: RoleUser, Parts: []Part{}}}}}},
	} {
		got, err := DecodeEvent(tc.d, []byte(tc.raw))
		if err != nil {
			t.Errorf("DecodeEvent(%s, %s): %v", tc.d, tc.raw, err)
			continue
		}
		jsonEq(t, got, tc.want)
	}
}

// wantAgentError checks err is a -32006 *Error containing substr and
// naming no Go type.
func wantAgentError(t testing.TB, err error, substr string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidAgentResponse {
		t.Fatalf("err = %v (%T), want a -32006 *Error", err, err)
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

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	const (
		event = iota
		task
		send
	)
	for _, tc := range []struct {
		d        Dialect
		fn       int
		raw, msg string
	}{
		{V10, event, ``, "the body is empty"},
		{V10, event, ` null `, "expected an object, got null"},
		{V10, event, `[]`, "expected an object, got a JSON array"},
		{V10, event, `{"task":`, "malformed JSON"},
		{V10, event, `{}`, "StreamResponse needs one of task, message, statusUpdate, artifactUpdate"},
		{V10, event, `{"task":{"id":"t"},"statusUpdate":{"taskId":"t"}}`, "needs exactly one of task, message, statusUpdate, artifactUpdate, got task and statusUpdate"},
		{V10, event, `{"kind":"status-update","taskId":"t"}`, "got an object with a kind, as v0.3 sends"},
		{V10, event, `{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}}`, `looks like a bare statusUpdate: v1.0 wraps it as {"statusUpdate":{...}}`},
		{V10, event, `{"taskId":"t","artifact":{}}`, `bare artifactUpdate`},
		{V10, event, `{"jsonrpc":"2.0","id":1,"result":{}}`, "JSON-RPC envelope: decode its result"},
		{V10, event, `{"statusUpdate":{"contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, "statusUpdate.taskId is required"},
		{V10, event, `{"statusUpdate":{"taskId":"t"}}`, "statusUpdate.status.state is required"},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_PAUSED"}}}`,
			`statusUpdate.status.state: "TASK_STATE_PAUSED" is not a known task state (want one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING`},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_UNSPECIFIED"}}}`, "is not a known task state"},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":2}}}`, "statusUpdate.status.state: unexpected JSON number"},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_UNSPECIFIED"}}}}`,
			`statusUpdate.status.message.role: "ROLE_UNSPECIFIED" is not a known role`},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING","message":{"role":"ROLE_AGENT"}}}}`,
			"statusUpdate.status.message.messageId is required"},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","parts":[]}}}}`,
			"statusUpdate.status.message.role is required"},
		{V10, event, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"a"},{"mediaType":"x"}]}}}}`,
			"statusUpdate.status.message.parts[1] needs one of text, raw, url or data"},
		{V10, event, `{"artifactUpdate":{"artifact":{"artifactId":"a"}}}`, "artifactUpdate.taskId is required"},
		{V10, event, `{"artifactUpdate":{"taskId":"t"}}`, "artifactUpdate.artifact.artifactId is required"},
		{V10, event, `{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","parts":[{}]}}}`, "artifactUpdate.artifact.parts[0] needs one of"},
		{V10, event, `{"artifactUpdate":{"taskId":"t","append":"yes","artifact":{"artifactId":"a"}}}`, "artifactUpdate.append: unexpected JSON string"},
		{V10, event, `{"task":{"status":{"state":"TASK_STATE_WORKING"}}}`, "task.id is required"},
		{V10, event, `{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"parts":[]}]}}`, "task.artifacts[0].artifactId is required"},
		{V10, event, `{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"a","role":"ROLE_USER"},{"messageId":"b","role":"system"}]}}`,
			`task.history[1].role: "system" is not a known role`},
		{V10, event, `{"message":{"role":"ROLE_AGENT","parts":[]}}`, "message.messageId is required"},
		{V10, task, `{"status":{"state":"TASK_STATE_WORKING"}}`, "id is required"},
		{V10, task, `{"id":"t"}`, "status.state is required"},
		{V10, task, `{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":{}}`, "history: unexpected JSON object"},
		{V10, task, `"t"`, "expected an object, got a JSON string"},
		{V10, send, `{"statusUpdate":{"taskId":"t"}}`, "SendMessage result cannot be a statusUpdate (want one of task, message)"},
		{V10, send, `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}`, `looks like a bare task: v1.0 wraps it as {"task":{...}}`},
		{V10, send, `{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}},"message":{"messageId":"m"}}`, "got task and message"},

		{V03, event, `{}`, `kind is required ("task", "message", "status-update", "artifact-update")`},
		{V03, event, `{"kind":null}`, `kind is required`},
		{V03, event, `{"kind":7}`, "kind must be a string"},
		{V03, event, `{"kind":"task-update"}`, `an event cannot have kind "task-update"`},
		{V03, event, `{"statusUpdate":{"taskId":"t"}}`, "this looks like a v1.0 StreamResponse"},
		{V03, event, `{"jsonrpc":"2.0","id":1,"result":{}}`, "JSON-RPC envelope"},
		{V03, event, `{"kind":"status-update","status":{"state":"working"}}`, "taskId is required"},
		{V03, event, `{"kind":"status-update","taskId":"t","status":{"state":"paused"}}`,
			`status.state: "paused" is not a known task state (want one of submitted, working, input-required, auth-required, completed, failed, canceled, rejected)`},
		{V03, event, `{"kind":"status-update","taskId":"t","status":{"state":"unknown"}}`, `"unknown" is not a known task state`},
		{V03, event, `{"kind":"status-update","taskId":"t","status":{"state":"working"},"final":"yes"}`, "final: unexpected JSON string"},
		{V03, event, `{"kind":"status-update","taskId":"t","status":{"state":"working","message":{"kind":"task","messageId":"m","role":"agent"}}}`,
			`status.message.kind is "task", want "message"`},
		{V03, event, `{"kind":"artifact-update","taskId":"t","artifact":{"parts":[]}}`, "artifact.artifactId is required"},
		{V03, event, `{"kind":"artifact-update","taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"image"}]}}`, `artifact.parts[0]: unknown part kind "image"`},
		{V03, event, `{"kind":"artifact-update","taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"file","file":{"name":"x"}}]}}`,
			"artifact.parts[0]: a file part needs file.bytes or file.uri"},
		{V03, event, `{"kind":"artifact-update","taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"data"}]}}`, "artifact.parts[0]: a data part needs data"},
		{V03, event, `{"kind":"message","role":"agent","parts":[]}`, "messageId is required"},
		{V03, event, `{"kind":"message","messageId":"m","role":"system","parts":[]}`, `role: "system" is not a known role`},
		{V03, event, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"a"},{"text":"b"}]}`, `parts[1]: unknown part kind ""`},
		{V03, event, `{"kind":"task","id":"t","status":{"state":"working"},"history":[{"role":"user"}]}`, "history[0].messageId is required"},
		{V03, task, `{"kind":"message","id":"t","status":{"state":"working"}}`, `kind is "message", want "task"`},
		{V03, task, `{"id":"t","status":{"state":"working"},"artifacts":[{"parts":[]}]}`, "artifacts[0].artifactId is required"},
		{V03, task, `{"kind":"task","status":{"state":"working"}}`, "id is required"},
		{V03, send, `{"kind":"status-update","taskId":"t","status":{"state":"working"}}`, `a message/send result cannot have kind "status-update" (want "task", "message")`},
		{V03, send, `{"task":{"id":"t"}}`, "looks like a v1.0 StreamResponse"},
	} {
		var err error
		switch tc.fn {
		case event:
			_, err = DecodeEvent(tc.d, []byte(tc.raw))
		case task:
			_, err = DecodeTask(tc.d, []byte(tc.raw))
		case send:
			_, _, err = DecodeSendResult(tc.d, []byte(tc.raw))
		}
		if err == nil {
			t.Errorf("%s %d %s: no error, want %q", tc.d, tc.fn, tc.raw, tc.msg)
			continue
		}
		wantAgentError(t, err, tc.msg)
	}
}

func TestDecodeUnsupportedDialect(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"id":"t","status":{"state":"completed"}}`)
	for _, d := range []Dialect{V01, "", "2.0"} {
		if _, err := DecodeEvent(d, raw); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("DecodeEvent(%q) error = %v", d, err)
		}
		if _, err := DecodeTask(d, raw); err == nil {
			t.Errorf("DecodeTask(%q) succeeded", d)
		}
		if _, _, err := DecodeSendResult(d, raw); err == nil {
			t.Errorf("DecodeSendResult(%q) succeeded", d)
		}
	}
}
