// Package a2a is the transport-neutral core of A2A in relay: the canonical
// task model, the A2A state machine, the service API (Service, with
// binding-independent request and response types) and its error kinds
// (Kind, Error), one wire codec per A2A dialect (v0.1, v0.3, v1.0), the
// Endpoint that runs an operation from a dialect's JSON and opens its SSE
// stream, and the agent card.
//
// Everything inside relay speaks the canonical model; dialects exist only at
// the edge, so a task created in one dialect can be read in any other. The
// package never talks to Redis (the Service it calls is ingest's) and knows
// no transport's codes or statuses: the core returns kinds, and each binding
// maps them.
//
// v0.3's HTTP+JSON is ProtoJSON of v0.3's proto, not the v0.3 codec's
// object model: v03proto.go translates at that binding's edge.
//
// Bindings are thin adapters in packages beside this one (a2a/jsonrpc:
// JSON-RPC 2.0 with SSE; a2a/rest: HTTP+JSON with SSE). A binding decodes its transport's request into an
// Op, a Dialect and the params (Call), runs it on the Endpoint (Do, or Open
// for a stream, with a Framer for its envelope), and answers with the result
// or with its mapping of the error's Kind (its status, code and body, the
// Error's Details in v1.0 shape). A binding that carries no dialect JSON
// (gRPC) calls the Service directly with the canonical types.
//
// Adding a method: an Op here, its case in Endpoint.dispatch (decode with
// the dialects' codecs, call, encode), the Service method when it needs a
// new one (ingest implements it); then each binding maps it once (JSON-RPC:
// its method names in routes; HTTP+JSON: its route). Adding an error kind:
// Kind, Kinds, Kind.String and Kind.Reason here, then its mapping in each
// binding, whose tests walk Kinds and fail for a kind without one.
//
// Adding a binding: a package beside a2a/jsonrpc that maps its requests to
// Calls (or Service calls), every Kind to its errors (with a test over
// Kinds), and frames streams with a Framer; app mounts it behind the same
// guard (authentication, tenant, rate limit) as the others.
package a2a

import "encoding/json"

// Dialect is the A2A protocol version a request, task or push config speaks.
type Dialect string

// The dialects relay speaks.
const (
	V01 Dialect = "0.1"
	V03 Dialect = "0.3"
	V10 Dialect = "1.0"
)

// Valid reports whether d is a dialect relay speaks.
func (d Dialect) Valid() bool { return d == V01 || d == V03 || d == V10 }

// Role says who wrote a message.
type Role string

// Message roles.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// PartKind discriminates the content of a Part.
type PartKind string

// Part kinds.
const (
	PartText PartKind = "text"
	PartFile PartKind = "file"
	PartData PartKind = "data"
)

// Part is one piece of message or artifact content.
type Part struct {
	Kind     PartKind        `json:"kind"`
	Text     string          `json:"text,omitempty"`
	File     *File           `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// File is the content of a file part: inline base64 bytes or a URI.
type File struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	MessageID        string          `json:"messageId"`
	Role             Role            `json:"role"`
	Parts            []Part          `json:"parts"`
	TaskID           string          `json:"taskId,omitempty"`
	ContextID        string          `json:"contextId,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
}

// TaskStatus is a task's state at a point in time.
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []Part          `json:"parts"`
	Extensions  []string        `json:"extensions,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// Task is the snapshot of one task: what tasks/get returns.
type Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    TaskStatus      `json:"status"`
	History   []Message       `json:"history,omitempty"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// EventKind discriminates an Event.
type EventKind string

// Event kinds. EventTask carries the whole task (its creation); EventMessage
// appends a client message to the history of an existing task.
const (
	EventTask     EventKind = "task"
	EventStatus   EventKind = "status-update"
	EventArtifact EventKind = "artifact-update"
	EventMessage  EventKind = "message"
)

// Event is one committed change of a task: what its event stream holds,
// what SSE subscribers and webhooks receive.
type Event struct {
	Kind      EventKind       `json:"kind"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Task      *Task           `json:"task,omitempty"`
	Status    *TaskStatus     `json:"status,omitempty"`
	Final     bool            `json:"final,omitempty"`
	Artifact  *Artifact       `json:"artifact,omitempty"`
	Append    bool            `json:"append,omitempty"`
	LastChunk bool            `json:"lastChunk,omitempty"`
	Message   *Message        `json:"message,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Notifies tells whether a committed event of kind k is sent to the task's
// push configs (a notification): every kind but a message. The commit
// decides it (ingest) and a replay of the task's events decides it again
// (delivery), by this one rule.
func (k EventKind) Notifies() bool { return k != EventMessage }

// PushAuth is how relay authenticates to a webhook.
type PushAuth struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// PushConfig is one webhook registered for a task, in the dialect it was
// registered in (which decides the shape of what it receives).
type PushConfig struct {
	ID      string    `json:"id"`
	TaskID  string    `json:"taskId"`
	URL     string    `json:"url"`
	Token   string    `json:"token,omitempty"`
	Auth    *PushAuth `json:"authentication,omitempty"`
	Dialect Dialect   `json:"dialect"`
	// Options are what the config asks of relay's webhook extension
	// (WebhookExtensionURI); nil asks nothing.
	Options *WebhookOptions `json:"options,omitempty"`
	// Owner is the principal whose task the config is on, stored with it
	// (never in an answer): a webhook endpoint's health is kept per owner,
	// so that one client's failing configs never disable the endpoint for
	// another ("" for configs stored before it was kept, and without
	// client authentication).
	Owner string `json:"owner,omitempty"`
}

// TaskView is a stored task with what relay knows about it beyond the
// snapshot: the dialect it was created in, which decides the reply shape of
// methods that v0.1 and v0.3 share.
type TaskView struct {
	Task    Task
	Dialect Dialect
	// EventID is the id of the task's event stream entry this view
	// reflects (the last one committed), where a subscription continues.
	EventID string
	// Owner is the principal the task belongs to ("" without client
	// authentication).
	Owner string
}
