package a2a

import (
	"encoding/json"
	"strings"

	"github.com/a2arelay/relay/internal/secrets"
)

// v03 is the codec of A2A v0.3: the canonical model plus a "kind" on every object.
type v03 struct{}

type v03Message struct {
	Kind string `json:"kind"`
	Message
}

type v03Status struct {
	State     TaskState   `json:"state"`
	Message   *v03Message `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type v03Task struct {
	Kind      string          `json:"kind"`
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    v03Status       `json:"status"`
	History   []v03Message    `json:"history,omitempty"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v03PushConfig struct {
	ID             string    `json:"id,omitempty"`
	URL            string    `json:"url"`
	Token          string    `json:"token,omitempty"`
	Authentication *PushAuth `json:"authentication,omitempty"`
	// Metadata carries the webhook extension's params (webhook_ext.go).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type v03TaskPushConfig struct {
	TaskID     string        `json:"taskId"`
	PushConfig v03PushConfig `json:"pushNotificationConfig"`
}

type v03SendParams struct {
	Message       *Message `json:"message"`
	Configuration *struct {
		HistoryLength *int           `json:"historyLength"`
		Blocking      *bool          `json:"blocking"`
		PushConfig    *v03PushConfig `json:"pushNotificationConfig"`
	} `json:"configuration"`
	Metadata json.RawMessage `json:"metadata"`
}

func v03Msg(m *Message) *v03Message {
	if m == nil {
		return nil
	}
	return &v03Message{Kind: "message", Message: *m}
}

func (v03) encodeTask(t Task) any {
	out := v03Task{Kind: "task", ID: t.ID, ContextID: t.ContextID, Artifacts: t.Artifacts, Metadata: t.Metadata,
		Status: v03Status{State: t.Status.State, Message: v03Msg(t.Status.Message), Timestamp: t.Status.Timestamp}}
	for i := range t.History {
		out.History = append(out.History, *v03Msg(&t.History[i]))
	}
	return out
}

func (c v03) encodeSendResult(t Task) any { return c.encodeTask(t) }

func (v03) decodeSend(params json.RawMessage) (SendParams, *int, error) {
	var w v03SendParams
	if err := decodeParams(params, &w); err != nil {
		return SendParams{}, nil, err
	}
	if w.Message == nil {
		return SendParams{}, nil, InvalidParams("message is required")
	}
	if err := checkParts(w.Message.Parts, "message"); err != nil {
		return SendParams{}, nil, err
	}
	p := SendParams{Dialect: V03, Message: *w.Message, TaskID: w.Message.TaskID, ContextID: w.Message.ContextID,
		Blocking: true, Metadata: w.Metadata}
	var hl *int
	if c := w.Configuration; c != nil {
		hl = c.HistoryLength
		if c.Blocking != nil {
			p.Blocking = *c.Blocking
		}
		if c.PushConfig != nil {
			opts, err := webhookOptionsFrom("configuration.pushNotificationConfig.metadata", c.PushConfig.Metadata)
			if err != nil {
				return SendParams{}, nil, err
			}
			p.PushConfig = &PushConfig{ID: c.PushConfig.ID, URL: c.PushConfig.URL, Token: c.PushConfig.Token, Auth: c.PushConfig.Authentication, Options: opts}
		}
	}
	return p, hl, nil
}

// taskQuery is TaskQueryParams / TaskIdParams in v0.1 and v0.3.
type taskQuery struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength"`
}

func (v03) decodeTaskQuery(params json.RawMessage) (string, *int, error) {
	var q taskQuery
	if err := decodeParams(params, &q); err != nil {
		return "", nil, err
	}
	if err := checkHistoryLength(q.HistoryLength); err != nil {
		return "", nil, err
	}
	return q.ID, q.HistoryLength, checkID(q.ID, "id")
}

func (v03) decodePushSet(params json.RawMessage) (PushConfig, error) {
	var w v03TaskPushConfig
	if err := decodeParams(params, &w); err != nil {
		return PushConfig{}, err
	}
	if err := checkID(w.TaskID, "taskId"); err != nil {
		return PushConfig{}, err
	}
	c := w.PushConfig
	opts, err := webhookOptionsFrom("pushNotificationConfig.metadata", c.Metadata)
	if err != nil {
		return PushConfig{}, err
	}
	return PushConfig{ID: c.ID, TaskID: w.TaskID, URL: c.URL, Token: c.Token, Auth: c.Authentication, Dialect: V03, Options: opts}, nil
}

func (v03) decodePushRef(params json.RawMessage) (string, string, error) {
	var w struct {
		ID       string `json:"id"`
		ConfigID string `json:"pushNotificationConfigId"`
	}
	if err := decodeParams(params, &w); err != nil {
		return "", "", err
	}
	if err := checkID(w.ID, "id"); err != nil {
		return "", "", err
	}
	return w.ID, w.ConfigID, ValidateID("pushNotificationConfigId", w.ConfigID)
}

// encodePush renders a config for an answer (set, get, list), with its token
// and credentials masked.
func (v03) encodePush(c PushConfig) any {
	return v03TaskPushConfig{TaskID: c.TaskID, PushConfig: v03PushConfig{ID: c.ID, URL: c.URL,
		Token: secrets.Mask(c.Token), Authentication: maskedAuth(c.Auth), Metadata: encodeWebhookMetadata(c.Options)}}
}

// maskedAuth returns a copy of a with its credentials masked (nil for nil);
// a itself, shared with the stored config, is left alone.
func maskedAuth(a *PushAuth) *PushAuth {
	if a == nil {
		return nil
	}
	m := *a
	m.Credentials = secrets.Mask(a.Credentials)
	return &m
}

func (c v03) encodePushList(cs []PushConfig) any {
	out := make([]any, len(cs))
	for i, pc := range cs {
		out[i] = c.encodePush(pc)
	}
	return out
}

func (v03) encodeDeleted() any { return nil }

// wireField: an inline config sits in configuration; a set names the task
// beside the config.
func (v03) wireField(send bool, field string) string {
	switch {
	case send && strings.HasPrefix(field, pushPrefix):
		return "configuration." + field
	case !send && field == pushPrefix+"taskId":
		return "taskId"
	}
	return field
}
