package a2a

import (
	"context"
	"encoding/json"
	"time"
)

// Service is the A2A service API: what every binding needs from the rest of
// relay (ingest.Service implements it), in the canonical types. Its errors
// are kinds of the core: an *Error, a *FieldError, a *LimitError or a
// *QuotaError (AsError) reach the client as each binding says them; any
// other error is KindInternal to the client, and logged.
type Service interface {
	Send(ctx context.Context, p SendParams) (TaskView, error)
	GetTask(ctx context.Context, id string) (TaskView, error)
	ListTasks(ctx context.Context, p ListParams) (ListResult, error)
	CancelTask(ctx context.Context, id string) (TaskView, error)
	SetPushConfig(ctx context.Context, c PushConfig) (PushConfig, error)
	GetPushConfig(ctx context.Context, taskID, id string) (PushConfig, error)
	ListPushConfigs(ctx context.Context, taskID string) ([]PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
}

// SendParams is a send request in any dialect.
type SendParams struct {
	Dialect Dialect
	// TaskID continues an existing task; in v0.1 it may name a new task.
	TaskID string
	// ClientChosenID marks a v0.1 task id, which creates the task when unknown.
	ClientChosenID bool
	ContextID      string
	Message        Message
	// Blocking waits for a terminal or interrupted state.
	Blocking bool
	// PushConfig is a webhook registered inline with the send.
	PushConfig *PushConfig
	Metadata   json.RawMessage
}

// Page sizes of ListTasks, as the v1.0 proto has them
// (ListTasksRequest.page_size): "If unspecified, at most 50 tasks will be
// returned. The minimum value is 1. The maximum value is 100."
const (
	DefaultListPageSize = 50
	MaxListPageSize     = 100
)

// ListParams filters and pages ListTasks.
type ListParams struct {
	ContextID string
	State     TaskState
	// PageSize is 1..MaxListPageSize, or 0 when the request left it
	// unspecified (DefaultListPageSize).
	PageSize  int
	PageToken string
	// UpdatedAfter keeps tasks whose status changed after it (zero: all).
	UpdatedAfter time.Time
}

// ListResult is one page of tasks, newest status change first.
type ListResult struct {
	Tasks         []Task
	NextPageToken string
	PageSize      int
	TotalSize     int
}
