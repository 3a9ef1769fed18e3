package a2a

import (
	"cmp"
	"context"
	"encoding/json"
	"time"
)

// v10ListParams is ListTasksRequest.
type v10ListParams struct {
	ContextID            string          `json:"contextId"`
	Status               json.RawMessage `json:"status"`
	PageSize             *int            `json:"pageSize"`
	PageToken            string          `json:"pageToken"`
	HistoryLength        *int            `json:"historyLength"`
	StatusTimestampAfter string          `json:"statusTimestampAfter"`
	LastUpdatedAfter     string          `json:"lastUpdatedAfter"`
	IncludeArtifacts     *bool           `json:"includeArtifacts"`
}

// list serves v1.0 ListTasks.
func (e *Endpoint) list(ctx context.Context, params json.RawMessage) (any, Dialect, error) {
	var w v10ListParams
	if len(params) > 0 && string(params) != "null" {
		if err := decodeParams(params, &w); err != nil {
			return nil, V10, err
		}
	}
	p := ListParams{ContextID: w.ContextID, PageToken: w.PageToken}
	// page_size is an `optional int32` in the proto: unspecified (absent,
	// or null, which ProtoJSON reads as absent) means the default of 50;
	// a value given must be within the proto's 1..100. An explicit 0 is
	// below the minimum, and is refused like a negative value or one
	// above the maximum, not changed into one relay picked.
	if w.PageSize != nil {
		if *w.PageSize < 1 || *w.PageSize > MaxListPageSize {
			return nil, V10, InvalidParams("pageSize must be between 1 and %d, got %d", MaxListPageSize, *w.PageSize)
		}
		p.PageSize = *w.PageSize
	}
	if err := checkHistoryLength(w.HistoryLength); err != nil {
		return nil, V10, err
	}
	state, err := listState(w.Status)
	if err != nil {
		return nil, V10, err
	}
	p.State = state
	if after := cmp.Or(w.StatusTimestampAfter, w.LastUpdatedAfter); after != "" {
		t, err := time.Parse(time.RFC3339Nano, after)
		if err != nil {
			return nil, V10, InvalidParams("statusTimestampAfter must be an RFC 3339 timestamp, got %q", after)
		}
		p.UpdatedAfter = t
	}
	res, err := e.svc.ListTasks(ctx, p)
	if err != nil {
		return nil, V10, err
	}
	tasks := make([]any, len(res.Tasks))
	for i, t := range res.Tasks {
		if w.IncludeArtifacts == nil || !*w.IncludeArtifacts {
			t.Artifacts = nil
		}
		tasks[i] = v10{}.encodeTask(WithHistory(t, w.HistoryLength))
	}
	return map[string]any{"tasks": tasks, "nextPageToken": res.NextPageToken,
		"pageSize": res.PageSize, "totalSize": res.TotalSize}, V10, nil
}

// v10StateNumbers are the proto enum numbers of TaskState.
var v10StateNumbers = []TaskState{"", StateSubmitted, StateWorking, StateCompleted, StateFailed,
	StateCanceled, StateInputRequired, StateRejected, StateAuthRequired}

// listState reads the status filter of ListTasks: an enum name, a v0.x
// string or an enum number. "No filter" arrives as absent, null, "",
// TASK_STATE_UNSPECIFIED, 0, or (from @a2a-js/sdk 1.3.0) "UNRECOGNIZED".
func listState(raw json.RawMessage) (TaskState, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if n < 0 || n >= len(v10StateNumbers) {
			return "", InvalidParams("status %d is not a task state", n)
		}
		return v10StateNumbers[n], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", InvalidParams("status must be a task state name")
	}
	switch s {
	case "", "UNRECOGNIZED", "TASK_STATE_UNSPECIFIED":
		return "", nil
	}
	if st := stateFromWire(s); st != StateUnknown {
		return st, nil
	}
	return "", InvalidParams("status %q is not a task state", s)
}
