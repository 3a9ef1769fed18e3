package a2a

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// protoMessage is a message with every kind of part, as the canonical model holds it.
func protoMessage() Message {
	return Message{MessageID: "m1", Role: RoleUser, TaskID: "t1", ContextID: "c1", Extensions: []string{"urn:x"},
		Metadata: json.RawMessage(`{"k":"v"}`),
		Parts: []Part{
			{Kind: PartText, Text: "hi", Metadata: json.RawMessage(`{"p":1}`)},
			{Kind: PartFile, File: &File{URI: "https://example.com/a.png", MimeType: "image/png", Name: "a.png"}},
			{Kind: PartFile, File: &File{Bytes: "aGk=", MimeType: "text/plain"}},
			{Kind: PartData, Data: json.RawMessage(`{"x":[1,2]}`)},
		}}
}

// A message rendered in ProtoJSON (as an answer's history holds it) and
// sent back in a v0.3 HTTP+JSON send decodes to the message it was.
func TestV03ProtoJSONMessageRoundTrips(t *testing.T) {
	want := protoMessage()
	pb, err := json.Marshal(map[string]any{"message": pbMsg(&want), "configuration": map[string]any{"blocking": true, "historyLength": 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`"kind"`, `"parts"`, `"user"`} {
		if strings.Contains(string(pb), bad) {
			t.Fatalf("ProtoJSON holds %s: %s", bad, pb)
		}
	}
	params, err := V03ProtoRequest(OpSend, pb)
	if err != nil {
		t.Fatal(err)
	}
	p, hl, err := decodeSend(V03, params)
	if err != nil {
		t.Fatalf("decode %s: %v", params, err)
	}
	if !reflect.DeepEqual(p.Message, want) || !p.Blocking || hl == nil || *hl != 3 {
		t.Fatalf("round trip:\n got %+v (blocking %v, historyLength %v)\nwant %+v", p.Message, p.Blocking, hl, want)
	}
}

// The proto's defaults: an absent configuration blocks (relay's default), a
// configuration without blocking does not (proto3's false), and a
// historyLength of 0 is unset; snake_case names are read.
func TestV03ProtoJSONSendDefaults(t *testing.T) {
	for _, c := range []struct {
		body     string
		blocking bool
	}{
		{`{"message":{"message_id":"m","role":"ROLE_USER","content":[{"text":"x"}]}}`, true},
		{`{"message":{"messageId":"m","role":1,"content":[{"text":"x"}]},"configuration":{"history_length":0}}`, false},
	} {
		params, err := V03ProtoRequest(OpStream, json.RawMessage(c.body))
		if err != nil {
			t.Fatal(err)
		}
		p, hl, err := decodeSend(V03, params)
		if err != nil || p.Blocking != c.blocking || hl != nil || p.Message.MessageID != "m" || p.Message.Role != RoleUser {
			t.Fatalf("%s: %+v blocking %v hl %v err %v", c.body, p.Message, p.Blocking, hl, err)
		}
	}
}

// A body in the JSON-RPC object model passes as it came.
func TestV03ProtoJSONLeavesTheObjectModelAlone(t *testing.T) {
	for op, body := range map[Op]string{
		OpSend:    seedV03Send,
		OpPushSet: `{"taskId":"t1","pushNotificationConfig":{"url":"https://example.com/h"}}`,
	} {
		got, err := V03ProtoRequest(op, json.RawMessage(body))
		if err != nil || string(got) != body {
			t.Fatalf("op %d: %s, %v", op, got, err)
		}
	}
}

// Every state answers as the v0.3 proto's enum name (CANCELLED with two
// Ls), a task has no kind, and SendMessage wraps it in {"task"}.
func TestV03ProtoJSONTaskStates(t *testing.T) {
	names := map[TaskState]string{StateSubmitted: "TASK_STATE_SUBMITTED", StateWorking: "TASK_STATE_WORKING",
		StateInputRequired: "TASK_STATE_INPUT_REQUIRED", StateCompleted: "TASK_STATE_COMPLETED",
		StateFailed: "TASK_STATE_FAILED", StateCanceled: "TASK_STATE_CANCELLED", StateRejected: "TASK_STATE_REJECTED",
		StateAuthRequired: "TASK_STATE_AUTH_REQUIRED", StateUnknown: "TASK_STATE_UNSPECIFIED"}
	for st, want := range names {
		m := protoMessage()
		task := Task{ID: "t1", ContextID: "c1", Status: TaskStatus{State: st, Message: &m},
			History: []Message{m}, Artifacts: []Artifact{{ArtifactID: "a1", Parts: m.Parts}}}
		res, err := V03ProtoResult(OpSend, v03{}.encodeTask(task))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		var got struct {
			Task struct {
				ID     string
				Status struct{ State string }
			}
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Task.ID != "t1" || got.Task.Status.State != want ||
			strings.Contains(string(b), `"kind"`) {
			t.Fatalf("%s: %s", st, b)
		}
	}
}

// Stream events become StreamResponses; an error passes as it came.
func TestV03ProtoJSONEvents(t *testing.T) {
	m := protoMessage()
	st := TaskStatus{State: StateWorking, Message: &m}
	sub := subscription{d: V03, indexes: map[string]int{}}
	for want, ev := range map[string]any{
		"task":           sub.renderTask(Task{ID: "t1", ContextID: "c1", Status: st}),
		"statusUpdate":   sub.renderEvent(Event{Kind: EventStatus, TaskID: "t1", ContextID: "c1", Status: &st, Final: true}),
		"artifactUpdate": sub.renderEvent(Event{Kind: EventArtifact, TaskID: "t1", ContextID: "c1", Artifact: &Artifact{ArtifactID: "a", Parts: m.Parts}, LastChunk: true}),
		"message":        v03Msg(&m),
	} {
		b, _ := json.Marshal(ev)
		out, err := V03ProtoEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 || got[want] == nil || strings.Contains(string(out), `"kind"`) {
			t.Fatalf("%s: %s", want, out)
		}
	}
	errBody := []byte(`{"code":-32603,"message":"x"}`)
	if out, err := V03ProtoEvent(errBody); err != nil || string(out) != string(errBody) {
		t.Fatalf("error event: %s %v", out, err)
	}
}

// Push configs: the forms a v0.3 client sends, and their names.
func TestV03ProtoJSONPushConfigs(t *testing.T) {
	for body, want := range map[string]string{
		`{"name":"tasks/t/1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h"}}`: `{"pushNotificationConfig":{"id":"c1","url":"https://h"},"taskId":"t/1"}`,
		`{"parent":"tasks/t1","config_id":"c2","config":{"push_notification_config":{"url":"https://h"}}}`:       `{"pushNotificationConfig":{"id":"c2","url":"https://h"},"taskId":"t1"}`,
		`{"name":"","pushNotificationConfig":{"url":"https://h"}}`:                                               `{"pushNotificationConfig":{"url":"https://h"}}`,
		// The config's id given only in its name.
		`{"name":"tasks/t1/pushNotificationConfigs/c3","pushNotificationConfig":{"url":"https://h"}}`: `{"pushNotificationConfig":{"id":"c3","url":"https://h"},"taskId":"t1"}`,
	} {
		got, err := V03ProtoRequest(OpPushSet, json.RawMessage(body))
		if err != nil || string(got) != want {
			t.Fatalf("%s: %s %v", body, got, err)
		}
	}
	for _, body := range []string{`{"name":"tasks/t1"}`, `{"name":"t1/pushNotificationConfigs/c","pushNotificationConfig":{}}`,
		`{"parent":"jobs/t1","config":{"pushNotificationConfig":{}}}`} {
		if _, err := V03ProtoRequest(OpPushSet, json.RawMessage(body)); err == nil {
			t.Fatalf("%s: accepted", body)
		}
	}
	res, err := V03ProtoResult(OpPushList, v03{}.encodePushList([]PushConfig{{ID: "c1", TaskID: "t1", URL: "https://h", Token: "secret"}}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"name":"tasks/t1/pushNotificationConfigs/c1"`) || strings.Contains(string(b), "secret") {
		t.Fatalf("list: %s", b)
	}
}
