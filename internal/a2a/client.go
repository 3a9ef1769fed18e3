package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The client side of the v1.0 and v0.3 codecs: what relay needs to call an
// agent itself (decode the events, tasks and send results the agent returns,
// build the params of the requests it sends). Decoding is strict where the
// model needs it (ids, states, roles, parts) and lenient elsewhere, as the
// server side is: contextId may be missing, enum names are matched without
// regard to case, and v1.0 and v0.x state spellings are both accepted.
//
// Every decoding error is an *Error of kind KindInvalidAgentResponse whose
// message names the offending field by its JSON path, e.g.
// "invalid agent response: statusUpdate.status.state is required".

// DecodeEvent decodes one event object as an agent sends it in a stream or
// a webhook: in v1.0 a StreamResponse holding exactly one of task, message,
// statusUpdate or artifactUpdate; in v0.3 an object whose kind is "task",
// "message", "status-update" or "artifact-update". The Event is filled as
// Apply expects it: Task for a task, Status (and Final) for a status update,
// Artifact, Append and LastChunk for an artifact update, Message for a
// message, with TaskID and ContextID taken from the object. v1.0 has no
// final flag, so Final is set when the state is terminal or interrupted.
func DecodeEvent(d Dialect, raw []byte) (Event, error) {
	switch d {
	case V10:
		return decodeV10Stream(raw, "StreamResponse", "task", "message", "statusUpdate", "artifactUpdate")
	case V03:
		return decodeV03Object(raw, "an event", "task", "message", "status-update", "artifact-update")
	}
	return Event{}, unsupportedDialect(d)
}

// DecodeTask decodes a Task in dialect d's shape, as tasks/get, tasks/cancel
// (v0.3) or GetTask, CancelTask (v1.0) return it: the inverse of the
// server's encoding. A v0.3 task may omit its kind but not have another.
func DecodeTask(d Dialect, raw []byte) (Task, error) {
	switch d {
	case V10:
		var w v10Task
		if err := unmarshalAgent(raw, &w); err != nil {
			return Task{}, err
		}
		return taskFromV10Wire(&w, "")
	case V03:
		var w v03Task
		if err := unmarshalAgent(raw, &w); err != nil {
			return Task{}, err
		}
		return taskFromV03Wire(&w)
	}
	return Task{}, unsupportedDialect(d)
}

// DecodeSendResult decodes the result of a send (message/send, SendMessage):
// a task, or a message when the agent answered without creating one. In
// v1.0 the result is {"task":{...}} or {"message":{...}}; in v0.3 a Task
// (kind "task") or a Message (kind "message"). Exactly one of the returned
// task (non-zero ID) and message (non-nil) is set on success.
func DecodeSendResult(d Dialect, raw []byte) (Task, *Message, error) {
	var ev Event
	var err error
	switch d {
	case V10:
		ev, err = decodeV10Stream(raw, "SendMessage result", "task", "message")
	case V03:
		ev, err = decodeV03Object(raw, "a message/send result", "task", "message")
	default:
		err = unsupportedDialect(d)
	}
	switch {
	case err != nil:
		return Task{}, nil, err
	case ev.Kind == EventMessage:
		return Task{}, ev.Message, nil
	}
	return *ev.Task, nil, nil
}

// unsupportedDialect is the error for a dialect the client side does not speak.
func unsupportedDialect(d Dialect) error {
	return fmt.Errorf("a2a client: dialect %q is not supported (want %q or %q)", d, V10, V03)
}

// agentError is the error for an agent reply that does not fit its dialect.
func agentError(format string, args ...any) *Error {
	return Errorf(KindInvalidAgentResponse, "invalid agent response: "+format, args...)
}

// asAgentError rewords an error of the server-side helpers (checkParts,
// partsFromV10), which blame the client's params, as an agent error.
func asAgentError(err error) error {
	var e *Error
	if err == nil || !errors.As(err, &e) || e.Kind != KindInvalidParams {
		return err
	}
	msg := strings.TrimPrefix(e.Message, "invalid params: ")
	return agentError("%s", strings.TrimPrefix(msg, ".")) // a root-level object has an empty path
}

// fieldPath joins a JSON path and a field name.
func fieldPath(where, field string) string {
	if where == "" {
		return field
	}
	return where + "." + field
}

// fieldPathIndex names element i of the array field of where.
func fieldPathIndex(where, field string, i int) string {
	return fmt.Sprintf("%s[%d]", fieldPath(where, field), i)
}

// unmarshalAgent decodes one JSON object from an agent into v.
func unmarshalAgent(raw []byte, v any) error {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return agentError("the body is empty")
	case string(t) == "null":
		return agentError("expected an object, got null")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			c := *te
			c.Field = strings.Join(slices.DeleteFunc(strings.Split(te.Field, "."), goSegment), ".")
			err = &c
		}
		return agentError("%s", describeJSONError(err))
	}
	return nil
}

// goSegment reports whether a segment of a type error's path is the Go
// name of an embedded struct (Message in v03Message, v10StatusUpdate),
// which encoding/json puts in the path. The JSON names are all camelCase.
func goSegment(s string) bool {
	return s != "" && (s[0] >= 'A' && s[0] <= 'Z' ||
		len(s) > 3 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9' && s[3] >= 'A' && s[3] <= 'Z')
}

// clientState maps a wire state to a canonical one. States that say nothing
// (missing, "unknown", TASK_STATE_UNSPECIFIED) and unrecognised ones are errors.
func clientState(d Dialect, s, where string) (TaskState, error) {
	if s == "" {
		return "", agentError("%s is required", where)
	}
	if st := stateFromWire(s); st != StateUnknown {
		return st, nil
	}
	usable := []TaskState{StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired,
		StateCompleted, StateFailed, StateCanceled, StateRejected}
	names := make([]string, len(usable))
	for i, st := range usable {
		names[i] = string(st)
		if d == V10 {
			names[i] = v10State(st)
		}
	}
	return "", agentError("%s: %q is not a known task state (want one of %s)", where, s, strings.Join(names, ", "))
}

// clientRole maps a wire role ("ROLE_AGENT", "agent") to a canonical one.
func clientRole(r, where string) (Role, error) {
	if r == "" {
		return "", agentError("%s is required", fieldPath(where, "role"))
	}
	role := roleFromWire(r)
	if role != RoleUser && role != RoleAgent {
		return "", agentError("%s: %q is not a known role", fieldPath(where, "role"), r)
	}
	return role, nil
}

// --- v1.0 ---

// v10StreamWire is a v1.0 StreamResponse (and SendMessageResponse) as
// received, plus the members that tell other shapes apart in errors.
type v10StreamWire struct {
	Task           *v10Task           `json:"task"`
	Message        *v10Message        `json:"message"`
	StatusUpdate   *v10StatusWire     `json:"statusUpdate"`
	ArtifactUpdate *v10ArtifactUpdate `json:"artifactUpdate"`
	// Members of other shapes, for the errors.
	Kind      json.RawMessage `json:"kind"`
	JSONRPC   json.RawMessage `json:"jsonrpc"`
	ID        json.RawMessage `json:"id"`
	MessageID json.RawMessage `json:"messageId"`
	TaskID    json.RawMessage `json:"taskId"`
	Artifact  json.RawMessage `json:"artifact"`
}

// bare names the StreamResponse member w looks like when it was sent
// without its wrapper ("" when it looks like nothing).
func (w *v10StreamWire) bare() string {
	switch {
	case len(w.MessageID) > 0:
		return "message"
	case len(w.TaskID) > 0 && len(w.Artifact) > 0:
		return "artifactUpdate"
	case len(w.TaskID) > 0:
		return "statusUpdate"
	case len(w.ID) > 0:
		return "task"
	}
	return ""
}

// v10StatusWire is a statusUpdate as received: drafts before v1.0 still
// carried the v0.3 final flag, which is honoured when present.
type v10StatusWire struct {
	v10StatusUpdate
	Final bool `json:"final"`
}

// members lists the members of w that are set, in the order of the spec.
func (w *v10StreamWire) members() []string {
	var out []string
	for _, m := range []struct {
		name string
		set  bool
	}{{"task", w.Task != nil}, {"message", w.Message != nil},
		{"statusUpdate", w.StatusUpdate != nil}, {"artifactUpdate", w.ArtifactUpdate != nil}} {
		if m.set {
			out = append(out, m.name)
		}
	}
	return out
}

// decodeV10Stream decodes a StreamResponse; allowed lists the members the
// caller accepts (all four for an event, task and message for a send result).
func decodeV10Stream(raw []byte, what string, allowed ...string) (Event, error) {
	var w v10StreamWire
	if err := unmarshalAgent(raw, &w); err != nil {
		return Event{}, err
	}
	got := w.members()
	switch {
	case len(got) == 0 && len(w.JSONRPC) > 0:
		return Event{}, agentError("%s is a JSON-RPC envelope: decode its result", what)
	case len(got) == 0 && len(w.Kind) > 0:
		return Event{}, agentError("%s needs one of %s; got an object with a kind, as v0.3 sends", what, strings.Join(allowed, ", "))
	case len(got) == 0 && slices.Contains(allowed, w.bare()):
		return Event{}, agentError("%s needs one of %s; got what looks like a bare %s: v1.0 wraps it as {%q:{...}}",
			what, strings.Join(allowed, ", "), w.bare(), w.bare())
	case len(got) == 0:
		return Event{}, agentError("%s needs one of %s", what, strings.Join(allowed, ", "))
	case len(got) > 1:
		return Event{}, agentError("%s needs exactly one of %s, got %s", what, strings.Join(allowed, ", "), strings.Join(got, " and "))
	}
	if !slices.Contains(allowed, got[0]) {
		return Event{}, agentError("%s cannot be a %s (want one of %s)", what, got[0], strings.Join(allowed, ", "))
	}
	switch {
	case w.Task != nil:
		t, err := taskFromV10Wire(w.Task, "task")
		if err != nil {
			return Event{}, err
		}
		return Event{Kind: EventTask, TaskID: t.ID, ContextID: t.ContextID, Task: &t}, nil
	case w.Message != nil:
		m, err := msgFromV10Wire(w.Message, "message")
		if err != nil {
			return Event{}, err
		}
		return Event{Kind: EventMessage, TaskID: m.TaskID, ContextID: m.ContextID, Message: &m}, nil
	case w.StatusUpdate != nil:
		u := w.StatusUpdate
		if u.TaskID == "" {
			return Event{}, agentError("statusUpdate.taskId is required")
		}
		st, err := statusFromV10Wire(u.Status, "statusUpdate.status")
		if err != nil {
			return Event{}, err
		}
		// v1.0 has no final flag: the stream ends when the task stops or waits.
		final := u.Final || st.State.Terminal() || st.State.Interrupted()
		return Event{Kind: EventStatus, TaskID: u.TaskID, ContextID: u.ContextID, Status: &st, Final: final, Metadata: u.Metadata}, nil
	}
	u := w.ArtifactUpdate
	if u.TaskID == "" {
		return Event{}, agentError("artifactUpdate.taskId is required")
	}
	a, err := artifactFromV10Wire(u.Artifact, "artifactUpdate.artifact")
	if err != nil {
		return Event{}, err
	}
	return Event{Kind: EventArtifact, TaskID: u.TaskID, ContextID: u.ContextID, Artifact: &a,
		Append: u.Append, LastChunk: u.LastChunk, Metadata: u.Metadata}, nil
}

func msgFromV10Wire(w *v10Message, where string) (Message, error) {
	if w.MessageID == "" {
		return Message{}, agentError("%s is required", fieldPath(where, "messageId"))
	}
	role, err := clientRole(w.Role, where)
	if err != nil {
		return Message{}, err
	}
	parts, err := partsFromV10(w.Parts, where)
	if err != nil {
		return Message{}, asAgentError(err)
	}
	return Message{MessageID: w.MessageID, ContextID: w.ContextID, TaskID: w.TaskID, Role: role, Parts: parts,
		Metadata: w.Metadata, Extensions: w.Extensions, ReferenceTaskIDs: w.ReferenceTaskIDs}, nil
}

func statusFromV10Wire(w v10Status, where string) (TaskStatus, error) {
	st, err := clientState(V10, w.State, fieldPath(where, "state"))
	if err != nil {
		return TaskStatus{}, err
	}
	out := TaskStatus{State: st, Timestamp: w.Timestamp}
	if w.Message != nil {
		m, err := msgFromV10Wire(w.Message, fieldPath(where, "message"))
		if err != nil {
			return TaskStatus{}, err
		}
		out.Message = &m
	}
	return out, nil
}

func artifactFromV10Wire(w v10Artifact, where string) (Artifact, error) {
	if w.ArtifactID == "" {
		return Artifact{}, agentError("%s is required", fieldPath(where, "artifactId"))
	}
	parts, err := partsFromV10(w.Parts, where)
	if err != nil {
		return Artifact{}, asAgentError(err)
	}
	return Artifact{ArtifactID: w.ArtifactID, Name: w.Name, Description: w.Description, Parts: parts,
		Metadata: w.Metadata, Extensions: w.Extensions}, nil
}

// taskFromV10Wire is the inverse of v10.encodeTask.
func taskFromV10Wire(w *v10Task, where string) (Task, error) {
	if w.ID == "" {
		return Task{}, agentError("%s is required", fieldPath(where, "id"))
	}
	st, err := statusFromV10Wire(w.Status, fieldPath(where, "status"))
	if err != nil {
		return Task{}, err
	}
	t := Task{ID: w.ID, ContextID: w.ContextID, Status: st, Metadata: w.Metadata}
	for i, a := range w.Artifacts {
		art, err := artifactFromV10Wire(a, fieldPathIndex(where, "artifacts", i))
		if err != nil {
			return Task{}, err
		}
		t.Artifacts = append(t.Artifacts, art)
	}
	for i := range w.History {
		m, err := msgFromV10Wire(&w.History[i], fieldPathIndex(where, "history", i))
		if err != nil {
			return Task{}, err
		}
		t.History = append(t.History, m)
	}
	return t, nil
}
