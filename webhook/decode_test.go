package webhook_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/webhook"
)

// encoded returns what relay POSTs for ev in dialect d.
func encoded(t testing.TB, d a2a.Dialect, ev a2a.Event, snap a2a.Task) []byte {
	t.Helper()
	n, err := a2a.EncodeNotification(d, ev, snap)
	if err != nil {
		t.Fatal(err)
	}
	return n.Body
}

func TestDecodeSniffsTheDialect(t *testing.T) {
	t.Parallel()
	for _, d := range []a2a.Dialect{a2a.V10, a2a.V03, a2a.V01} {
		body := encoded(t, d, statusEvent(a2a.StateCompleted), sampleTask(a2a.StateCompleted))
		n, err := webhook.Decode("", body)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if n.Dialect != webhook.Dialect(d) || n.State != webhook.StateCompleted || !n.Final || n.TaskID != "task-1" || n.ContextID != "ctx-1" {
			t.Fatalf("%s sniffed as %+v", d, n)
		}
	}
}

// v0.3 servers other than relay may post events rather than snapshots.
func TestDecodeV03Events(t *testing.T) {
	t.Parallel()
	st := statusEvent(a2a.StateInputRequired)
	art := artifactEvent()
	msg := agentMsg("hi")
	for _, tc := range []struct {
		body string
		kind webhook.Kind
	}{
		{`{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":` + mustJSON(st.Status) + `,"final":true,"metadata":{"step":2}}`, webhook.KindStatusUpdate},
		{`{"kind":"artifact-update","taskId":"task-1","contextId":"ctx-1","artifact":` + mustJSON(art.Artifact) + `,"append":true,"lastChunk":true}`, webhook.KindArtifactUpdate},
		{`{"kind":"message",` + mustJSON(msg)[1:], webhook.KindMessage},
	} {
		n, err := webhook.Decode(webhook.V03, []byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		if n.Kind != tc.kind || n.TaskID != "task-1" || n.ContextID != "ctx-1" {
			t.Fatalf("%s: %+v", tc.kind, n)
		}
		switch tc.kind {
		case webhook.KindStatusUpdate:
			if n.State != webhook.StateInputRequired || !n.Final || string(n.Metadata) != `{"step":2}` {
				t.Fatalf("status update %+v", n)
			}
			sameJSON(t, "status", n.Status, st.Status)
		case webhook.KindArtifactUpdate:
			if !n.Append || !n.LastChunk {
				t.Fatalf("artifact update %+v", n)
			}
			sameJSON(t, "artifact", n.Artifact, art.Artifact)
		case webhook.KindMessage:
			sameJSON(t, "message", n.Message, msg)
		}
	}
}

func TestDecodeV10Message(t *testing.T) {
	t.Parallel()
	body := `{"message":{"messageId":"m1","role":"ROLE_AGENT","taskId":"task-1","contextId":"ctx-1",
		"parts":[{"text":"hi"},{"url":"https://x.test/f","mediaType":"text/plain","filename":"f.txt"},{"data":{"a":1}},{"metadata":{}}]}}`
	n, err := webhook.Decode(webhook.V10, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	m := n.Message
	if n.Kind != webhook.KindMessage || m.Role != webhook.RoleAgent || m.Text() != "hi" || len(m.Parts) != 4 ||
		m.Parts[1].Kind != webhook.PartFile || m.Parts[1].File.URI != "https://x.test/f" || m.Parts[1].File.Name != "f.txt" ||
		m.Parts[2].Kind != webhook.PartData || string(m.Parts[2].Data) != `{"a":1}` || m.Parts[3].Kind != "" {
		t.Fatalf("message %+v", m)
	}
	// A message need not belong to a task.
	if _, err := webhook.Decode(webhook.V10, []byte(`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[]}}`)); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeLenient(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]webhook.State{
		`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_CANCELLED"}}}`: webhook.StateCanceled,
		`{"statusUpdate":{"taskId":"t","status":{"state":"input_required"}}}`:       webhook.StateInputRequired,
		`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_PAUSED"}}}`:    webhook.StateUnknown,
		`{"statusUpdate":{"taskId":"t","status":{}}}`:                               webhook.StateUnknown,
		`{"kind":"task","id":"t","status":{"state":"COMPLETED"}}`:                   webhook.StateCompleted,
		`{"id":"t","sessionId":"s","status":{"state":"auth-required"}}`:             webhook.StateAuthRequired,
	} {
		n, err := webhook.Decode("", []byte(body))
		if err != nil || n.State != want {
			t.Errorf("%s: %+v, %v; want state %s", body, n, err, want)
		}
	}
	// v1.0 drafts still sent final.
	n, err := webhook.Decode(webhook.V10, []byte(`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"},"final":true}}`))
	if err != nil || !n.Final {
		t.Fatalf("final flag: %+v, %v", n, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    webhook.Dialect
		body string
	}{
		{webhook.V10, ``},
		{webhook.V10, `null`},
		{webhook.V10, `[]`},
		{webhook.V10, `{}`},
		{webhook.V10, `{"task":{"id":"t"},"message":{"messageId":"m"}}`},
		{webhook.V10, `{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}`},
		{webhook.V10, `{"artifactUpdate":{"taskId":5}}`},
		{webhook.V10, `{"task":{"id":"t"}} trailing`},
		{webhook.V03, `{"kind":"task","status":{"state":"working"}}`},
		{webhook.V03, `{"kind":"push","id":"t"}`},
		{webhook.V03, `{"kind":7}`},
		{webhook.V01, `{"sessionId":"s","status":{"state":"working"}}`},
		{webhook.V01, `{"id":["t"]}`},
	} {
		n, err := webhook.Decode(tc.d, []byte(tc.body))
		if !errors.Is(err, webhook.ErrBody) || n != nil {
			t.Errorf("Decode(%s, %s) = %+v, %v; want ErrBody", tc.d, tc.body, n, err)
		}
	}
}

func TestModelMarshalsAsV03(t *testing.T) {
	t.Parallel()
	snap := sampleTask(a2a.StateWorking)
	n, err := webhook.Decode(webhook.V10, encoded(t, a2a.V10, taskEvent(snap), snap))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(n.Task)
	if err != nil {
		t.Fatal(err)
	}
	back, err := a2a.DecodeTask(a2a.V03, b) // relay's own v0.3 decoder reads it
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "round trip", back, snap)
}

func FuzzDecode(f *testing.F) {
	snap := sampleTask(a2a.StateWorking)
	for _, d := range []a2a.Dialect{a2a.V10, a2a.V03, a2a.V01} {
		for _, ev := range []a2a.Event{taskEvent(snap), statusEvent(a2a.StateCompleted), artifactEvent()} {
			f.Add(string(d), encoded(f, d, ev, snap))
		}
	}
	f.Add("1.0", []byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`))
	f.Add("0.3", []byte(`{"kind":"status-update","taskId":"t","status":{"state":"working","message":null}}`))
	f.Add("", []byte(`{"statusUpdate":null,"task":{"id":"t","status":{"message":{"parts":[{}]}}}}`))
	f.Fuzz(func(t *testing.T, d string, body []byte) {
		n, err := webhook.Decode(webhook.Dialect(d), body)
		if err != nil {
			if !errors.Is(err, webhook.ErrBody) || n != nil {
				t.Fatalf("error %v does not match ErrBody, or came with %+v", err, n)
			}
			return
		}
		if n.TaskID == "" && n.Kind != webhook.KindMessage {
			t.Fatalf("decoded without a task id: %+v", n)
		}
		if n.Kind == webhook.KindTask && (n.Task == nil || n.Status != &n.Task.Status || n.State != n.Task.Status.State) {
			t.Fatalf("task notification %+v", n)
		}
		if (n.State.Terminal() || n.State.Interrupted()) && !n.Final {
			t.Fatalf("state %s not final", n.State)
		}
		if _, err := json.Marshal(n.Task); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		_ = n.Message.Text()
		_ = n.Status
	})
}
