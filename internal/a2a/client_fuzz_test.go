package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// checkAgentError fails unless err is a -32006 *Error whose message names no
// Go type or wire struct (unless the agent itself sent that text).
func checkAgentError(t *testing.T, err error, input []byte) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidAgentResponse {
		t.Fatalf("error %v (%T) is not -32006", err, err)
	}
	for _, n := range append([]string{"v10", "v03", "v01", "Message.", "Wire"}, goNames...) {
		if strings.Contains(e.Message, n) && !bytes.Contains(input, []byte(n)) {
			t.Fatalf("message %q leaks %q", e.Message, n)
		}
	}
}

// checkClientMessage fails unless m is a message Apply and the encoders can use.
func checkClientMessage(t *testing.T, m *Message) {
	t.Helper()
	if m.MessageID == "" || (m.Role != RoleUser && m.Role != RoleAgent) {
		t.Fatalf("decoded message with id %q and role %q", m.MessageID, m.Role)
	}
	if err := checkParts(m.Parts, "message"); err != nil {
		t.Fatalf("decoded message with bad parts: %v", err)
	}
}

func checkClientTask(t *testing.T, task *Task) {
	t.Helper()
	if task.ID == "" || !task.Status.State.Valid() || task.Status.State == StateUnknown {
		t.Fatalf("decoded task %q in state %q", task.ID, task.Status.State)
	}
	if task.Status.Message != nil {
		checkClientMessage(t, task.Status.Message)
	}
	for i := range task.History {
		checkClientMessage(t, &task.History[i])
	}
	for _, a := range task.Artifacts {
		if a.ArtifactID == "" || checkParts(a.Parts, "artifact") != nil {
			t.Fatalf("decoded bad artifact %+v", a)
		}
	}
}

// checkClientEvent fails unless ev carries what Apply needs for its kind.
func checkClientEvent(t *testing.T, ev Event) {
	t.Helper()
	switch ev.Kind {
	case EventTask:
		if ev.Task == nil || ev.TaskID != ev.Task.ID {
			t.Fatalf("task event without its task: %+v", ev)
		}
		checkClientTask(t, ev.Task)
	case EventStatus:
		if ev.TaskID == "" || ev.Status == nil {
			t.Fatalf("status event without task id or status: %+v", ev)
		}
		checkClientTask(t, &Task{ID: ev.TaskID, Status: *ev.Status})
	case EventArtifact:
		if ev.TaskID == "" || ev.Artifact == nil {
			t.Fatalf("artifact event without task id or artifact: %+v", ev)
		}
		checkClientTask(t, &Task{ID: ev.TaskID, Status: TaskStatus{State: StateWorking}, Artifacts: []Artifact{*ev.Artifact}})
	case EventMessage:
		if ev.Message == nil {
			t.Fatalf("message event without message")
		}
		checkClientMessage(t, ev.Message)
	default:
		t.Fatalf("decoded event of kind %q", ev.Kind)
	}
}

// mustSameJSON fails unless a and b marshal to the same JSON value.
func mustSameJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil || !sameJSON(ja, jb) {
		t.Fatalf("%s changed on a second trip (%v, %v)\nfirst:  %s\nsecond: %s", what, err1, err2, ja, jb)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, d := range []Dialect{V10, V03} {
		for _, s := range clientStream(d) {
			f.Add([]byte(s))
		}
		for _, ev := range clientEvents() {
			if b, err := renderStreamEvent(d, ev); err == nil {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{`{}`, `null`, `[]`, `{"task":null}`, `{"kind":null}`, `{"kind":"message","messageId":5}`,
		`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_UNSPECIFIED"}},"artifactUpdate":{}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"a","raw":"b","data":{}},{"data":null}]}}`,
		`{"kind":"artifact-update","taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"file","file":{"uri":"u"},"text":"x"}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range []Dialect{V10, V03} {
			ev, err := DecodeEvent(d, raw)
			if err != nil {
				checkAgentError(t, err, raw)
				continue
			}
			checkClientEvent(t, ev)
			again, err := renderStreamEvent(d, ev)
			if err != nil {
				t.Fatalf("%s: decoded %s, cannot render it: %v", d, raw, err)
			}
			ev2, err := DecodeEvent(d, again)
			if err != nil {
				t.Fatalf("%s: decoded %s, rendered %s, cannot decode that: %v", d, raw, again, err)
			}
			if d == V10 { // a pre-1.0 final flag is not rendered again
				ev.Final, ev2.Final = false, false
			}
			mustSameJSON(t, string(d)+" event", ev, ev2)
		}
	})
}

func FuzzDecodeTask(f *testing.F) {
	for _, c := range []codec{v10{}, v03{}} {
		for _, task := range []Task{sampleTask(), {ID: "t", Status: TaskStatus{State: StateSubmitted}}} {
			if b, err := json.Marshal(c.encodeTask(task)); err == nil {
				f.Add(b)
			}
			if b, err := json.Marshal(c.encodeSendResult(task)); err == nil {
				f.Add(b)
			}
		}
	}
	m := Message{MessageID: "m", Role: RoleAgent, Parts: []Part{{Kind: PartText, Text: "hi"}}}
	for _, v := range []any{map[string]any{"message": v10Msg(&m)}, v03Msg(&m)} {
		if b, err := json.Marshal(v); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{}`, `null`, `"x"`, `{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":{}}`,
		`{"kind":"task","id":"t","status":{"state":"working","message":{"kind":"message","messageId":"m","role":5}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, tc := range []struct {
			d Dialect
			c codec
		}{{V10, v10{}}, {V03, v03{}}} {
			if task, err := DecodeTask(tc.d, raw); err != nil {
				checkAgentError(t, err, raw)
			} else {
				checkClientTask(t, &task)
				b, err := json.Marshal(tc.c.encodeTask(task))
				if err != nil {
					t.Fatal(err)
				}
				task2, err := DecodeTask(tc.d, b)
				if err != nil {
					t.Fatalf("%s: decoded %s, encoded %s, cannot decode that: %v", tc.d, raw, b, err)
				}
				mustSameJSON(t, string(tc.d)+" task", task, task2)
			}
			task, msg, err := DecodeSendResult(tc.d, raw)
			switch {
			case err != nil:
				checkAgentError(t, err, raw)
			case msg != nil && task.ID != "":
				t.Fatalf("%s: send result is both a task and a message", tc.d)
			case msg != nil:
				checkClientMessage(t, msg)
			default:
				checkClientTask(t, &task)
			}
		}
	})
}

func FuzzParseCard(f *testing.F) {
	own, err := NewCard(CardConfig{Name: "relay", URL: "https://relay.example.com/a2a", Streaming: true, HasExtended: true})
	if err != nil {
		f.Fatal(err)
	}
	ownCard, err := own.Public()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(ownCard), cardV03, cardV10, `{}`, `null`, `[]`,
		`{"protocolVersion":"0.3.0","url":"https://g.example.com","preferredTransport":"GRPC",
		"additionalInterfaces":[{"url":"http://g.example.com:8080/rpc","transport":"JSONRPC"}]}`,
		`{"supportedInterfaces":[{"url":"https://b.example.com/rpc","protocolBinding":"jsonrpc"}]}`,
		`{"protocolVersion":"0.3.0","url":"//x"}`, `{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rc, err := ParseCard(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "agent card") {
				t.Fatalf("error %q does not say it is about the agent card", err)
			}
			return
		}
		u, perr := url.Parse(rc.URL)
		if (rc.Dialect != V10 && rc.Dialect != V03) || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("ParseCard(%s) = %+v", raw, rc)
		}
		// Relay's own card for that endpoint parses to the same, in v1.0.
		card, err := NewCard(CardConfig{Name: rc.Name, URL: rc.URL, Streaming: rc.Streaming})
		if err != nil {
			t.Fatal(err)
		}
		want := rc
		want.Dialect = V10
		body, err := card.Public()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ParseCard(body); err != nil || got != want {
			t.Fatalf("own card for %+v parses to %+v, %v", rc, got, err)
		}
	})
}
