package chaos

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/layout"
)

// Truth is what Redis holds: every task relay committed, with its events
// in commit order and its push configs. The relays run with the default
// key prefix and partition count, which Truth reads with.
type Truth struct {
	Tasks map[string]*TaskTruth
}

// TaskTruth is one committed task.
type TaskTruth struct {
	ID        string
	Partition int
	// Owner is the client (principal) whose task index lists it, e.g.
	// "key:load".
	Owner string
	State a2a.TaskState
	// Text is the text of the task's first message (it names the client
	// request that created it).
	Text    string
	Events  []EventTruth
	Configs []string
}

// EventTruth is one entry of a task's event stream.
type EventTruth struct {
	ID    string
	Kind  a2a.EventKind
	State a2a.TaskState
	Seq   int
	// Mark is the marker a chaos worker put in the status message of each
	// event it posted ("" for other events): one per logical post.
	Mark string
}

// Notification is one notification relay owes a push config: one event of
// the task to one config.
type Notification struct {
	ID, Task, Config string
	Event            EventTruth
	// Pos is the event's place among the task's delivered events (0-based).
	Pos int
}

// NotificationID is relay's id of the notification of event eventID of a
// task to push config cfg (see internal/taskstore/lua/commit.lua).
func NotificationID(partition int, task, eventID, cfg string) string {
	sum := sha1.Sum([]byte(task + "|" + eventID + "|" + cfg))
	return strconv.Itoa(partition) + "." + hex.EncodeToString(sum[:])[:32]
}

// Notifications lists what relay owes the task's push configs, per config
// in commit order. Events committed before a config was registered are not
// owed to it; in this suite every config comes with the task's creation.
func (t *TaskTruth) Notifications() []Notification {
	var out []Notification
	for _, cfg := range t.Configs {
		pos := 0
		for _, e := range t.Events {
			if e.Kind == a2a.EventMessage {
				continue // the client's own messages are not delivered
			}
			out = append(out, Notification{ID: NotificationID(t.Partition, t.ID, e.ID, cfg), Task: t.ID, Config: cfg, Event: e, Pos: pos})
			pos++
		}
	}
	return out
}

// LastEventID is the id of the task's last event ("" for none).
func (t *TaskTruth) LastEventID() string {
	if len(t.Events) == 0 {
		return ""
	}
	return t.Events[len(t.Events)-1].ID
}

// Notifications lists every notification relay owes, over every task.
func (tr *Truth) Notifications() []Notification {
	var out []Notification
	for _, t := range tr.Tasks {
		out = append(out, t.Notifications()...)
	}
	return out
}

// Events counts the events of every task.
func (tr *Truth) Events() int {
	n := 0
	for _, t := range tr.Tasks {
		n += len(t.Events)
	}
	return n
}

// ReadTruth reads every task of the task indexes of owners (principals:
// "key:<name>" for an API key, "" for the anonymous one).
func ReadTruth(ctx context.Context, rdb redis.UniversalClient, owners ...string) (*Truth, error) {
	k := layout.New("", 0) // relay's default prefix and partitions
	var ids []string
	ownerOf := map[string]string{}
	for _, owner := range owners {
		for p := range k.Partitions() {
			got, err := rdb.ZRange(ctx, k.Index(p, owner), 0, -1).Result()
			if err != nil {
				return nil, fmt.Errorf("read task index: %w", err)
			}
			for _, id := range got {
				if prev, ok := ownerOf[id]; ok {
					return nil, fmt.Errorf("task %s is in the indexes of %q and %q", id, prev, owner)
				}
				ownerOf[id] = owner
			}
			ids = append(ids, got...)
		}
	}
	tr := &Truth{Tasks: make(map[string]*TaskTruth, len(ids))}
	const batch = 256
	for len(ids) > 0 {
		chunk := ids[:min(batch, len(ids))]
		ids = ids[len(chunk):]
		pipe := rdb.Pipeline()
		snaps := make([]*redis.StringCmd, len(chunk))
		events := make([]*redis.XMessageSliceCmd, len(chunk))
		configs := make([]*redis.StringSliceCmd, len(chunk))
		for i, id := range chunk {
			tk := k.Task(id)
			snaps[i] = pipe.HGet(ctx, tk.Hash, "snap")
			events[i] = pipe.XRange(ctx, tk.Events, "-", "+")
			configs[i] = pipe.HKeys(ctx, tk.Push)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, fmt.Errorf("read tasks: %w", err)
		}
		for i, id := range chunk {
			t := &TaskTruth{ID: id, Partition: k.Partition(id), Owner: ownerOf[id], Configs: configs[i].Val()}
			var snap a2a.Task
			if err := json.Unmarshal([]byte(snaps[i].Val()), &snap); err != nil {
				return nil, fmt.Errorf("task %s: snapshot: %w", id, err)
			}
			t.State = snap.Status.State
			if len(snap.History) > 0 && len(snap.History[0].Parts) > 0 {
				t.Text = snap.History[0].Parts[0].Text
			}
			for _, m := range events[i].Val() {
				var ev a2a.Event
				if err := json.Unmarshal(layout.DecodeEventEntry(m.Values).Event, &ev); err != nil {
					return nil, fmt.Errorf("task %s: event %s: %w", id, m.ID, err)
				}
				e := EventTruth{ID: m.ID, Kind: ev.Kind}
				if ev.Status != nil {
					e.State = ev.Status.State
					if msg := ev.Status.Message; msg != nil && len(msg.Parts) > 0 && strings.HasPrefix(msg.Parts[0].Text, markPrefix) {
						e.Mark = msg.Parts[0].Text
					}
				}
				if ev.Kind == a2a.EventTask && ev.Task != nil {
					e.State = ev.Task.Status.State
				}
				var meta demoMeta
				_ = json.Unmarshal(ev.Metadata, &meta)
				e.Seq = meta.Seq
				t.Events = append(t.Events, e)
			}
			tr.Tasks[id] = t
		}
	}
	return tr, nil
}

// Outstanding counts the notifications relay has not delivered yet (pending
// or failed, awaiting a retry) and the ones in dead letters.
func Outstanding(ctx context.Context, rdb redis.UniversalClient, partitions int) (open, dead int64, err error) {
	pipe := rdb.Pipeline()
	var opens, deads []*redis.IntCmd
	k := layout.New("", partitions) // relay's default prefix
	for p := range k.Partitions() {
		opens = append(opens, pipe.ZCard(ctx, k.StatusIndex(p, "pending")), pipe.ZCard(ctx, k.StatusIndex(p, "failed")))
		deads = append(deads, pipe.ZCard(ctx, k.StatusIndex(p, "dead")))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	for _, c := range opens {
		open += c.Val()
	}
	for _, c := range deads {
		dead += c.Val()
	}
	return open, dead, nil
}

// streamTime is the commit time in a Redis stream id ("ms-seq").
func streamTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return time.UnixMilli(n)
}
