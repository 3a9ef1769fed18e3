package a2a

import "encoding/json"

// renderTask is the first event of a stream: the task itself (v0.3, v1.0),
// or its current status as a status event (v0.1, whose streams carry only
// status and artifact events).
func (s *subscription) renderTask(t Task) any {
	switch s.d {
	case V10:
		return map[string]any{"task": v10{}.encodeTask(t)}
	case V01:
		st := t.Status
		return v01StatusEvent{ID: t.ID, Status: v01Status{State: st.State, Message: v01Msg(st.Message), Timestamp: st.Timestamp},
			Final: st.State.Terminal() || st.State.Interrupted()}
	}
	return v03{}.encodeTask(t)
}

// renderEvent shapes a status or artifact update for the dialect.
func (s *subscription) renderEvent(ev Event) any {
	switch s.d {
	case V10:
		return v10StreamResponse(ev, Task{})
	case V01:
		if ev.Kind == EventStatus {
			return v01StatusEvent{ID: ev.TaskID, Status: v01Status{State: ev.Status.State, Message: v01Msg(ev.Status.Message),
				Timestamp: ev.Status.Timestamp}, Final: ev.Final, Metadata: ev.Metadata}
		}
		idx, ok := s.indexes[ev.Artifact.ArtifactID]
		if !ok {
			idx = len(s.indexes)
			s.indexes[ev.Artifact.ArtifactID] = idx
		}
		a := ev.Artifact
		return v01ArtifactEvent{ID: ev.TaskID, Metadata: ev.Metadata, Artifact: v01Artifact{Name: a.Name, Description: a.Description,
			Parts: v01Parts(a.Parts), Index: idx, Append: ev.Append, LastChunk: ev.LastChunk, Metadata: a.Metadata}}
	}
	if ev.Kind == EventStatus {
		return v03StatusEvent{Kind: "status-update", TaskID: ev.TaskID, ContextID: ev.ContextID,
			Status: v03Status{State: ev.Status.State, Message: v03Msg(ev.Status.Message), Timestamp: ev.Status.Timestamp},
			Final:  ev.Final, Metadata: ev.Metadata}
	}
	return v03ArtifactEvent{Kind: "artifact-update", TaskID: ev.TaskID, ContextID: ev.ContextID, Artifact: *ev.Artifact,
		Append: ev.Append, LastChunk: ev.LastChunk, Metadata: ev.Metadata}
}

type v03StatusEvent struct {
	Kind      string          `json:"kind"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Status    v03Status       `json:"status"`
	Final     bool            `json:"final"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v03ArtifactEvent struct {
	Kind      string          `json:"kind"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Artifact  Artifact        `json:"artifact"`
	Append    bool            `json:"append,omitempty"`
	LastChunk bool            `json:"lastChunk,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type v01StatusEvent struct {
	ID       string          `json:"id"`
	Status   v01Status       `json:"status"`
	Final    bool            `json:"final"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type v01ArtifactEvent struct {
	ID       string          `json:"id"`
	Artifact v01Artifact     `json:"artifact"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}
