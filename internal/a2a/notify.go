package a2a

import "encoding/json"

// Notification is the body of one webhook POST, shaped by the dialect its
// push config was registered in (PROTOCOL.md §4).
type Notification struct {
	Body        []byte
	ContentType string
	// Version is the A2A-Version header value.
	Version string
}

// EncodeNotification renders what a webhook registered in dialect d
// receives for event ev: in v1.0 one StreamResponse per event; in v0.3 and
// v0.1 the task snapshot after the event, in that dialect's shape.
func EncodeNotification(d Dialect, ev Event, snapshot Task) (Notification, error) {
	var v any
	switch d {
	case V10:
		v = v10StreamResponse(ev, snapshot)
	case V01:
		v = v01{}.encodeTask(snapshot)
	default:
		v = v03{}.encodeTask(snapshot)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Notification{}, err
	}
	n := Notification{Body: b, ContentType: "application/json", Version: string(d)}
	if d == V10 {
		n.ContentType = "application/a2a+json"
	}
	if n.Version == "" {
		n.Version = string(V03)
	}
	return n, nil
}

// v10StreamResponse is a v1.0 StreamResponse: exactly one of task,
// statusUpdate, artifactUpdate.
func v10StreamResponse(ev Event, snapshot Task) map[string]any {
	switch ev.Kind {
	case EventStatus:
		st := TaskStatus{}
		if ev.Status != nil {
			st = *ev.Status
		}
		return map[string]any{"statusUpdate": v10StatusUpdate{TaskID: ev.TaskID, ContextID: ev.ContextID,
			Status: v10Status{State: v10State(st.State), Message: v10Msg(st.Message), Timestamp: st.Timestamp}, Metadata: ev.Metadata}}
	case EventArtifact:
		u := v10ArtifactUpdate{TaskID: ev.TaskID, ContextID: ev.ContextID, Append: ev.Append, LastChunk: ev.LastChunk, Metadata: ev.Metadata}
		if a := ev.Artifact; a != nil {
			u.Artifact = v10Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
				Parts: v10Parts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions}
		}
		return map[string]any{"artifactUpdate": u}
	}
	return map[string]any{"task": v10{}.encodeTask(snapshot)}
}

type v10StatusUpdate struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Status    v10Status       `json:"status"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v10ArtifactUpdate struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Artifact  v10Artifact     `json:"artifact"`
	Append    bool            `json:"append,omitempty"`
	LastChunk bool            `json:"lastChunk,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}
