package a2a

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/a2arelay/relay/internal/secrets"
)

// v01 is the codec of A2A v0.1: client-chosen task ids, sessionId, parts
// discriminated by "type", artifacts that carry their own index.
type v01 struct{}

type v01Part struct {
	Type     PartKind        `json:"type"`
	Text     string          `json:"text,omitempty"`
	File     *File           `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type v01Message struct {
	Role     Role            `json:"role"`
	Parts    []v01Part       `json:"parts"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type v01Status struct {
	State     TaskState   `json:"state"`
	Message   *v01Message `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type v01Artifact struct {
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parts       []v01Part       `json:"parts"`
	Index       int             `json:"index"`
	Append      bool            `json:"append,omitempty"`
	LastChunk   bool            `json:"lastChunk,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

type v01Task struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionId"`
	Status    v01Status       `json:"status"`
	Artifacts []v01Artifact   `json:"artifacts,omitempty"`
	History   []v01Message    `json:"history,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v01PushConfig struct {
	URL            string    `json:"url"`
	Token          string    `json:"token,omitempty"`
	Authentication *PushAuth `json:"authentication,omitempty"`
	// Metadata carries the webhook extension's params (webhook_ext.go).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type v01TaskPushConfig struct {
	ID         string        `json:"id"`
	PushConfig v01PushConfig `json:"pushNotificationConfig"`
}

type v01SendParams struct {
	ID            string          `json:"id"`
	SessionID     string          `json:"sessionId"`
	Message       *v01Message     `json:"message"`
	HistoryLength *int            `json:"historyLength"`
	PushConfig    *v01PushConfig  `json:"pushNotification"`
	Metadata      json.RawMessage `json:"metadata"`
}

func v01Parts(ps []Part) []v01Part {
	out := make([]v01Part, len(ps))
	for i, p := range ps {
		out[i] = v01Part{Type: p.Kind, Text: p.Text, File: p.File, Data: p.Data, Metadata: p.Metadata}
	}
	return out
}

func v01Msg(m *Message) *v01Message {
	if m == nil {
		return nil
	}
	return &v01Message{Role: m.Role, Parts: v01Parts(m.Parts), Metadata: m.Metadata}
}

func (v01) encodeTask(t Task) any {
	out := v01Task{ID: t.ID, SessionID: t.ContextID, Metadata: t.Metadata,
		Status: v01Status{State: t.Status.State, Message: v01Msg(t.Status.Message), Timestamp: t.Status.Timestamp}}
	for i, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, v01Artifact{Name: a.Name, Description: a.Description,
			Parts: v01Parts(a.Parts), Index: i, Metadata: a.Metadata})
	}
	for i := range t.History {
		out.History = append(out.History, *v01Msg(&t.History[i]))
	}
	return out
}

func (c v01) encodeSendResult(t Task) any { return c.encodeTask(t) }

func (v01) decodeSend(params json.RawMessage) (SendParams, *int, error) {
	var w v01SendParams
	if err := decodeParams(params, &w); err != nil {
		return SendParams{}, nil, err
	}
	if err := checkID(w.ID, "id"); err != nil {
		return SendParams{}, nil, err
	}
	if w.Message == nil {
		return SendParams{}, nil, InvalidParams("message is required")
	}
	msg := Message{MessageID: uuid.NewString(), Role: w.Message.Role, Metadata: w.Message.Metadata}
	for _, p := range w.Message.Parts {
		msg.Parts = append(msg.Parts, Part{Kind: p.Type, Text: p.Text, File: p.File, Data: p.Data, Metadata: p.Metadata})
	}
	if err := checkParts(msg.Parts, "message"); err != nil {
		return SendParams{}, nil, err
	}
	p := SendParams{Dialect: V01, TaskID: w.ID, ClientChosenID: true, ContextID: w.SessionID,
		Message: msg, Blocking: true, Metadata: w.Metadata}
	if w.PushConfig != nil {
		opts, err := webhookOptionsFrom("pushNotification.metadata", w.PushConfig.Metadata)
		if err != nil {
			return SendParams{}, nil, err
		}
		p.PushConfig = &PushConfig{URL: w.PushConfig.URL, Token: w.PushConfig.Token, Auth: w.PushConfig.Authentication, Options: opts}
	}
	return p, w.HistoryLength, nil
}

func (v01) decodeTaskQuery(params json.RawMessage) (string, *int, error) {
	return v03{}.decodeTaskQuery(params)
}

func (v01) decodePushSet(params json.RawMessage) (PushConfig, error) {
	var w v01TaskPushConfig
	if err := decodeParams(params, &w); err != nil {
		return PushConfig{}, err
	}
	if err := checkID(w.ID, "id"); err != nil {
		return PushConfig{}, err
	}
	c := w.PushConfig
	opts, err := webhookOptionsFrom("pushNotificationConfig.metadata", c.Metadata)
	if err != nil {
		return PushConfig{}, err
	}
	return PushConfig{TaskID: w.ID, URL: c.URL, Token: c.Token, Auth: c.Authentication, Dialect: V01, Options: opts}, nil
}

func (v01) decodePushRef(params json.RawMessage) (string, string, error) {
	id, _, err := v03{}.decodeTaskQuery(params)
	return id, "", err
}

// encodePush renders a config for an answer (set, get), with its token and
// credentials masked.
func (v01) encodePush(c PushConfig) any {
	return v01TaskPushConfig{ID: c.TaskID, PushConfig: v01PushConfig{URL: c.URL, Metadata: encodeWebhookMetadata(c.Options),
		Token: secrets.Mask(c.Token), Authentication: maskedAuth(c.Auth)}}
}

func (c v01) encodePushList(cs []PushConfig) any {
	out := make([]any, len(cs))
	for i, pc := range cs {
		out[i] = c.encodePush(pc)
	}
	return out
}

func (v01) encodeDeleted() any { return nil }

// wireField: v0.1 names the task id "id" and the context "sessionId", and
// an inline config "pushNotification".
func (v01) wireField(send bool, field string) string {
	if !send {
		if field == pushPrefix+"taskId" {
			return "id"
		}
		return field
	}
	switch field {
	case "contextId":
		return "sessionId"
	case "taskId":
		return "id"
	}
	if rest, ok := strings.CutPrefix(field, pushPrefix); ok {
		return "pushNotification." + rest
	}
	return field
}
