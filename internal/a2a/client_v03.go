package a2a

import (
	"encoding/json"
	"slices"
	"strings"
)

// The v0.3 half of the client-side decoders (client.go has the v1.0 half
// and the exported API). v0.3 objects are the canonical model plus a kind,
// so the server's wire structs decode them as they are.

// v03Probe reads the discriminator of a v0.3 object, and the v1.0 members
// that tell a misdirected v1.0 StreamResponse apart in errors.
type v03Probe struct {
	Kind         json.RawMessage `json:"kind"`
	Task         json.RawMessage `json:"task"`
	Message      json.RawMessage `json:"message"`
	StatusUpdate json.RawMessage `json:"statusUpdate"`
	Artifact     json.RawMessage `json:"artifactUpdate"`
	JSONRPC      json.RawMessage `json:"jsonrpc"`
}

// decodeV03Object decodes a v0.3 object by its kind; allowed lists the
// kinds the caller accepts.
func decodeV03Object(raw []byte, what string, allowed ...string) (Event, error) {
	var p v03Probe
	if err := unmarshalAgent(raw, &p); err != nil {
		return Event{}, err
	}
	want := `"` + strings.Join(allowed, `", "`) + `"`
	var kind string
	noKind := len(p.Kind) == 0 || string(p.Kind) == "null"
	switch {
	case noKind && len(p.JSONRPC) > 0:
		return Event{}, agentError("%s is a JSON-RPC envelope: decode its result", what)
	case noKind && (len(p.Task) > 0 || len(p.Message) > 0 || len(p.StatusUpdate) > 0 || len(p.Artifact) > 0):
		return Event{}, agentError("kind is required (%s); this looks like a v1.0 StreamResponse", want)
	case noKind:
		return Event{}, agentError("kind is required (%s)", want)
	case json.Unmarshal(p.Kind, &kind) != nil:
		return Event{}, agentError("kind must be a string (%s)", want)
	}
	if !slices.Contains(allowed, kind) {
		return Event{}, agentError("%s cannot have kind %q (want %s)", what, kind, want)
	}
	switch kind {
	case "task":
		t, err := DecodeTask(V03, raw)
		if err != nil {
			return Event{}, err
		}
		return Event{Kind: EventTask, TaskID: t.ID, ContextID: t.ContextID, Task: &t}, nil
	case "message":
		var w v03Message
		if err := unmarshalAgent(raw, &w); err != nil {
			return Event{}, err
		}
		m, err := msgFromV03Wire(&w, "")
		if err != nil {
			return Event{}, err
		}
		return Event{Kind: EventMessage, TaskID: m.TaskID, ContextID: m.ContextID, Message: &m}, nil
	case "status-update":
		var w v03StatusEvent
		if err := unmarshalAgent(raw, &w); err != nil {
			return Event{}, err
		}
		if w.TaskID == "" {
			return Event{}, agentError("taskId is required")
		}
		st, err := statusFromV03Wire(w.Status, "status")
		if err != nil {
			return Event{}, err
		}
		return Event{Kind: EventStatus, TaskID: w.TaskID, ContextID: w.ContextID, Status: &st, Final: w.Final, Metadata: w.Metadata}, nil
	}
	var w v03ArtifactEvent
	if err := unmarshalAgent(raw, &w); err != nil {
		return Event{}, err
	}
	if w.TaskID == "" {
		return Event{}, agentError("taskId is required")
	}
	if err := checkArtifact(w.Artifact, "artifact"); err != nil {
		return Event{}, err
	}
	return Event{Kind: EventArtifact, TaskID: w.TaskID, ContextID: w.ContextID, Artifact: &w.Artifact,
		Append: w.Append, LastChunk: w.LastChunk, Metadata: w.Metadata}, nil
}

func msgFromV03Wire(w *v03Message, where string) (Message, error) {
	if w.Kind != "" && w.Kind != "message" {
		return Message{}, agentError("%s is %q, want \"message\"", fieldPath(where, "kind"), w.Kind)
	}
	m := w.Message
	if m.MessageID == "" {
		return Message{}, agentError("%s is required", fieldPath(where, "messageId"))
	}
	role, err := clientRole(string(m.Role), where)
	if err != nil {
		return Message{}, err
	}
	m.Role = role
	return m, asAgentError(checkParts(m.Parts, where))
}

func statusFromV03Wire(w v03Status, where string) (TaskStatus, error) {
	st, err := clientState(V03, string(w.State), fieldPath(where, "state"))
	if err != nil {
		return TaskStatus{}, err
	}
	out := TaskStatus{State: st, Timestamp: w.Timestamp}
	if w.Message != nil {
		m, err := msgFromV03Wire(w.Message, fieldPath(where, "message"))
		if err != nil {
			return TaskStatus{}, err
		}
		out.Message = &m
	}
	return out, nil
}

func checkArtifact(a Artifact, where string) error {
	if a.ArtifactID == "" {
		return agentError("%s is required", fieldPath(where, "artifactId"))
	}
	return asAgentError(checkParts(a.Parts, where))
}

// taskFromV03Wire is the inverse of v03.encodeTask.
func taskFromV03Wire(w *v03Task) (Task, error) {
	if w.Kind != "" && w.Kind != "task" {
		return Task{}, agentError("kind is %q, want \"task\"", w.Kind)
	}
	if w.ID == "" {
		return Task{}, agentError("id is required")
	}
	st, err := statusFromV03Wire(w.Status, "status")
	if err != nil {
		return Task{}, err
	}
	t := Task{ID: w.ID, ContextID: w.ContextID, Status: st, Artifacts: w.Artifacts, Metadata: w.Metadata}
	for i, a := range w.Artifacts {
		if err := checkArtifact(a, fieldPathIndex("", "artifacts", i)); err != nil {
			return Task{}, err
		}
	}
	for i := range w.History {
		m, err := msgFromV03Wire(&w.History[i], fieldPathIndex("", "history", i))
		if err != nil {
			return Task{}, err
		}
		t.History = append(t.History, m)
	}
	return t, nil
}
