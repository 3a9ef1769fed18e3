package outbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

//go:embed lua/replay.lua
var replayLua string

// Replay is the outbox's side of a replay (delivery.Replayer): it reads a
// task's event stream, and queues the notifications of its events again.
// Its API: TaskEvents, EventsCutBefore, Requeue.
type Replay struct {
	rdb    redis.UniversalClient
	k      layout.Keys
	keep   time.Duration
	outbox bool
	replay *redis.Script
}

// NewReplay returns the replay side over d.RDB, named by d.Keys (d.Batch is
// not used); of cfg it reads DeliveryRetention (the records it makes live
// as long) and Outbox (which path a replayed notification takes). It
// returns an error naming what is missing or out of range.
func NewReplay(d Deps, cfg Config) (*Replay, error) {
	if err := d.check("replay", false); err != nil {
		return nil, err
	}
	if err := cfg.check("replay"); err != nil {
		return nil, err
	}
	return &Replay{rdb: d.RDB, k: d.Keys, keep: cfg.retention(), outbox: cfg.Outbox, replay: layout.Script(replayLua)}, nil
}

// StoredEvent is one entry of a task's event stream.
type StoredEvent struct {
	// ID is the entry's stream id ("ms-seq": its commit time in ms first).
	ID    string
	Event []byte
}

// TaskEvents reads up to count entries of task taskID's event stream after
// stream id after ("": from start) up to stream id end (inclusive; "+": the
// last), in order.
func (s *Replay) TaskEvents(ctx context.Context, taskID, start, end string, count int) ([]StoredEvent, error) {
	msgs, err := s.rdb.XRangeN(ctx, s.k.Task(taskID).Events, start, end, int64(count)).Result()
	if err != nil {
		return nil, fmt.Errorf("outbox: read task events: %w", err)
	}
	out := make([]StoredEvent, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, StoredEvent{ID: m.ID, Event: layout.DecodeEventEntry(m.Values).Event})
	}
	return out, nil
}

// EventsCutBefore tells before when the events of task taskID's stream
// are no longer all stored (zero: none was cut). Streams are cut from
// their oldest entry (compaction's XTRIM MINID): when the stream added
// more entries than it holds, every event before its first entry's
// time may be gone (an event of that very ms before it, too: the
// millisecond is the finest the answer goes). It returns ErrNotFound when
// the task has no event stream (it expired, or never was).
func (s *Replay) EventsCutBefore(ctx context.Context, taskID string) (time.Time, error) {
	info, err := s.rdb.XInfoStream(ctx, s.k.Task(taskID).Events).Result()
	if err != nil {
		if isNoSuchKey(err) {
			return time.Time{}, ErrNotFound
		}
		return time.Time{}, fmt.Errorf("outbox: read task events: %w", err)
	}
	var ms int64
	switch {
	case info.EntriesAdded <= info.Length:
	case info.Length == 0:
		ms = idMsInt(info.LastGeneratedID) + 1
	default:
		ms = idMsInt(info.FirstEntry.ID)
	}
	if d := info.MaxDeletedEntryID; d != "" && d != "0-0" {
		ms = max(ms, idMsInt(d)+1)
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

// idMsInt is the ms part of a stream id, as a number.
func idMsInt(id string) int64 {
	n, _ := strconv.ParseInt(idMs(id), 10, 64)
	return n
}

// isNoSuchKey tells the error XINFO STREAM answers for a missing key.
func isNoSuchKey(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && re.Error() == "ERR no such key"
}

// Requeued is one notification to queue again (Requeue).
type Requeued struct {
	EventID, ConfigID string
}

// RequeueResult says what Requeue did with the notifications it was given.
type RequeueResult struct {
	// Queued: queued again. Waiting: still queued (pending or retrying),
	// left as they were. Gone: their event was cut meanwhile.
	Queued, Waiting, Gone int
}

// requeueStep caps the notifications of one script call.
const requeueStep = 256

// Requeue queues notifications of task taskID again, in the order given,
// each at the end of its (task, config) lane, with the id its commit gave
// it (lua/replay.lua). Each call of the script takes up to requeueStep of
// them atomically.
func (s *Replay) Requeue(ctx context.Context, taskID string, notes []Requeued, now time.Time) (RequeueResult, error) {
	var res RequeueResult
	for len(notes) > 0 {
		n := min(len(notes), requeueStep)
		got, err := s.requeueStep(ctx, taskID, notes[:n], now)
		if err != nil {
			return res, err
		}
		res.Queued, res.Waiting, res.Gone = res.Queued+got.Queued, res.Waiting+got.Waiting, res.Gone+got.Gone
		notes = notes[n:]
	}
	return res, nil
}

type replayNote struct {
	E string `json:"e"`
	C int    `json:"c"`
	N string `json:"n"`
}

type replayArgs struct {
	Task   string `json:"task"`
	Now    string `json:"now"`
	Keep   string `json:"keep"`
	Outbox bool   `json:"outbox"`
	// Statuses is how many status indexes the keys hold.
	Statuses int          `json:"statuses"`
	Configs  []string     `json:"configs"`
	Notes    []replayNote `json:"notes"`
}

func (s *Replay) requeueStep(ctx context.Context, taskID string, notes []Requeued, now time.Time) (RequeueResult, error) {
	p := s.k.Partition(taskID)
	tk := s.k.Task(taskID)
	args := replayArgs{Task: taskID, Now: strconv.FormatInt(now.UnixMilli(), 10), Keep: strconv.FormatInt(s.keep.Milliseconds(), 10),
		Outbox: s.outbox}
	cfgIndex := map[string]int{}
	for _, n := range notes {
		c, ok := cfgIndex[n.ConfigID]
		if !ok {
			args.Configs = append(args.Configs, n.ConfigID)
			c = len(args.Configs)
			cfgIndex[n.ConfigID] = c
		}
		args.Notes = append(args.Notes, replayNote{E: n.EventID, C: c, N: s.k.NotificationID(taskID, n.EventID, n.ConfigID)})
	}
	keys := []string{s.k.Deliveries(p), s.k.Outbox(p), s.k.TaskDeliveries(taskID), tk.Events}
	keys = append(keys, s.k.StatusIndexes(p)...)
	args.Statuses = len(keys) - 4
	for _, c := range args.Configs {
		keys = append(keys, s.k.Lane(taskID, c))
	}
	for _, n := range args.Notes {
		keys = append(keys, s.k.Record(p, n.N), s.k.LegacyAttempts(p, n.N))
	}
	js, err := json.Marshal(args)
	if err != nil {
		return RequeueResult{}, fmt.Errorf("outbox: replay: %w", err)
	}
	out, err := s.replay.Run(ctx, s.rdb, keys, string(js) /* args */).Int64Slice()
	if err != nil {
		return RequeueResult{}, fmt.Errorf("outbox: replay: %w", err)
	}
	if len(out) != 3 {
		return RequeueResult{}, errors.New("outbox: replay: short reply")
	}
	return RequeueResult{Queued: int(out[0]), Waiting: int(out[1]), Gone: int(out[2])}, nil
}
