package webhook

import (
	"encoding/json"
	"strings"
	"time"
)

// Dialect is the A2A protocol version a push config was registered in,
// which decides the shape of the notification body (the A2A-Version header).
type Dialect string

// The dialects relay sends notifications in.
const (
	V10 Dialect = "1.0" // one StreamResponse per event, application/a2a+json
	V03 Dialect = "0.3" // the Task snapshot after the event ("kind":"task")
	V01 Dialect = "0.1" // the Task snapshot after the event, v0.1 shape (sessionId)
)

// Kind says what a notification carries.
type Kind string

// Notification kinds. A v0.3 or v0.1 notification is always KindTask (the
// task snapshot after the event); a v1.0 notification is the event itself.
const (
	KindTask           Kind = "task"
	KindStatusUpdate   Kind = "status-update"
	KindArtifactUpdate Kind = "artifact-update"
	KindMessage        Kind = "message"
)

// State is a task state, by its v0.3 name whatever the dialect: a v1.0
// "TASK_STATE_INPUT_REQUIRED" is StateInputRequired ("input-required").
type State string

// Task states. A state relay's peers may add later, or a missing one, is
// StateUnknown.
const (
	StateSubmitted     State = "submitted"
	StateWorking       State = "working"
	StateInputRequired State = "input-required"
	StateAuthRequired  State = "auth-required"
	StateCompleted     State = "completed"
	StateFailed        State = "failed"
	StateCanceled      State = "canceled"
	StateRejected      State = "rejected"
	StateUnknown       State = "unknown"
)

// Terminal reports whether a task in state s never changes again.
func (s State) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether a task in state s waits for its client
// (input-required or auth-required).
func (s State) Interrupted() bool { return s == StateInputRequired || s == StateAuthRequired }

// Role says who wrote a message.
type Role string

// Message roles (v1.0 "ROLE_USER" is RoleUser).
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// PartKind says what a Part holds.
type PartKind string

// Part kinds.
const (
	PartText PartKind = "text"
	PartFile PartKind = "file"
	PartData PartKind = "data"
)

// Part is one piece of message or artifact content. The JSON tags of the
// model are those of A2A v0.3, so a Notification's Task, Message or
// Artifact marshals as v0.3 does (without its "kind").
type Part struct {
	// Kind is PartText, PartFile or PartData; "" for a part in none of
	// the shapes this package knows.
	Kind     PartKind        `json:"kind"`
	Text     string          `json:"text,omitempty"`
	File     *File           `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// File is the content of a file part: inline base64 bytes, or a URI. In
// v1.0 these are the part's raw, url, mediaType and filename.
type File struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"` // base64
	URI      string `json:"uri,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	MessageID        string          `json:"messageId"` // empty in v0.1, which has none
	Role             Role            `json:"role"`
	Parts            []Part          `json:"parts"`
	TaskID           string          `json:"taskId,omitempty"`
	ContextID        string          `json:"contextId,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
}

// Text returns the text of m's text parts, joined by newlines ("" for a
// nil message).
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if p.Kind == PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Status is a task's state at a point in time.
type Status struct {
	State   State    `json:"state"`
	Message *Message `json:"message,omitempty"`
	// Timestamp is ISO 8601 (UTC, with Z) as sent; "" when absent.
	Timestamp string `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string          `json:"artifactId"` // empty in v0.1, which identifies artifacts by Index
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []Part          `json:"parts"`
	Extensions  []string        `json:"extensions,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	// Index, Append and LastChunk are v0.1's, where an artifact carries
	// them itself; zero in the other dialects.
	Index     int  `json:"index,omitempty"`
	Append    bool `json:"append,omitempty"`
	LastChunk bool `json:"lastChunk,omitempty"`
}

// Task is a snapshot of one task.
type Task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"` // v0.1: sessionId
	Status    Status `json:"status"`
	// History and Artifacts are what the sender put in the snapshot
	// (relay: every message and artifact so far).
	History   []Message       `json:"history,omitempty"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Notification is one verified webhook notification, decoded into a model
// shared by all dialects.
//
// What is set depends on Kind:
//
//   - KindTask: Task, and Status (= &Task.Status) and State for convenience.
//     Every v0.3 and v0.1 notification is one (the snapshot after the
//     event), and a v1.0 notification of a task's creation.
//   - KindStatusUpdate (v1.0): Status and State.
//   - KindArtifactUpdate (v1.0): Artifact, Append and LastChunk; State is "".
//   - KindMessage (v1.0): Message; State is "".
type Notification struct {
	// ID is the notification id (A2A-Notification-Id, the JWT's jti): the
	// same on every retry and redelivery of one notification, so it is
	// the key to deduplicate on. Empty from Decode.
	ID string
	// Dialect is the dialect the body was decoded as.
	Dialect Dialect
	// Kind says which of Task, Status, Artifact and Message is set.
	Kind      Kind
	TaskID    string
	ContextID string
	// State is the task's state after the event (status-update and task
	// notifications), by its v0.3 name.
	State State
	// Final reports that the task stopped (a terminal state) or waits for
	// its client (input-required, auth-required): nothing more comes for
	// the task until the client acts. v1.0 has no final flag, so it is
	// derived from the state in every dialect (and set when a body
	// carries "final": true).
	Final     bool
	Task      *Task
	Status    *Status
	Artifact  *Artifact
	Append    bool // artifact-update: Artifact extends the one with the same ArtifactID
	LastChunk bool // artifact-update: the last chunk of Artifact
	Message   *Message
	// Metadata is the event's own metadata (v1.0 status and artifact
	// updates), passed through by relay.
	Metadata json.RawMessage
	// IssuedAt is the JWT's iat: when relay sent this attempt. Zero from
	// Decode.
	IssuedAt time.Time
	// TraceParent is the attempt's W3C traceparent (HeaderTraceParent),
	// sent when relay traces: continue it to join the task turn's trace.
	// It is not signed: use it for tracing only. Empty when the request
	// has none, or one that is not a well-formed version-00 traceparent,
	// and from Decode.
	TraceParent string
	// Raw is the event object as it was in the body: in v1.0 the value of
	// its one member ({"statusUpdate": Raw}), in v0.3 and v0.1 the whole
	// body. Decode it with your own A2A types if you need more than the
	// model holds.
	Raw json.RawMessage
	// Body is the exact body that was signed.
	Body []byte
}
