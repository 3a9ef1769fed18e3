package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Requests of v0.3's HTTP+JSON in ProtoJSON (see v03proto.go). ProtoJSON
// parsers accept the proto's snake_case names beside the lowerCamel ones,
// so a body passes through normalizeNames first.

type pbInFile struct {
	FileWithURI   *string `json:"fileWithUri"`
	FileWithBytes *string `json:"fileWithBytes"`
	MimeType      string  `json:"mimeType"`
	Name          string  `json:"name"`
}

type pbInPart struct {
	Text     *string          `json:"text"`
	File     *pbInFile        `json:"file"`
	Data     *json.RawMessage `json:"data"`
	Metadata json.RawMessage  `json:"metadata"`
}

type pbInMessage struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId"`
	TaskID           string          `json:"taskId"`
	Role             json.RawMessage `json:"role"`
	Content          []pbInPart      `json:"content"`
	Parts            []pbInPart      `json:"parts"` // the name later revisions of the proto give content
	Metadata         json.RawMessage `json:"metadata"`
	Extensions       []string        `json:"extensions"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds"`
}

type pbInSend struct {
	Message       *pbInMessage `json:"message"`
	Configuration *struct {
		PushNotification *v03PushConfig `json:"pushNotification"`
		HistoryLength    *int           `json:"historyLength"`
		Blocking         *bool          `json:"blocking"`
	} `json:"configuration"`
	Metadata json.RawMessage `json:"metadata"`
}

// V03ProtoRequest turns the body of a v0.3 HTTP+JSON request for op into
// the v0.3 params the Endpoint reads. A body in ProtoJSON (a message whose
// role is not the object model's "user" or "agent"; a push config with a
// name, parent or config) is translated; any other body passes as it
// came, so clients of the object model keep working.
func V03ProtoRequest(op Op, body json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return body, nil
	}
	switch op {
	case OpSend, OpStream:
		return v03ProtoSend(body)
	case OpPushSet:
		return v03ProtoPushSet(body)
	}
	return body, nil
}

func v03ProtoSend(body json.RawMessage) (json.RawMessage, error) {
	var probe struct {
		Message *struct {
			Role json.RawMessage `json:"role"`
		} `json:"message"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Message == nil {
		return body, nil // the object model's decoder says what is wrong
	}
	if r := string(probe.Message.Role); r == `"user"` || r == `"agent"` {
		return body, nil
	}
	norm, err := normalizeNames(body)
	if err != nil {
		return nil, err
	}
	var w pbInSend
	if err := decodeParams(norm, &w); err != nil {
		return nil, err
	}
	msg, err := msgFromPB(w.Message)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"message": msg}
	if len(w.Metadata) > 0 {
		out["metadata"] = w.Metadata
	}
	if c := w.Configuration; c != nil {
		// proto3: an absent blocking is false (a serializer leaves false
		// out); an absent configuration keeps relay's default, blocking.
		cfg := map[string]any{"blocking": c.Blocking != nil && *c.Blocking}
		if c.HistoryLength != nil && *c.HistoryLength != 0 { // 0 is proto3's "unset"
			cfg["historyLength"] = *c.HistoryLength
		}
		if c.PushNotification != nil {
			cfg["pushNotificationConfig"] = c.PushNotification
		}
		out["configuration"] = cfg
	}
	return json.Marshal(out)
}

func msgFromPB(w *pbInMessage) (Message, error) {
	var role Role
	switch strings.TrimSpace(string(w.Role)) {
	case `"ROLE_USER"`, "1":
		role = RoleUser
	case `"ROLE_AGENT"`, "2":
		role = RoleAgent
	default:
		return Message{}, InvalidParams("message.role must be ROLE_USER or ROLE_AGENT")
	}
	in := w.Content
	if in == nil {
		in = w.Parts
	}
	parts := make([]Part, len(in))
	for i, p := range in {
		var err error
		if parts[i], err = partFromPB(p, fmt.Sprintf("message.content[%d]", i)); err != nil {
			return Message{}, err
		}
	}
	return Message{MessageID: w.MessageID, ContextID: w.ContextID, TaskID: w.TaskID, Role: role, Parts: parts,
		Metadata: w.Metadata, Extensions: w.Extensions, ReferenceTaskIDs: w.ReferenceTaskIDs}, nil
}

func partFromPB(p pbInPart, where string) (Part, error) {
	out := Part{Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind, out.Text = PartText, *p.Text
	case p.File != nil:
		f := &File{MimeType: p.File.MimeType, Name: p.File.Name}
		if p.File.FileWithURI != nil {
			f.URI = *p.File.FileWithURI
		} else if p.File.FileWithBytes != nil {
			f.Bytes = *p.File.FileWithBytes
		}
		out.Kind, out.File = PartFile, f
	case p.Data != nil:
		var d struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(*p.Data, &d); err != nil || !isJSONObject(d.Data) {
			return Part{}, InvalidParams("%s.data must be {\"data\": {...}}", where)
		}
		out.Kind, out.Data = PartData, d.Data
	default:
		return Part{}, InvalidParams("%s needs one of text, file or data", where)
	}
	return out, nil
}

func isJSONObject(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && b[0] == '{'
}

// v03ProtoPushSet reads a TaskPushNotificationConfig ({name,
// pushNotificationConfig}, what the official clients send) or a
// CreateTaskPushNotificationConfigRequest ({parent, configId, config}).
func v03ProtoPushSet(body json.RawMessage) (json.RawMessage, error) {
	norm, err := normalizeNames(body)
	if err != nil {
		return nil, err
	}
	type named struct {
		Name       *string        `json:"name"`
		PushConfig *v03PushConfig `json:"pushNotificationConfig"`
	}
	var w struct {
		named
		Parent   *string `json:"parent"`
		ConfigID string  `json:"configId"`
		Config   *named  `json:"config"`
	}
	if json.Unmarshal(norm, &w) != nil || (w.Name == nil && w.Parent == nil && w.Config == nil) {
		return body, nil // the object model's {taskId, pushNotificationConfig}, or its decoder's error
	}
	n := w.named
	if w.Config != nil {
		n = *w.Config
	}
	if n.PushConfig == nil {
		return nil, InvalidParams("pushNotificationConfig is required")
	}
	pc := *n.PushConfig
	var taskID string
	switch {
	case w.Parent != nil && *w.Parent != "":
		taskID, err = taskOfName(*w.Parent, false)
	case n.Name != nil && *n.Name != "":
		taskID, err = taskOfName(*n.Name, true)
		if err == nil && pc.ID == "" { // the config's id, given only in its name
			pc.ID = (*n.Name)[strings.LastIndex(*n.Name, "/")+1:]
		}
	}
	if err != nil {
		return nil, err
	}
	if pc.ID == "" {
		pc.ID = w.ConfigID
	}
	out := map[string]any{"pushNotificationConfig": pc}
	if taskID != "" {
		out["taskId"] = taskID
	}
	return json.Marshal(out)
}

// taskOfName is the task id of a resource name: "tasks/{id}" (a parent)
// or "tasks/{id}/pushNotificationConfigs/{configId}".
func taskOfName(name string, config bool) (string, error) {
	rest, ok := strings.CutPrefix(name, "tasks/")
	if config && ok {
		i := strings.LastIndex(rest, "/pushNotificationConfigs/")
		ok = i > 0
		if ok {
			rest = rest[:i]
		}
	}
	if !ok || rest == "" {
		if config {
			return "", InvalidParams("name must be tasks/{id}/pushNotificationConfigs/{configId}, got %q", name)
		}
		return "", InvalidParams("parent must be tasks/{id}, got %q", name)
	}
	return rest, nil
}
