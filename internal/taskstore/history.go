package taskstore

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

//go:embed lua/taskat.lua
var taskAtLua string

// TaskAt is what it takes to know a task as it was after one version: its
// snapshot, or events to fold onto a base.
type TaskAt struct {
	// Snapshot is the task after the version, when Redis holds it as one
	// (the version is the current one, or the checkpoint's).
	Snapshot []byte
	// Base is the task to fold Events onto (the checkpoint, or a stored
	// task of a previous relay's stream entry); nil: fold from the task's
	// creation, which Events then starts with.
	Base []byte
	// Events are the stored events after Base, up to and including every
	// event of the version, in commit order.
	Events [][]byte
}

// taskAtArgs are lua/taskat.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type taskAtArgs struct {
	EventID string `lua:"eventID"`
	Ver     int64  `lua:"ver"`
}

var taskAtScript = layout.BareScriptOf[taskAtArgs](taskAtLua)

// TaskAt returns the task as it was after version, given the stream id of
// one of that version's events; version 0 asks for the current snapshot. It
// returns ErrNotFound when the task is gone (expired) or the event is no
// longer stored.
func (s *Store) TaskAt(ctx context.Context, taskID, eventID string, version int64) (TaskAt, error) {
	return history{rdb: s.rdb, k: s.k}.taskAt(ctx, taskID, eventID, version)
}

// history reads the past versions of tasks: Store.TaskAt, and the
// compaction's checkpoints (Compaction).
type history struct {
	rdb redis.UniversalClient
	k   layout.Keys
}

// taskAt is Store.TaskAt.
func (s history) taskAt(ctx context.Context, taskID, eventID string, version int64) (TaskAt, error) {
	tk := s.k.Task(taskID)
	res, err := taskAtScript.Run(ctx, s.rdb, []string{tk.Hash, tk.Events, tk.Base},
		taskAtScript.Args(&taskAtArgs{EventID: eventID, Ver: version})...).Slice()
	if err != nil {
		return TaskAt{}, fmt.Errorf("taskstore: task at version: %w", err)
	}
	status, _ := res[0].(int64)
	switch {
	case status == 0:
		return TaskAt{}, ErrNotFound
	case status == 1 && len(res) > 1:
		snap, _ := res[1].(string)
		return TaskAt{Snapshot: []byte(snap)}, nil
	}
	var at TaskAt
	if len(res) > 1 {
		if b, ok := res[1].(string); ok {
			at.Base = []byte(b)
		}
	}
	for _, e := range res[min(2, len(res)):] {
		if b, ok := e.(string); ok {
			at.Events = append(at.Events, []byte(b))
		}
	}
	if at.Base != nil && len(at.Events) == 0 {
		return TaskAt{Snapshot: at.Base}, nil // nothing to fold: the base is the task
	}
	return at, nil
}
