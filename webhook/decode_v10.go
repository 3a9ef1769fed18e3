package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The v1.0 wire shapes: proto3 JSON, TASK_STATE_* and ROLE_* enums, parts
// without a discriminator, one StreamResponse member per event.

type v10Part struct {
	Text      *string         `json:"text"`
	Raw       string          `json:"raw"`
	URL       string          `json:"url"`
	Data      json.RawMessage `json:"data"`
	MediaType string          `json:"mediaType"`
	Filename  string          `json:"filename"`
	Metadata  json.RawMessage `json:"metadata"`
}

type v10Message struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId"`
	TaskID           string          `json:"taskId"`
	Role             string          `json:"role"`
	Parts            []v10Part       `json:"parts"`
	Metadata         json.RawMessage `json:"metadata"`
	Extensions       []string        `json:"extensions"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds"`
}

type v10Status struct {
	State     string      `json:"state"`
	Message   *v10Message `json:"message"`
	Timestamp string      `json:"timestamp"`
}

type v10Artifact struct {
	ArtifactID  string          `json:"artifactId"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parts       []v10Part       `json:"parts"`
	Metadata    json.RawMessage `json:"metadata"`
	Extensions  []string        `json:"extensions"`
}

type v10Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    v10Status       `json:"status"`
	Artifacts []v10Artifact   `json:"artifacts"`
	History   []v10Message    `json:"history"`
	Metadata  json.RawMessage `json:"metadata"`
}

type v10StatusUpdate struct {
	TaskID    string    `json:"taskId"`
	ContextID string    `json:"contextId"`
	Status    v10Status `json:"status"`
	// Final is not in v1.0; drafts before it still sent it.
	Final    bool            `json:"final"`
	Metadata json.RawMessage `json:"metadata"`
}

type v10ArtifactUpdate struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Artifact  v10Artifact     `json:"artifact"`
	Append    bool            `json:"append"`
	LastChunk bool            `json:"lastChunk"`
	Metadata  json.RawMessage `json:"metadata"`
}

// decodeV10 decodes a StreamResponse: exactly one of task, message,
// statusUpdate, artifactUpdate.
func decodeV10(body []byte) (*Notification, error) {
	var sr struct {
		Task           json.RawMessage `json:"task"`
		Message        json.RawMessage `json:"message"`
		StatusUpdate   json.RawMessage `json:"statusUpdate"`
		ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
	}
	if err := json.Unmarshal(body, &sr); err != nil {
		return nil, err
	}
	var got []string
	for name, raw := range map[string]json.RawMessage{"task": sr.Task, "message": sr.Message,
		"statusUpdate": sr.StatusUpdate, "artifactUpdate": sr.ArtifactUpdate} {
		if present(raw) {
			got = append(got, name)
		}
	}
	switch len(got) {
	case 0:
		return nil, errors.New("a StreamResponse needs one of task, message, statusUpdate or artifactUpdate")
	case 1:
	default:
		return nil, fmt.Errorf("a StreamResponse needs exactly one of task, message, statusUpdate or artifactUpdate, got %d", len(got))
	}
	switch {
	case present(sr.Task):
		var w v10Task
		if err := json.Unmarshal(sr.Task, &w); err != nil {
			return nil, fmt.Errorf("task: %w", err)
		}
		t := taskFromV10(&w)
		return &Notification{Raw: sr.Task, Task: &t}, nil
	case present(sr.Message):
		var w v10Message
		if err := json.Unmarshal(sr.Message, &w); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		m := msgFromV10(&w)
		return &Notification{Raw: sr.Message, Kind: KindMessage, TaskID: m.TaskID, ContextID: m.ContextID, Message: m}, nil
	case present(sr.StatusUpdate):
		var u v10StatusUpdate
		if err := json.Unmarshal(sr.StatusUpdate, &u); err != nil {
			return nil, fmt.Errorf("statusUpdate: %w", err)
		}
		st := statusFromV10(u.Status)
		return &Notification{Raw: sr.StatusUpdate, Kind: KindStatusUpdate, TaskID: u.TaskID, ContextID: u.ContextID,
			Status: &st, State: st.State, Final: u.Final, Metadata: u.Metadata}, nil
	}
	var u v10ArtifactUpdate
	if err := json.Unmarshal(sr.ArtifactUpdate, &u); err != nil {
		return nil, fmt.Errorf("artifactUpdate: %w", err)
	}
	a := artifactFromV10(u.Artifact)
	return &Notification{Raw: sr.ArtifactUpdate, Kind: KindArtifactUpdate, TaskID: u.TaskID, ContextID: u.ContextID,
		Artifact: &a, Append: u.Append, LastChunk: u.LastChunk, Metadata: u.Metadata}, nil
}

func taskFromV10(w *v10Task) Task {
	t := Task{ID: w.ID, ContextID: w.ContextID, Status: statusFromV10(w.Status), Metadata: w.Metadata}
	for _, a := range w.Artifacts {
		t.Artifacts = append(t.Artifacts, artifactFromV10(a))
	}
	for i := range w.History {
		t.History = append(t.History, *msgFromV10(&w.History[i]))
	}
	return t
}

func statusFromV10(w v10Status) Status {
	return Status{State: stateOf(w.State), Message: msgFromV10(w.Message), Timestamp: w.Timestamp}
}

func msgFromV10(w *v10Message) *Message {
	if w == nil {
		return nil
	}
	role := roleOf(w.Role)
	if strings.EqualFold(string(role), "unspecified") {
		role = ""
	}
	return &Message{MessageID: w.MessageID, Role: role, Parts: partsFromV10(w.Parts), TaskID: w.TaskID,
		ContextID: w.ContextID, ReferenceTaskIDs: w.ReferenceTaskIDs, Extensions: w.Extensions, Metadata: w.Metadata}
}

func artifactFromV10(w v10Artifact) Artifact {
	return Artifact{ArtifactID: w.ArtifactID, Name: w.Name, Description: w.Description, Parts: partsFromV10(w.Parts),
		Extensions: w.Extensions, Metadata: w.Metadata}
}

// partsFromV10 tells a part's kind by the member it has: text, then raw or
// url (a file), then data. A part with none of them has Kind "".
func partsFromV10(ps []v10Part) []Part {
	out := make([]Part, len(ps))
	for i, w := range ps {
		p := Part{Metadata: w.Metadata}
		switch {
		case w.Text != nil:
			p.Kind, p.Text = PartText, *w.Text
		case w.Raw != "" || w.URL != "":
			p.Kind = PartFile
			p.File = &File{Bytes: w.Raw, URI: w.URL, MimeType: w.MediaType, Name: w.Filename}
		case present(w.Data):
			p.Kind, p.Data = PartData, w.Data
		}
		out[i] = p
	}
	return out
}
