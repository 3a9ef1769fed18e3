package a2a

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/a2arelay/relay/internal/secrets"
)

// v10 is the codec of A2A v1.0: proto3 JSON, enum names for states and
// roles, parts without a discriminator, SendMessage results wrapped.
type v10 struct{}

type v10Part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v10Message struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             string          `json:"role"`
	Parts            []v10Part       `json:"parts"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

type v10Status struct {
	State     string      `json:"state"`
	Message   *v10Message `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type v10Artifact struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []v10Part       `json:"parts"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Extensions  []string        `json:"extensions,omitempty"`
}

type v10Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    v10Status       `json:"status"`
	Artifacts []v10Artifact   `json:"artifacts,omitempty"`
	History   []v10Message    `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v10Auth struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

type v10PushConfig struct {
	ID             string   `json:"id,omitempty"`
	TaskID         string   `json:"taskId"`
	URL            string   `json:"url"`
	Token          string   `json:"token,omitempty"`
	Authentication *v10Auth `json:"authentication,omitempty"`
	// Metadata carries the webhook extension's params (webhook_ext.go).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// v10State maps canonical states to v1.0 enum names and back.
func v10State(s TaskState) string {
	if s == StateUnknown || s == "" {
		return "TASK_STATE_UNSPECIFIED"
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

// stateFromWire accepts v1.0 enum names and the v0.x strings alike.
func stateFromWire(s string) TaskState {
	s = strings.TrimPrefix(strings.ToUpper(s), "TASK_STATE_")
	if s == "CANCELLED" {
		s = "CANCELED"
	}
	st := TaskState(strings.ToLower(strings.ReplaceAll(s, "_", "-")))
	if s == "UNSPECIFIED" || !st.Valid() {
		return StateUnknown
	}
	return st
}

func roleFromWire(r string) Role {
	return Role(strings.ToLower(strings.TrimPrefix(strings.ToUpper(r), "ROLE_")))
}

func v10Parts(ps []Part) []v10Part {
	out := make([]v10Part, len(ps))
	for i, p := range ps {
		w := v10Part{Data: p.Data, Metadata: p.Metadata}
		switch p.Kind {
		case PartText:
			text := p.Text
			w.Text = &text
		case PartFile:
			if f := p.File; f != nil {
				w.Raw, w.URL, w.MediaType, w.Filename = f.Bytes, f.URI, f.MimeType, f.Name
			}
		}
		out[i] = w
	}
	return out
}

func partsFromV10(ps []v10Part, where string) ([]Part, error) {
	out := make([]Part, len(ps))
	for i, w := range ps {
		p := Part{Metadata: w.Metadata}
		switch {
		case w.Text != nil:
			p.Kind, p.Text = PartText, *w.Text
		case w.Raw != "" || w.URL != "":
			p.Kind = PartFile
			p.File = &File{Bytes: w.Raw, URI: w.URL, MimeType: w.MediaType, Name: w.Filename}
		case len(w.Data) > 0:
			p.Kind, p.Data = PartData, w.Data
		default:
			return nil, InvalidParams("%s.parts[%d] needs one of text, raw, url or data", where, i)
		}
		out[i] = p
	}
	return out, nil
}

func v10Msg(m *Message) *v10Message {
	if m == nil {
		return nil
	}
	return &v10Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: "ROLE_" + strings.ToUpper(string(m.Role)), Parts: v10Parts(m.Parts), Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func msgFromV10(w *v10Message) (Message, error) {
	parts, err := partsFromV10(w.Parts, "message")
	return Message{MessageID: w.MessageID, ContextID: w.ContextID, TaskID: w.TaskID, Role: roleFromWire(w.Role),
		Parts: parts, Metadata: w.Metadata, Extensions: w.Extensions, ReferenceTaskIDs: w.ReferenceTaskIDs}, err
}

func (v10) encodeTask(t Task) any {
	out := v10Task{ID: t.ID, ContextID: t.ContextID, Metadata: t.Metadata,
		Status: v10Status{State: v10State(t.Status.State), Message: v10Msg(t.Status.Message), Timestamp: t.Status.Timestamp}}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, v10Artifact{ArtifactID: a.ArtifactID, Name: a.Name,
			Description: a.Description, Parts: v10Parts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions})
	}
	for i := range t.History {
		out.History = append(out.History, *v10Msg(&t.History[i]))
	}
	return out
}

func (c v10) encodeSendResult(t Task) any { return map[string]any{"task": c.encodeTask(t)} }

func (v10) decodeSend(params json.RawMessage) (SendParams, *int, error) {
	var w struct {
		Message       *v10Message `json:"message"`
		Configuration *struct {
			HistoryLength     *int           `json:"historyLength"`
			ReturnImmediately *bool          `json:"returnImmediately"`
			Blocking          *bool          `json:"blocking"`
			TaskPushConfig    *v10PushConfig `json:"taskPushNotificationConfig"`
			PushConfig        *v10PushConfig `json:"pushNotificationConfig"`
		} `json:"configuration"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := decodeParams(params, &w); err != nil {
		return SendParams{}, nil, err
	}
	if w.Message == nil {
		return SendParams{}, nil, InvalidParams("message is required")
	}
	msg, err := msgFromV10(w.Message)
	if err != nil {
		return SendParams{}, nil, err
	}
	p := SendParams{Dialect: V10, Message: msg, TaskID: msg.TaskID, ContextID: msg.ContextID, Blocking: true, Metadata: w.Metadata}
	var hl *int
	if c := w.Configuration; c != nil {
		hl = c.HistoryLength
		if c.ReturnImmediately != nil {
			p.Blocking = !*c.ReturnImmediately
		} else if c.Blocking != nil {
			p.Blocking = *c.Blocking
		}
		if pc := cmp.Or(c.TaskPushConfig, c.PushConfig); pc != nil {
			cfg, err := pushFromV10(*pc)
			if err != nil {
				return SendParams{}, nil, err
			}
			p.PushConfig = &cfg
		}
	}
	return p, hl, nil
}

func pushFromV10(w v10PushConfig) (PushConfig, error) {
	c := PushConfig{ID: w.ID, TaskID: w.TaskID, URL: w.URL, Token: w.Token, Dialect: V10}
	if a := w.Authentication; a != nil {
		c.Auth = &PushAuth{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
	}
	var err error
	c.Options, err = webhookOptionsFrom("metadata", w.Metadata)
	return c, err
}

func (v10) decodeTaskQuery(params json.RawMessage) (string, *int, error) {
	return v03{}.decodeTaskQuery(params)
}

func (v10) decodePushSet(params json.RawMessage) (PushConfig, error) {
	var w struct {
		v10PushConfig
		ConfigID string         `json:"configId"`
		Config   *v10PushConfig `json:"config"`
	}
	if err := decodeParams(params, &w); err != nil {
		return PushConfig{}, err
	}
	pc := w.v10PushConfig
	if w.Config != nil { // the earlier {taskId, configId, config} shape
		taskID := pc.TaskID
		pc = *w.Config
		pc.TaskID, pc.ID = taskID, cmp.Or(pc.ID, w.ConfigID)
	}
	if err := checkID(pc.TaskID, "taskId"); err != nil {
		return PushConfig{}, err
	}
	return pushFromV10(pc)
}

func (v10) decodePushRef(params json.RawMessage) (string, string, error) {
	var w struct {
		TaskID string `json:"taskId"`
		ID     string `json:"id"`
	}
	if err := decodeParams(params, &w); err != nil {
		return "", "", err
	}
	if err := checkID(w.TaskID, "taskId"); err != nil {
		return "", "", err
	}
	return w.TaskID, w.ID, ValidateID("id", w.ID)
}

// encodePush renders a config for an answer (set, get, list), with its token
// and credentials masked.
func (v10) encodePush(c PushConfig) any {
	w := v10PushConfig{ID: c.ID, TaskID: c.TaskID, URL: c.URL, Token: secrets.Mask(c.Token), Metadata: encodeWebhookMetadata(c.Options)}
	if a := c.Auth; a != nil {
		w.Authentication = &v10Auth{Credentials: secrets.Mask(a.Credentials)}
		if len(a.Schemes) > 0 {
			w.Authentication.Scheme = a.Schemes[0]
		}
	}
	return w
}

func (c v10) encodePushList(cs []PushConfig) any {
	out := make([]any, len(cs))
	for i, pc := range cs {
		out[i] = c.encodePush(pc)
	}
	return map[string]any{"configs": out, "nextPageToken": ""}
}

func (v10) encodeDeleted() any { return map[string]any{} }

// wireField: a v1.0 config is flat, with one scheme; inline, it sits in
// configuration.taskPushNotificationConfig.
func (v10) wireField(send bool, field string) string {
	rest, ok := strings.CutPrefix(field, pushPrefix)
	if !ok {
		return field
	}
	if r, ok := strings.CutPrefix(rest, "authentication.schemes[0]"); ok {
		rest = "authentication.scheme" + r
	}
	if send {
		return "configuration.taskPushNotificationConfig." + rest
	}
	return rest
}
