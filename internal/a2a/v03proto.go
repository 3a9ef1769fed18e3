package a2a

import (
	"encoding/json"
	"strings"
)

// v0.3's HTTP+JSON binding is ProtoJSON of v0.3's a2a.proto (package
// a2a.v1), which the official v0.3 clients speak on the /v1/... routes:
// roles and states as enum names (ROLE_USER, TASK_STATE_COMPLETED), no
// "kind" discriminators, a message's parts in "content", a part one of
// text, file ({fileWithUri | fileWithBytes, mimeType}) or data ({data}),
// SendMessage's answer wrapped ({"task": ...}), stream events wrapped in
// StreamResponse ({"task"}, {"statusUpdate"}, {"artifactUpdate"}), and a
// push config named "tasks/{id}/pushNotificationConfigs/{configId}".
//
// The Endpoint speaks v0.3's JSON-RPC object model; this codec translates
// at the edge, for the HTTP+JSON binding only: V03ProtoRequest turns a
// request body into the object model's params (a body already in the
// object model passes as it came), V03ProtoResult and V03ProtoEvent turn
// the Endpoint's answers into ProtoJSON. Nothing else of relay sees it.

type pbFile struct {
	FileWithURI   *string `json:"fileWithUri,omitempty"`
	FileWithBytes *string `json:"fileWithBytes,omitempty"`
	MimeType      string  `json:"mimeType,omitempty"`
	Name          string  `json:"name,omitempty"`
}

type pbData struct {
	Data json.RawMessage `json:"data"`
}

type pbPart struct {
	Text     *string         `json:"text,omitempty"`
	File     *pbFile         `json:"file,omitempty"`
	Data     *pbData         `json:"data,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type pbMessage struct {
	MessageID        string          `json:"messageId,omitempty"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             string          `json:"role,omitempty"`
	Content          []pbPart        `json:"content,omitempty"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

type pbStatus struct {
	State     string     `json:"state"`
	Message   *pbMessage `json:"message,omitempty"`
	Timestamp string     `json:"timestamp,omitempty"`
}

type pbArtifact struct {
	ArtifactID  string          `json:"artifactId,omitempty"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []pbPart        `json:"parts,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Extensions  []string        `json:"extensions,omitempty"`
}

type pbTask struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId,omitempty"`
	Status    pbStatus        `json:"status"`
	Artifacts []pbArtifact    `json:"artifacts,omitempty"`
	History   []pbMessage     `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type pbStatusEvent struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId,omitempty"`
	Status    pbStatus        `json:"status"`
	Final     bool            `json:"final,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type pbArtifactEvent struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId,omitempty"`
	Artifact  pbArtifact      `json:"artifact"`
	Append    bool            `json:"append,omitempty"`
	LastChunk bool            `json:"lastChunk,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// pbPushConfig is PushNotificationConfig: the proto has no metadata, so
// the webhook extension's options are neither read nor answered here.
type pbPushConfig struct {
	ID             string    `json:"id,omitempty"`
	URL            string    `json:"url,omitempty"`
	Token          string    `json:"token,omitempty"`
	Authentication *PushAuth `json:"authentication,omitempty"`
}

type pbTaskPushConfig struct {
	Name       string       `json:"name"`
	PushConfig pbPushConfig `json:"pushNotificationConfig"`
}

// pbState is the TaskState enum name of s.
func pbState(s TaskState) string {
	if s == StateCanceled {
		return "TASK_STATE_CANCELLED"
	}
	return v10State(s)
}

func pbParts(ps []Part) []pbPart {
	out := make([]pbPart, len(ps))
	for i, p := range ps {
		w := pbPart{Metadata: p.Metadata}
		switch p.Kind {
		case PartText:
			text := p.Text
			w.Text = &text
		case PartFile:
			f := pbFile{}
			if p.File != nil {
				f.MimeType, f.Name = p.File.MimeType, p.File.Name
				if p.File.URI != "" {
					f.FileWithURI = &p.File.URI
				} else {
					f.FileWithBytes = &p.File.Bytes
				}
			}
			w.File = &f
		case PartData:
			w.Data = &pbData{Data: p.Data}
		}
		out[i] = w
	}
	return out
}

func pbMsg(m *Message) *pbMessage {
	if m == nil {
		return nil
	}
	return &pbMessage{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: "ROLE_" + strings.ToUpper(string(m.Role)), Content: pbParts(m.Parts), Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func pbStat(s v03Status) pbStatus {
	var m *Message
	if s.Message != nil {
		m = &s.Message.Message
	}
	return pbStatus{State: pbState(s.State), Message: pbMsg(m), Timestamp: s.Timestamp}
}

func pbArt(a Artifact) pbArtifact {
	return pbArtifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: pbParts(a.Parts),
		Metadata: a.Metadata, Extensions: a.Extensions}
}

func pbTaskOf(t v03Task) pbTask {
	out := pbTask{ID: t.ID, ContextID: t.ContextID, Status: pbStat(t.Status), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, pbArt(a))
	}
	for i := range t.History {
		out.History = append(out.History, *pbMsg(&t.History[i].Message))
	}
	return out
}

func pbPushOf(c v03TaskPushConfig) pbTaskPushConfig {
	p := c.PushConfig
	return pbTaskPushConfig{Name: "tasks/" + c.TaskID + "/pushNotificationConfigs/" + p.ID,
		PushConfig: pbPushConfig{ID: p.ID, URL: p.URL, Token: p.Token, Authentication: p.Authentication}}
}

// V03ProtoResult renders result, what Endpoint.Do answered op with in
// v0.3, as v0.3's HTTP+JSON answers it in ProtoJSON. Results of other
// operations (the extended card, ListTasks in v1.0, a deletion) pass as
// they are.
func V03ProtoResult(op Op, result any) (any, error) {
	var into any
	switch op {
	case OpSend, OpGet, OpCancel:
		into = &v03Task{}
	case OpPushSet, OpPushGet:
		into = &v03TaskPushConfig{}
	case OpPushList:
		into = &[]v03TaskPushConfig{}
	default:
		return result, nil
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return nil, err
	}
	switch v := into.(type) {
	case *v03Task:
		if op == OpSend {
			return map[string]any{"task": pbTaskOf(*v)}, nil
		}
		return pbTaskOf(*v), nil
	case *v03TaskPushConfig:
		return pbPushOf(*v), nil
	case *[]v03TaskPushConfig:
		out := make([]pbTaskPushConfig, len(*v))
		for i, c := range *v {
			out[i] = pbPushOf(c)
		}
		return map[string]any{"configs": out}, nil
	}
	return result, nil
}

// V03ProtoEvent renders one event of a v0.3 stream (the object model's
// task, status-update, artifact-update or message) as a StreamResponse in
// ProtoJSON. JSON without a known "kind" (an error that ends the stream)
// is returned as it came.
func V03ProtoEvent(event []byte) ([]byte, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(event, &head); err != nil {
		return nil, err
	}
	var out any
	switch head.Kind {
	case "task":
		var t v03Task
		if err := json.Unmarshal(event, &t); err != nil {
			return nil, err
		}
		out = map[string]any{"task": pbTaskOf(t)}
	case "status-update":
		var e v03StatusEvent
		if err := json.Unmarshal(event, &e); err != nil {
			return nil, err
		}
		out = map[string]any{"statusUpdate": pbStatusEvent{TaskID: e.TaskID, ContextID: e.ContextID,
			Status: pbStat(e.Status), Final: e.Final, Metadata: e.Metadata}}
	case "artifact-update":
		var e v03ArtifactEvent
		if err := json.Unmarshal(event, &e); err != nil {
			return nil, err
		}
		out = map[string]any{"artifactUpdate": pbArtifactEvent{TaskID: e.TaskID, ContextID: e.ContextID,
			Artifact: pbArt(e.Artifact), Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata}}
	case "message":
		var m Message
		if err := json.Unmarshal(event, &m); err != nil {
			return nil, err
		}
		out = map[string]any{"message": pbMsg(&m)}
	default:
		return event, nil
	}
	return json.Marshal(out)
}
