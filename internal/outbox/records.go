package outbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/zindex"
	"github.com/redis/go-redis/v9"
)

// DeliveryStatuses are the states of a delivery record.
var DeliveryStatuses = []string{"pending", "failed", "delivered", "dead", "disabled", "dropped"}

// IndexedStatuses are the statuses listed across tasks; delivered records
// are listed per task (they are most records, and rarely what an operator
// hunts for).
var IndexedStatuses = layout.IndexedStatuses()

// ErrQueued: the notification is still queued or retrying; redelivering it
// now would send it twice.
var ErrQueued = errors.New("the delivery is still pending or retrying")

// ErrNeedsTask: delivered records can only be listed per task.
var ErrNeedsTask = errors.New("delivered deliveries are listed per task: add task=<id>")

// DeliveryRecord is the record of one notification to one push config
// (stored in the codec of layout/record.go).
type DeliveryRecord = layout.DeliveryRecord

// Records is the operator API's side of the outbox: it reads delivery
// records (and shows the notifications still waiting in an outbox as
// pending), lists them, queues them again, and expires their indexes and
// dead letters. Its API: Delivery, ListDeliveries, Redeliver, Redrive,
// ExpireRecords.
type Records struct {
	conn
	keep   time.Duration
	outbox bool
}

// NewRecords returns the records over d.RDB, named by d.Keys (d.Batch is
// not used); of cfg it reads DeliveryRetention (how long the indexes keep
// an entry) and Outbox (where a redelivery is queued). It returns an error
// naming what is missing or out of range.
func NewRecords(d Deps, cfg Config) (*Records, error) {
	if err := d.check("records", false); err != nil {
		return nil, err
	}
	if err := cfg.check("records"); err != nil {
		return nil, err
	}
	return &Records{conn: conn{rdb: d.RDB, k: d.Keys}, keep: cfg.retention(), outbox: cfg.Outbox}, nil
}

// partitionOf reads the partition that heads a notification id ("p.hex").
func (s *Records) partitionOf(id string) (int, bool) {
	ps, _, ok := strings.Cut(id, ".")
	p, err := strconv.Atoi(ps)
	return p, ok && err == nil && p >= 0 && p < s.k.Partitions()
}

// Delivery returns one delivery record with its attempts, or ErrNotFound.
// A notification waiting in an outbox has no record yet: it is shown
// pending, from the outbox.
func (s *Records) Delivery(ctx context.Context, id string) (DeliveryRecord, error) {
	p, ok := s.partitionOf(id)
	if !ok {
		return DeliveryRecord{}, ErrNotFound
	}
	r, err := s.storedDelivery(ctx, p, id)
	if errors.Is(err, ErrNotFound) {
		return s.waitingDelivery(ctx, p, id)
	}
	return r, err
}

// storedDelivery reads notification id's record, or ErrNotFound.
func (s *Records) storedDelivery(ctx context.Context, p int, id string) (DeliveryRecord, error) {
	key := s.k.Record(p, id)
	raw, err := s.rdb.Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return DeliveryRecord{}, ErrNotFound
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		r, err := s.legacyDelivery(ctx, p, id)
		if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
			// A script carried the record over to the current form
			// between the two reads: read that.
			raw, err = s.rdb.Get(ctx, key).Result()
			if err != nil {
				return DeliveryRecord{}, fmt.Errorf("outbox: read delivery: %w", err)
			}
			break
		}
		return r, err
	case err != nil:
		return DeliveryRecord{}, fmt.Errorf("outbox: read delivery: %w", err)
	}
	r, err := layout.DecodeRecord(raw)
	if err != nil {
		return DeliveryRecord{}, fmt.Errorf("outbox: delivery %s: %w", id, err)
	}
	r.ID = id
	return r, nil
}

// legacyDelivery reads a record a previous relay wrote: a hash, and its
// attempts in a list of their own.
func (s *Records) legacyDelivery(ctx context.Context, p int, id string) (DeliveryRecord, error) {
	pipe := s.rdb.Pipeline()
	h := pipe.HGetAll(ctx, s.k.Record(p, id))
	a := pipe.LRange(ctx, s.k.LegacyAttempts(p, id), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return DeliveryRecord{}, fmt.Errorf("outbox: read delivery: %w", err)
	}
	m := h.Val()
	if len(m) == 0 {
		return DeliveryRecord{}, ErrNotFound
	}
	r := DeliveryRecord{ID: id, TaskID: m["task"], ConfigID: m["config"], EventID: m["event"], Status: m["status"]}
	r.Attempts, _ = strconv.Atoi(m["attempts"])
	r.Created, r.Updated, r.Next = layout.MsTime(m["created"]), layout.MsTime(m["updated"]), layout.MsTime(m["next"])
	for _, s := range a.Val() {
		r.AttemptLog = append(r.AttemptLog, []byte(s))
	}
	return r, nil
}

// IndexEntry is one notification in listing order (TaskID holds its
// notification id): newest first.
type IndexEntry = zindex.Entry

// DeliveryFilter selects delivery records. With TaskID the task's own
// deliveries are read (taskIndex); otherwise the status indexes of every
// partition are merged.
type DeliveryFilter struct {
	TaskID, ConfigID, Status string
	Cursor                   *IndexEntry
	Limit                    int
}

// ListDeliveries returns matching delivery records, newest first, and the
// cursor of the next page (nil at the end).
func (s *Records) ListDeliveries(ctx context.Context, f DeliveryFilter) ([]DeliveryRecord, *IndexEntry, error) {
	var keys []string
	round := f.Limit // entries looked at per round
	scan := func(cursor *IndexEntry) ([]IndexEntry, *IndexEntry, int, error) {
		es, err := zindex.Scan(ctx, s.rdb, keys, cursor, round)
		return es, nil, 0, err
	}
	if f.TaskID != "" {
		// (a round reads at least 64 stream entries: it looks at what they
		// name, rather than read them again for the next round)
		round = max(f.Limit, 64)
		scan = func(cursor *IndexEntry) ([]IndexEntry, *IndexEntry, int, error) {
			return s.taskIndex(ctx, f.TaskID, cursor, round)
		}
	} else {
		statuses := IndexedStatuses
		if f.Status != "" {
			if !slices.Contains(IndexedStatuses, f.Status) {
				return nil, nil, ErrNeedsTask
			}
			statuses = []string{f.Status}
		}
		for p := 0; p < s.k.Partitions(); p++ {
			for _, st := range statuses {
				keys = append(keys, s.k.StatusIndex(p, st))
			}
		}
	}
	// Notifications waiting in an outbox have no record yet: they are
	// listed, pending, from the outboxes (outbox.go: waitingIndex), read
	// once per listing. (The commit lists them in their task's deliveries
	// too, under the same ms.)
	var waiting []IndexEntry
	waitingRecs := map[string]DeliveryRecord{}
	if f.Status == "" || f.Status == "pending" {
		for p := 0; p < s.k.Partitions(); p++ {
			if f.TaskID != "" && p != s.k.Partition(f.TaskID) {
				continue
			}
			w, err := s.waitingIndex(ctx, p, f.TaskID, waitingRecs)
			if err != nil {
				return nil, nil, err
			}
			waiting = append(waiting, w...)
		}
	}
	var out []DeliveryRecord
	cursor := f.Cursor
	for budget := 20*f.Limit + 200; len(out) < f.Limit && budget > 0; {
		entries, resume, scanned, err := scan(cursor)
		if err != nil {
			return nil, nil, err
		}
		entries = zindex.Merge(entries, waiting, cursor, round)
		if resume != nil { // (what waits after resume comes in the next round)
			entries = slices.DeleteFunc(entries, func(e IndexEntry) bool { return e.Score <= resume.Score })
		}
		budget -= len(entries) + scanned
		for i, e := range entries {
			cursor = &entries[i]
			r, err := s.listedDelivery(ctx, e.TaskID, waitingRecs)
			if errors.Is(err, ErrNotFound) {
				continue // expired, or waiting and not asked for
			}
			if err != nil {
				return nil, nil, err
			}
			if (f.ConfigID == "" || r.ConfigID == f.ConfigID) && (f.Status == "" || r.Status == f.Status) {
				out = append(out, r)
				if len(out) == f.Limit {
					return out, cursor, nil
				}
			}
		}
		if resume != nil {
			cursor = resume
		} else if len(entries) < round {
			return out, nil, nil
		}
	}
	return out, cursor, nil
}

// taskIndex returns up to limit of task taskID's notifications after cursor
// (nil: from the newest), newest first: those its event stream names
// (each entry names the configs its commit queued it for, under the
// entry's ms; lua/named.lua reads them) merged with those its delivery
// index lists (the notifications the stream does not name: cut from it by
// compaction, replayed for another config or past the stream's expiry,
// made while the task's retention was shorter than the records', or by a
// previous relay), each once. A notification in both is under its event's
// ms in each, so that pages never list it twice (the notification a
// compaction moves meanwhile keeps its event's ms).
//
// The stream is read first: a compaction between the two reads lists what
// it cuts in the index under the same ms, so that it is read twice (and
// listed once), never missed.
//
// A round reads about namedScanMax entries of the stream at most, in script
// calls of max(limit, 64) entries (one call when limit is larger): an entry
// names no config when its event notified none, so a page of limit
// notifications may lie far back. When it stops short of limit there,
// resume is where the next round goes on (what is returned is all that
// comes before it), and scanned is how many entries it read.
func (s *Records) taskIndex(ctx context.Context, taskID string, cursor *IndexEntry, limit int) (_ []IndexEntry, resume *IndexEntry, scanned int, _ error) {
	named, resume, scanned, err := s.namedIndex(ctx, taskID, cursor, limit)
	if err != nil {
		return nil, nil, 0, err
	}
	indexed, err := zindex.Scan(ctx, s.rdb, []string{s.k.TaskDeliveries(taskID)}, cursor, limit)
	if err != nil {
		return nil, nil, 0, err
	}
	if resume != nil {
		indexed = slices.DeleteFunc(indexed, func(e IndexEntry) bool { return e.Score <= resume.Score })
	}
	out := zindex.Merge(named, indexed, cursor, limit)
	if len(out) == limit {
		resume = nil // (a full page: its last entry is the cursor)
	}
	return out, resume, scanned, nil
}

// namedScanMax bounds the stream entries a round of a task's listing reads
// (taskIndex), unless they all share one ms.
const namedScanMax = 256

// resumeID is the member of a cursor that stands after every notification
// of its ms (ids are digits, a dot and hex digits, all before it), so
// that a round that stopped at an ms lists the whole ms next.
const resumeID = "~"

// namedIndex returns up to limit of the notifications task taskID's event
// stream names after cursor, newest first, and resume, scanned as taskIndex
// does.
func (s *Records) namedIndex(ctx context.Context, taskID string, cursor *IndexEntry, limit int) (_ []IndexEntry, resume *IndexEntry, scanned int, _ error) {
	from, start := "+", int64(math.MaxInt64)
	if cursor != nil {
		if cursor.Score < 0 {
			return nil, nil, 0, nil
		}
		from = strconv.FormatInt(cursor.Score, 10) // (the whole ms: entries after the cursor in it are kept below)
		start = cursor.Score
	}
	step := max(limit, 64)
	var out []IndexEntry
	for {
		res, err := namedScript.Run(ctx, s.rdb, []string{s.k.Task(taskID).Events}, namedScript.Args(&namedArgs{From: from, Count: step})...).StringSlice()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("outbox: list task deliveries: %w", err)
		}
		if len(res) < 3 {
			return nil, nil, 0, fmt.Errorf("outbox: list task deliveries: unexpected reply %q", res)
		}
		scanned += step
		if start == math.MaxInt64 && res[2] != "" {
			start = idMsInt(res[2])
		}
		for i := 3; i+1 < len(res); i += 2 {
			ms := idMsInt(res[i])
			for _, c := range layout.EventConfigs(res[i+1]) {
				out = append(out, IndexEntry{TaskID: s.k.NotificationID(taskID, res[i], c), Score: ms})
			}
		}
		out = zindex.Merge(out, nil, cursor, len(out))
		// Entries not read yet are of the last one's ms or older: once the
		// limit-th found is newer, none of them comes before it.
		last := idMsInt(res[0])
		if res[1] != "1" || (len(out) >= limit && out[limit-1].Score > last) {
			break
		}
		if scanned >= namedScanMax && last < start {
			// What was found before last's ms is all there is before it;
			// the next round lists last's ms and what is older.
			out = slices.DeleteFunc(out, func(e IndexEntry) bool { return e.Score <= last })
			return out, &IndexEntry{TaskID: resumeID, Score: last}, scanned, nil
		}
		from = "(" + res[0]
	}
	return out[:min(limit, len(out))], nil, scanned, nil
}

// namedArgs are lua/named.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type namedArgs struct {
	From  string `lua:"from"`
	Count int    `lua:"count,number"`
}

//go:embed lua/named.lua
var namedLua string

var namedScript = layout.ScriptOf[namedArgs](namedLua)

// listedDelivery is Delivery for a listing: a notification without a
// record is one of waiting (the listing read the outboxes once), or not
// listed.
func (s *Records) listedDelivery(ctx context.Context, id string, waiting map[string]DeliveryRecord) (DeliveryRecord, error) {
	p, ok := s.partitionOf(id)
	if !ok {
		return DeliveryRecord{}, ErrNotFound
	}
	r, err := s.storedDelivery(ctx, p, id)
	if errors.Is(err, ErrNotFound) {
		if w, ok := waiting[id]; ok {
			return w, nil
		}
	}
	return r, err
}

// Redeliver queues a stored notification again at the end of its lane.
func (s *Records) Redeliver(ctx context.Context, id string, now time.Time) error {
	r, err := s.Delivery(ctx, id)
	if err != nil {
		return err
	}
	if r.Status == "pending" || r.Status == "failed" {
		return ErrQueued
	}
	p := s.k.Partition(r.TaskID)
	keys := append([]string{s.k.Lane(r.TaskID, r.ConfigID), s.k.Deliveries(p), s.k.Record(p, id), s.k.Task(r.TaskID).Events,
		s.k.LegacyAttempts(p, id)}, s.k.StatusIndexes(p)...)
	if s.outbox {
		keys = append(keys, s.k.Outbox(p))
	}
	err = redeliverScript.Run(ctx, s.rdb, keys, redeliverScript.Args(&redeliverArgs{
		Event:  r.EventID,
		Task:   r.TaskID,
		Config: r.ConfigID,
		Now:    now.UnixMilli(),
		NID:    id,
	})...).Err()
	if err != nil && strings.Contains(err.Error(), "NOTFOUND") {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("outbox: redeliver: %w", err)
	}
	return nil
}

// redeliverArgs are lua/redeliver.lua's arguments, each read there by its
// lua name (layout.Named), where each is described.
type redeliverArgs struct {
	Event  string `lua:"event"`
	Task   string `lua:"task"`
	Config string `lua:"config"`
	Now    int64  `lua:"now"`
	NID    string `lua:"nid"`
}

var redeliverScript = layout.ScriptOf[redeliverArgs](redeliverLua)

// Redrive redelivers the dead letters of every partition (of one task when
// taskID is set) and removes them from the dead-letter streams. It returns
// how many it queued again.
func (s *Records) Redrive(ctx context.Context, taskID string, now time.Time) (int, error) {
	n := 0
	for p := 0; p < s.k.Partitions(); p++ {
		if taskID != "" && p != s.k.Partition(taskID) {
			continue
		}
		dead := s.k.Dead(p)
		msgs, err := s.rdb.XRange(ctx, dead, "-", "+").Result()
		if err != nil {
			return n, fmt.Errorf("outbox: read dead letters: %w", err)
		}
		for _, m := range msgs {
			id, _ := m.Values["n"].(string)
			if t, _ := m.Values["t"].(string); taskID != "" && t != taskID {
				continue
			}
			// A dead letter an operator already redelivered is no longer
			// dead: drop its entry, do not send it again.
			r, err := s.Delivery(ctx, id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return n, fmt.Errorf("outbox: read dead letter: %w", err)
			}
			if err == nil && r.Status == "dead" {
				switch err := s.Redeliver(ctx, id, now); {
				case err == nil:
					n++
				case !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrQueued):
					return n, err
				}
			}
			if err := s.rdb.XDel(ctx, dead, m.ID).Err(); err != nil {
				return n, fmt.Errorf("outbox: remove dead letter: %w", err)
			}
		}
	}
	return n, nil
}

// ExpireRecords drops, in partition p, index entries and dead letters older
// than the delivery retention: the records they point to have expired, and
// with noeviction nothing may grow without bound.
func (s *Records) ExpireRecords(ctx context.Context, p int, now time.Time) error {
	cut := now.Add(-s.keep).UnixMilli()
	pipe := s.rdb.Pipeline()
	for _, st := range IndexedStatuses {
		pipe.ZRemRangeByScore(ctx, s.k.StatusIndex(p, st), "-inf", "("+strconv.FormatInt(cut, 10))
	}
	pipe.XTrimMinID(ctx, s.k.Dead(p), strconv.FormatInt(cut, 10))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("outbox: expire delivery records: %w", err)
	}
	return nil
}
