package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decode decodes a notification body of dialect d into the shared model.
// With d "" (or a dialect it does not know) it tells the dialect from the
// body: an object with a "kind" is v0.3, one with a task, message,
// statusUpdate or artifactUpdate member v1.0, one with a "sessionId" v0.1,
// anything else v0.3 (the default of A2A without a version header).
//
// It accepts every v1.0 StreamResponse, every v0.3 object (task, message,
// status-update, artifact-update) and a v0.1 Task. Decoding is lenient
// where that costs nothing (state and role names are matched without
// regard to case and in either dialect's spelling, an unknown state is
// StateUnknown, a missing contextId is ""); it fails, with an error
// matching ErrBody, on a body that is not JSON, not one of those shapes,
// or lacks its task id (a message may lack it). ID and IssuedAt are left
// zero: they come from the JWT.
func Decode(d Dialect, body []byte) (*Notification, error) {
	if d != V10 && d != V03 && d != V01 {
		d = sniff(body)
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return nil, bodyError(d, "not a JSON object")
	}
	var (
		n   *Notification
		err error
	)
	switch d {
	case V10:
		n, err = decodeV10(body)
	case V01:
		n, err = decodeV01(body)
	default:
		n, err = decodeV03(body)
	}
	if err != nil {
		return nil, bodyError(d, "%v", err)
	}
	n.Dialect, n.Body = d, body
	if n.Task != nil {
		n.Kind, n.TaskID, n.ContextID = KindTask, n.Task.ID, n.Task.ContextID
		n.Status, n.State = &n.Task.Status, n.Task.Status.State
	}
	n.Final = n.Final || n.State.Terminal() || n.State.Interrupted()
	if n.TaskID == "" && n.Kind != KindMessage {
		return nil, bodyError(d, "the %s has no task id", n.Kind)
	}
	return n, nil
}

func bodyError(d Dialect, format string, args ...any) error {
	return fmt.Errorf("%w (v%s): %s", ErrBody, d, fmt.Sprintf(format, args...))
}

// dialectOf reads an A2A-Version header: "1.0" or "1", "0.3" or "0.3.0",
// "0.1" or "0.1.0"; "" for anything else.
func dialectOf(h string) Dialect {
	h = strings.TrimSpace(h)
	for _, d := range []Dialect{V10, V03, V01} {
		if h == string(d) || strings.HasPrefix(h, string(d)+".") {
			return d
		}
	}
	if h == "1" {
		return V10
	}
	return ""
}

// present reports whether a JSON member was sent with a value other than null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func sniff(body []byte) Dialect {
	var p struct {
		Kind, Task, Message, StatusUpdate, ArtifactUpdate, SessionID json.RawMessage
	}
	if json.Unmarshal(body, &p) != nil {
		return V03
	}
	switch {
	case present(p.Kind):
		return V03
	case present(p.Task) || present(p.Message) || present(p.StatusUpdate) || present(p.ArtifactUpdate):
		return V10
	case present(p.SessionID):
		return V01
	}
	return V03
}

// stateOf maps a wire state of any dialect to its v0.3 name.
func stateOf(s string) State {
	s = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "TASK_STATE_")
	if s == "CANCELLED" {
		s = "CANCELED"
	}
	st := State(strings.ToLower(strings.ReplaceAll(s, "_", "-")))
	switch st {
	case StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired,
		StateCompleted, StateFailed, StateCanceled, StateRejected:
		return st
	}
	return StateUnknown
}

// roleOf maps "ROLE_AGENT", "agent" and the like to a Role.
func roleOf(r string) Role {
	return Role(strings.ToLower(strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(r)), "ROLE_")))
}

// --- v0.3: the model's own JSON shape, plus a kind ---

func decodeV03(body []byte) (*Notification, error) {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, err
	}
	n := &Notification{Raw: body}
	switch probe.Kind {
	case "", "task":
		var t Task
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, err
		}
		normTask(&t)
		n.Task = &t
	case "status-update":
		var u struct {
			TaskID    string          `json:"taskId"`
			ContextID string          `json:"contextId"`
			Status    Status          `json:"status"`
			Final     bool            `json:"final"`
			Metadata  json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(body, &u); err != nil {
			return nil, err
		}
		normStatus(&u.Status)
		n.Kind, n.TaskID, n.ContextID, n.Final, n.Metadata = KindStatusUpdate, u.TaskID, u.ContextID, u.Final, u.Metadata
		n.Status, n.State = &u.Status, u.Status.State
	case "artifact-update":
		var u struct {
			TaskID    string          `json:"taskId"`
			ContextID string          `json:"contextId"`
			Artifact  Artifact        `json:"artifact"`
			Append    bool            `json:"append"`
			LastChunk bool            `json:"lastChunk"`
			Metadata  json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(body, &u); err != nil {
			return nil, err
		}
		n.Kind, n.TaskID, n.ContextID, n.Metadata = KindArtifactUpdate, u.TaskID, u.ContextID, u.Metadata
		n.Artifact, n.Append, n.LastChunk = &u.Artifact, u.Append, u.LastChunk
	case "message":
		var m Message
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		normMessage(&m)
		n.Kind, n.TaskID, n.ContextID, n.Message = KindMessage, m.TaskID, m.ContextID, &m
	default:
		return nil, fmt.Errorf("unknown kind %.32q (want task, status-update, artifact-update or message)", probe.Kind)
	}
	return n, nil
}

func normTask(t *Task) {
	normStatus(&t.Status)
	for i := range t.History {
		normMessage(&t.History[i])
	}
}

func normStatus(s *Status) {
	s.State = stateOf(string(s.State))
	if s.Message != nil {
		normMessage(s.Message)
	}
}

func normMessage(m *Message) { m.Role = roleOf(string(m.Role)) }

// --- v0.1: a Task snapshot with sessionId and parts typed by "type" ---

type v01Part struct {
	Type     PartKind        `json:"type"`
	Text     string          `json:"text"`
	File     *File           `json:"file"`
	Data     json.RawMessage `json:"data"`
	Metadata json.RawMessage `json:"metadata"`
}

type v01Message struct {
	Role     string          `json:"role"`
	Parts    []v01Part       `json:"parts"`
	Metadata json.RawMessage `json:"metadata"`
}

type v01Status struct {
	State     string      `json:"state"`
	Message   *v01Message `json:"message"`
	Timestamp string      `json:"timestamp"`
}

type v01Artifact struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parts       []v01Part       `json:"parts"`
	Index       int             `json:"index"`
	Append      bool            `json:"append"`
	LastChunk   bool            `json:"lastChunk"`
	Metadata    json.RawMessage `json:"metadata"`
}

type v01Task struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionId"`
	Status    v01Status       `json:"status"`
	Artifacts []v01Artifact   `json:"artifacts"`
	History   []v01Message    `json:"history"`
	Metadata  json.RawMessage `json:"metadata"`
}

func decodeV01(body []byte) (*Notification, error) {
	var w v01Task
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, err
	}
	t := Task{ID: w.ID, ContextID: w.SessionID, Metadata: w.Metadata,
		Status: Status{State: stateOf(w.Status.State), Message: v01Msg(w.Status.Message), Timestamp: w.Status.Timestamp}}
	for _, a := range w.Artifacts {
		t.Artifacts = append(t.Artifacts, Artifact{Name: a.Name, Description: a.Description, Parts: v01Parts(a.Parts),
			Metadata: a.Metadata, Index: a.Index, Append: a.Append, LastChunk: a.LastChunk})
	}
	for i := range w.History {
		t.History = append(t.History, *v01Msg(&w.History[i]))
	}
	return &Notification{Raw: body, Task: &t}, nil
}

func v01Msg(w *v01Message) *Message {
	if w == nil {
		return nil
	}
	return &Message{Role: roleOf(w.Role), Parts: v01Parts(w.Parts), Metadata: w.Metadata}
}

func v01Parts(ps []v01Part) []Part {
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = Part{Kind: p.Type, Text: p.Text, File: p.File, Data: p.Data, Metadata: p.Metadata}
	}
	return out
}
