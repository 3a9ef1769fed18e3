package outbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

// The outbox (RELAY_OUTBOX=stream) is the lean way from a commit to a
// webhook. The commit appends one entry per notification to its partition's
// outbox stream, and one relay at a time owns a partition (a lease): it reads
// the outbox in order, keeps each lane's notifications in order in memory,
// delivers their first attempts, and reports what became of them in batches
// (FinishOutbox). A notification whose first attempt fails is parked: it
// goes to its lane, and the lanes' tokens, retries and dead letters take it
// from there; later notifications of a parked lane queue behind it until the
// lane is empty again. The owner stores an offset (every entry up to it is
// done), from which the next owner reads after a failover.

var (
	//go:embed lua/outbox_own.lua
	outboxOwnLua string
	//go:embed lua/outbox_finish.lua
	outboxFinishLua string
	//go:embed lua/adopt.lua
	adoptLua string
	//go:embed lua/trim.lua
	trimLua string
)

// OutboxEntry is one notification in a partition's outbox.
type OutboxEntry struct {
	// ID is the entry's id in the outbox stream.
	ID             string
	TaskID         string
	ConfigID       string
	EventID        string
	NotificationID string
	// Lane names the notification's lane, the (task, config) pair whose
	// notifications go in order.
	Lane string
	// Redelivery marks a notification an operator queued again: its record
	// exists (pending) and keeps its attempts.
	Redelivery bool
	// Indexed: the commit listed the notification, in its task's delivery
	// index or in its event's stream entry (entries of an older relay were
	// not: the owner's report indexes them).
	Indexed bool
	// Named: the commit named the notification's config in its event's
	// stream entry (layout.EventEntry.Configs), whence it is listed under
	// its event's ms; else (Indexed) it is in the task's delivery index
	// under this entry's ms.
	Named bool
	// Event and Version: the event and the task version it made, when the
	// entry carries them (the first config's entry of a small event; see
	// taskstore.OutboxInlineMax). Nil: read it from the task's stream.
	Event   []byte
	Version int64
	// TraceParent is the carried event's turn's traceparent ('p'; "": none).
	TraceParent string
}

// Ownership is what an owner starts from when it takes a partition.
type Ownership struct {
	// Offset: every entry up to it is done.
	Offset string
	// Last is the outbox's last entry when the partition was taken: the
	// entries after Offset up to Last may have been delivered by the
	// previous owner already (see LoadOutbox's status).
	Last string
	// Parked holds the lanes (OutboxEntry.Lane) with parked notifications.
	Parked map[string]bool
}

// MayBeDone tells whether the entry with id may have been worked on by a
// previous owner (it was in the outbox when the partition was taken).
func (o Ownership) MayBeDone(id string) bool { return !layout.IDBefore(o.Last, id) }

// Pending tells whether the outbox holds entries after the offset.
func (o Ownership) Pending() bool { return layout.IDBefore(o.Offset, o.Last) }

// Owners keep who owns each partition's outbox (one relay at a time, under
// an outbox lease), the relays that share them, and the lanes an owner
// adopts or finds parked when it takes a partition. The Consumer holds
// the lease times. Its API: Own, KeepOwning, OutboxRelays, OutboxOwner,
// LeaveOutbox, AdoptLanes, ParkedLanes, ForgetAdoptions.
type Owners struct {
	conn
}

// NewOwners returns the outboxes' owners over d.RDB, named by d.Keys
// (d.Batch is not used), or an error naming what is missing.
func NewOwners(d Deps) (*Owners, error) {
	if err := d.check("owners", false); err != nil {
		return nil, err
	}
	return &Owners{conn: conn{rdb: d.RDB, k: d.Keys}}, nil
}

// ownArgs are lua/outbox_own.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type ownArgs struct {
	Holder  string `lua:"holder"`
	LeaseMs int64  `lua:"leaseMs"`
	Action  string `lua:"action"`
	Offset  string `lua:"offset"`
}

var ownScript = layout.BareScriptOf[ownArgs](outboxOwnLua)

// Own takes partition p's outbox for holder for ttl, when no other owner
// holds it.
func (s *Owners) Own(ctx context.Context, p int, holder string, ttl time.Duration) (Ownership, bool, error) {
	res, err := ownScript.Run(ctx, s.rdb, s.ownKeys(p), ownScript.Args(&ownArgs{
		Holder:  holder,
		LeaseMs: ttl.Milliseconds(),
		Action:  "own",
	})...).Slice()
	if err != nil {
		return Ownership{}, false, fmt.Errorf("outbox: own outbox: %w", err)
	}
	if n, _ := res[0].(int64); n != 1 || len(res) < 3 {
		return Ownership{}, false, nil
	}
	o := Ownership{Parked: map[string]bool{}}
	o.Offset, _ = res[1].(string)
	o.Last, _ = res[2].(string)
	for _, l := range res[3:] {
		if s, ok := l.(string); ok {
			o.Parked[s] = true
		}
	}
	return o, true, nil
}

// KeepOwning renews holder's lease of partition p's outbox and stores
// offset (unless ""), dropping the entries before it; with release it gives
// the lease up. It returns false when the lease is another's.
func (s *Owners) KeepOwning(ctx context.Context, p int, holder string, ttl time.Duration, offset string, release bool) (bool, error) {
	mode := "keep"
	if release {
		mode = "release"
	}
	res, err := ownScript.Run(ctx, s.rdb, s.ownKeys(p), ownScript.Args(&ownArgs{
		Holder:  holder,
		LeaseMs: ttl.Milliseconds(),
		Action:  mode,
		Offset:  offset,
	})...).Slice()
	if err != nil {
		return false, fmt.Errorf("outbox: keep outbox: %w", err)
	}
	n, _ := res[0].(int64)
	return n == 1, nil
}

func (s *Owners) ownKeys(p int) []string {
	return []string{s.k.OutboxOwner(p), s.k.OutboxOffset(p), s.k.Outbox(p), s.k.Parked(p)}
}

// OutboxRelays records that relay me takes part in owning outboxes, and
// returns how many relays did so within ttl (me included).
func (s *Owners) OutboxRelays(ctx context.Context, me string, ttl time.Duration) (int, error) {
	now := time.Now()
	key := s.k.OutboxRelays()
	pipe := s.rdb.Pipeline()
	pipe.ZAdd(ctx, key, redis.Z{Score: float64(now.UnixMilli()), Member: me})
	pipe.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.Add(-ttl).UnixMilli(), 10))
	n := pipe.ZCard(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("outbox: outbox relays: %w", err)
	}
	return int(n.Val()), nil
}

// OutboxOwner returns the relay that owns partition p's outbox ("" when none does).
func (s *Owners) OutboxOwner(ctx context.Context, p int) (string, error) {
	h, err := s.rdb.Get(ctx, s.k.OutboxOwner(p)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("outbox: outbox owner: %w", err)
	}
	return h, nil
}

// LeaveOutbox takes relay me off the outbox owners (it stops).
func (s *Owners) LeaveOutbox(ctx context.Context, me string) {
	_ = s.rdb.ZRem(ctx, s.k.OutboxRelays(), me).Err()
}

// AdoptLanes lists, once per partition, the lanes that hold notifications
// from the lanes path (a previous version's, or RELAY_DELIVERY_PATH=lanes)
// as parked, so that the outbox's notifications of those lanes queue behind
// them; once done (the partition's adoption mark), it lists none. It reads
// the partition's tokens in steps of adoptStep (lua/adopt.lua), so that a
// large backlog does not hold Redis in one long script.
func (s *Owners) AdoptLanes(ctx context.Context, p int) ([]string, error) {
	var lanes []string
	phase, cursor := "retries", "0"
	for phase != "done" {
		var found []string
		var err error
		if phase, cursor, found, err = s.adoptStep(ctx, p, phase, cursor); err != nil {
			return nil, err
		}
		lanes = append(lanes, found...)
	}
	return lanes, nil
}

// adoptArgs are lua/adopt.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type adoptArgs struct {
	Lanes  string `lua:"lanes"`
	Phase  string `lua:"phase"`
	Cursor string `lua:"cursor"`
	Count  int    `lua:"count,number"`
	MarkMs int64  `lua:"markMs"`
}

var adoptScript = layout.ScriptOf[adoptArgs](adoptLua)

// adoptStep runs one step of AdoptLanes (see lua/adopt.lua): it returns the
// next step's phase and cursor ("done" at the end) and the lanes it found.
func (s *Owners) adoptStep(ctx context.Context, p int, phase, cursor string) (string, string, []string, error) {
	keys := []string{s.k.Deliveries(p), s.k.Retries(p), s.k.Parked(p), s.k.OutboxAdopted(p), s.k.OutboxAdopting(p)}
	res, err := adoptScript.Run(ctx, s.rdb, keys, adoptScript.Args(&adoptArgs{
		Lanes:  s.k.Lanes(p),
		Phase:  phase,
		Cursor: cursor,
		Count:  adoptStep,
		MarkMs: adoptingFor.Milliseconds(),
	})...).StringSlice()
	if err != nil {
		return "", "", nil, fmt.Errorf("outbox: adopt lanes: %w", err)
	}
	if len(res) < 2 {
		return "", "", nil, errors.New("outbox: adopt lanes: short reply")
	}
	return res[0], res[1], res[2:], nil
}

const (
	// adoptStep is about how many tokens one step of AdoptLanes reads
	// (about 10 ms of Redis).
	adoptStep = 1000
	// adoptingFor is how long a partition stays marked adopting (its
	// delivery stream untrimmed) after a step, when no step follows.
	adoptingFor = time.Minute
)

// ParkedLanes lists partition p's parked lanes (OutboxEntry.Lane).
func (s *Owners) ParkedLanes(ctx context.Context, p int) ([]string, error) {
	l, err := s.rdb.SMembers(ctx, s.k.Parked(p)).Result()
	if err != nil {
		return nil, fmt.Errorf("outbox: parked lanes: %w", err)
	}
	return l, nil
}

// ForgetAdoptions drops every partition's adoption mark (AdoptLanes): the
// lanes path is taken, and lanes made on it are to be adopted again.
func (s *Owners) ForgetAdoptions(ctx context.Context) error {
	for p := range s.k.Partitions() {
		if err := s.rdb.Del(ctx, s.k.OutboxAdopted(p)).Err(); err != nil {
			return fmt.Errorf("outbox: forget adoptions: %w", err)
		}
	}
	return nil
}

// waitScan caps the outbox entries a listing or a lookup reads per partition.
const waitScan = 4096

// waitingEntries reads partition p's outbox after its offset: the
// notifications waiting for their first attempt (and some the owner has
// reported since it last stored the offset; they have records).
func (s *conn) waitingEntries(ctx context.Context, p int) ([]OutboxEntry, error) {
	off, err := s.rdb.Get(ctx, s.k.OutboxOffset(p)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("outbox: read outbox offset: %w", err)
	}
	start := "-"
	if off != "" {
		start = "(" + off
	}
	msgs, err := s.rdb.XRangeN(ctx, s.k.Outbox(p), start, "+", waitScan).Result()
	if err != nil {
		return nil, fmt.Errorf("outbox: read outbox: %w", err)
	}
	out := make([]OutboxEntry, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, s.outboxEntryOf(m))
	}
	return out, nil
}

// waitingIndex lists partition p's waiting notifications without a record
// (of task taskID unless "") as index entries: the notification id, and its
// commit ms (the score of the status indexes and of the task's delivery
// index), or, in a task's listing, its event's ms when the event's stream
// entry names it (records.go). Their pending records go into recs.
func (s *Records) waitingIndex(ctx context.Context, p int, taskID string, recs map[string]DeliveryRecord) ([]IndexEntry, error) {
	es, err := s.waitingEntries(ctx, p)
	if err != nil {
		return nil, err
	}
	// An entry reported since the offset was stored has a record, listed
	// by the indexes (under its update time in the status ones): left out.
	var mine []OutboxEntry
	for _, e := range es {
		if taskID == "" || e.TaskID == taskID {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	exists := make([]*redis.IntCmd, len(mine))
	for i, e := range mine {
		exists[i] = pipe.Exists(ctx, s.k.Record(p, e.NotificationID))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("outbox: read outbox records: %w", err)
	}
	var out []IndexEntry
	for i, e := range mine {
		if exists[i].Val() == 0 {
			r := waitingRecord(e)
			score := r.Created.UnixMilli()
			if e.Named && taskID != "" {
				score = idMsInt(e.EventID)
			}
			out = append(out, IndexEntry{TaskID: e.NotificationID, Score: score})
			recs[e.NotificationID] = r
		}
	}
	return out, nil
}

// waitingRecord is the pending record of outbox entry e, which has none.
func waitingRecord(e OutboxEntry) DeliveryRecord {
	ms, _ := strconv.ParseInt(idMs(e.ID), 10, 64)
	at := time.UnixMilli(ms)
	return DeliveryRecord{ID: e.NotificationID, TaskID: e.TaskID, ConfigID: e.ConfigID, EventID: e.EventID, Status: "pending",
		Created: at, Updated: at}
}

// waitingDelivery is the pending record of notification id while it waits
// in partition p's outbox, or ErrNotFound.
func (s *Records) waitingDelivery(ctx context.Context, p int, id string) (DeliveryRecord, error) {
	es, err := s.waitingEntries(ctx, p)
	if err != nil {
		return DeliveryRecord{}, err
	}
	for _, e := range es {
		if e.NotificationID == id {
			return waitingRecord(e), nil
		}
	}
	return DeliveryRecord{}, ErrNotFound
}

// ReadOutbox reads up to count entries of partition p's outbox after id
// after, blocking up to block when there are none.
func (s *Outboxes) ReadOutbox(ctx context.Context, p int, after string, count int, block time.Duration) ([]OutboxEntry, error) {
	res, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{s.k.Outbox(p), after}, Count: int64(count), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: read outbox: %w", err)
	}
	var out []OutboxEntry
	for _, st := range res {
		for _, m := range st.Messages {
			out = append(out, s.outboxEntryOf(m))
		}
	}
	return out, nil
}

// outboxEntryOf reads an outbox stream entry (commit.lua, redeliver.lua).
func (s *conn) outboxEntryOf(m redis.XMessage) OutboxEntry {
	e := OutboxEntry{ID: m.ID}
	e.TaskID, _ = m.Values["t"].(string)
	e.ConfigID, _ = m.Values["c"].(string)
	e.EventID, _ = m.Values["e"].(string)
	e.NotificationID, _ = m.Values["n"].(string)
	e.Redelivery = m.Values["r"] != nil
	e.Indexed = m.Values["i"] != nil
	e.Named = m.Values["i"] == "s"
	if b, ok := m.Values["b"].(string); ok {
		v, _ := m.Values["v"].(string)
		if ver, err := strconv.ParseInt(v, 10, 64); err == nil {
			e.Event, e.Version = []byte(b), ver
			e.TraceParent, _ = m.Values["p"].(string)
		}
	}
	e.Lane = s.k.Lane(e.TaskID, e.ConfigID)
	return e
}

// Loaded is what delivering an outbox entry needs.
type Loaded struct {
	Head Head
	// Status is the delivery record's status, read when asked for ("" when
	// the record expired).
	Status string
}

// LoadOptions say what LoadOutbox reads besides the events.
type LoadOptions struct {
	// Status: the status of each delivery record (Loaded.Status).
	Status bool
	// Clock: Redis's clock (else the time returned is zero).
	Clock bool
	// Known tells the lanes (OutboxEntry.Lane) whose configs the caller
	// has: they are not read (Head.Config stays nil). Nil: none.
	Known func(lane string) bool
}

// LoadOutbox reads, in one round trip, the event and config of each entry
// of es (all of partition p), and what o asks for. An event that an entry
// of es carries is not read (an event is carried by its first config's
// entry; its other configs' entries, which follow, use it too), nor a
// config o.Known has; when nothing is left to read, there is no round trip.
func (s *Outboxes) LoadOutbox(ctx context.Context, p int, es []OutboxEntry, o LoadOptions) ([]Loaded, time.Time, error) {
	type taskEvent struct{ task, event string }
	eventKey := func(e OutboxEntry) taskEvent { return taskEvent{e.TaskID, e.EventID} }
	events := map[taskEvent]*OutboxEntry{} // the carried ones
	for i := range es {
		if es[i].Event != nil {
			events[eventKey(es[i])] = &es[i]
		}
	}
	reads := map[taskEvent]*redis.XMessageSliceCmd{} // the others, read
	configs := map[string]*redis.StringCmd{}
	var needEvents, needConfigs []OutboxEntry
	for _, e := range es {
		if _, ok := events[eventKey(e)]; !ok {
			if _, ok := reads[eventKey(e)]; !ok {
				reads[eventKey(e)] = nil
				needEvents = append(needEvents, e)
			}
		}
		if _, ok := configs[e.Lane]; !ok && (o.Known == nil || !o.Known(e.Lane)) {
			configs[e.Lane] = nil
			needConfigs = append(needConfigs, e)
		}
	}
	records := make([]*redis.StringCmd, len(es))
	var now *redis.TimeCmd
	if len(needEvents) > 0 || len(needConfigs) > 0 || o.Status || o.Clock {
		s.batch.Do(func(pipe redis.Pipeliner) { // the reads share a round trip with other callers' commands
			for _, e := range needEvents {
				stream := s.k.Task(e.TaskID).Events
				reads[eventKey(e)] = pipe.XRange(ctx, stream, e.EventID, e.EventID)
			}
			for _, e := range needConfigs {
				configs[e.Lane] = pipe.HGet(ctx, s.k.Task(e.TaskID).Push, e.ConfigID)
			}
			if o.Status {
				for i, e := range es {
					records[i] = pipe.Get(ctx, s.k.Record(p, e.NotificationID))
				}
			}
			if o.Clock {
				now = pipe.Time(ctx)
			}
		})
	}
	var at time.Time
	if now != nil {
		var err error
		if at, err = now.Result(); err != nil {
			return nil, time.Time{}, fmt.Errorf("outbox: load outbox: %w", err)
		}
	}
	out := make([]Loaded, len(es))
	for i, e := range es {
		h := Head{Entry: e.EventID + " " + e.NotificationID, EventID: e.EventID, NotificationID: e.NotificationID}
		if c, ok := events[eventKey(e)]; ok {
			h.Event, h.Version, h.TraceParent = c.Event, c.Version, c.TraceParent
		} else if msgs, err := reads[eventKey(e)].Result(); err != nil {
			return nil, time.Time{}, fmt.Errorf("outbox: load outbox event: %w", err)
		} else if len(msgs) == 1 {
			ee := layout.DecodeEventEntry(msgs[0].Values)
			h.Event, h.Version, h.TraceParent = ee.Event, ee.Version, ee.TraceParent
		}
		if cmd := configs[e.Lane]; cmd != nil {
			switch c, err := cmd.Result(); {
			case err == nil:
				h.Config = []byte(c)
			case !errors.Is(err, redis.Nil):
				return nil, time.Time{}, fmt.Errorf("outbox: load outbox config: %w", err)
			}
		}
		out[i].Head = h
		if o.Status {
			raw, err := records[i].Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, time.Time{}, fmt.Errorf("outbox: load outbox record: %w", err)
			}
			if r, err := layout.DecodeRecord(raw); err == nil {
				out[i].Status = r.Status
			}
		}
	}
	return out, at, nil
}

// Outbox op kinds (see lua/outbox_finish.lua).
const (
	// OpDone: an attempt ended (delivered, dead, gone, drop or skip).
	OpDone = "done"
	// OpPark: an attempt failed and is retried through the lane.
	OpPark = "park"
	// OpAppend: a notification of a parked lane goes behind its others.
	OpAppend = "append"
	// OpSpill: a notification not yet attempted goes to its lane, which gets
	// a token when it had none (a lane too busy to be held in memory).
	OpSpill = "spill"
	// OpHold: a notification not yet attempted goes to its lane, which
	// waits until Due (the webhook's limits hold it): a spill whose lane,
	// when it had no token, gets a retry due then.
	OpHold = "hold"
)

// Results of FinishOutbox.
const (
	// Applied: the op was carried out.
	Applied = 1
	// LaneEmpty: an append found the lane empty (no longer parked): the
	// owner delivers the notification itself.
	LaneEmpty = 0
	// NotOwner: a park or append was refused: the lease is another's.
	NotOwner = -1
)

// OutboxOp reports what became of one outbox entry.
type OutboxOp struct {
	Kind  string
	Entry OutboxEntry
	// Outcome of the attempt (OpDone; OpPark is a Retry).
	Outcome Outcome
	// Attempt is the JSON attempt record to log (nil: none).
	Attempt []byte
	Now     time.Time
	// Due is when a parked notification's retry is due; First when it was
	// first attempted.
	Due, First time.Time
	// Reason a notification went to dead letters.
	Reason string
	// Replay marks an op that may repeat a previous owner's (the entry was
	// in the outbox when the partition was taken): the record is read
	// first, and an append leaves a lane that holds the notification as it is.
	Replay bool
}

// idMs is the ms part of a stream id ("ms-seq").
func idMs(id string) string {
	ms, _, _ := strings.Cut(id, "-")
	return ms
}

// opJSON is an op as the script reads it (named fields, times in ms as
// strings so that Lua keeps them exact).
type opJSON struct {
	K string `json:"k"`
	N string `json:"n"`
	T string `json:"t"`
	C string `json:"c"`
	E string `json:"e"`
	O string `json:"o"`
	A string `json:"a"`
	W string `json:"w"`
	D string `json:"d"`
	F string `json:"f"`
	R string `json:"r"`
	M string `json:"m"`
	X bool   `json:"x,omitempty"`
	I bool   `json:"i,omitempty"` // OutboxEntry.Indexed
}

// FinishOutbox applies op, an op of partition p's owner holder, and
// returns its result (Applied, LaneEmpty or NotOwner). Concurrent calls
// for one partition share script calls: while one runs, the others queue
// and go together in the next.
func (s *Outboxes) FinishOutbox(ctx context.Context, p int, holder string, op OutboxOp) (int, error) {
	res, err := s.FinishOutboxOps(ctx, p, holder, []OutboxOp{op})
	if err != nil {
		return 0, err
	}
	return res[0], nil
}

// FinishOutboxOps applies ops in order, as FinishOutbox does one, and
// returns their results.
//
// The usual op, a delivered first attempt of an entry its commit listed
// (OutboxEntry.Indexed), needs no script: its record is new, so it is one
// SET (NX: a record made meanwhile by another owner, or by this very report
// sent before, is left to the script, which adds the attempt to it once).
// A record made here expires a retention after the notification's commit,
// as the task's delivery index does at the earliest when the commit wrote
// it (commit.lua; else the event's stream entry lists it), so that it is
// listed for as long as it lives.
func (s *Outboxes) FinishOutboxOps(ctx context.Context, p int, holder string, ops []OutboxOp) ([]int, error) {
	ms := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	reqs := make([]*outboxReq, len(ops))
	group := &opGroup{}
	for i, op := range ops {
		e := op.Entry
		// What only the script reads (the attempt, the times, the other
		// keys) is filled in when the op goes to it (below).
		r := &outboxReq{js: opJSON{K: op.Kind, N: e.NotificationID, T: e.TaskID, C: e.ConfigID, E: e.EventID,
			O: string(op.Outcome), R: op.Reason, M: idMs(e.ID), X: op.Replay, I: e.Indexed}, group: group}
		r.keys[0] = s.k.Record(p, e.NotificationID)
		if len(ops) == 1 && op.Kind == OpDone && op.Outcome == Delivered && e.Indexed && !e.Redelivery && !op.Replay {
			created, _ := strconv.ParseInt(r.js.M, 10, 64)
			rec := DeliveryRecord{TaskID: e.TaskID, ConfigID: e.ConfigID, EventID: e.EventID, Status: string(Delivered),
				Created: time.UnixMilli(created), Updated: op.Now}
			if len(op.Attempt) > 0 {
				rec.Attempts, rec.AttemptLog = 1, [][]byte{op.Attempt}
			}
			r.record = layout.EncodeRecord(rec)
		}
		reqs[i] = r
	}
	if len(reqs) == 1 && reqs[0].record != "" {
		made, err := s.finishPlain(ctx, reqs[0])
		if err != nil {
			return nil, err
		}
		if made {
			return []int{Applied}, nil
		}
		reqs[0].js.X = true // the script adds the attempt to the record found
	}
	for i, r := range reqs {
		op := ops[i]
		e := op.Entry
		r.js.A, r.js.W, r.js.D, r.js.F = string(op.Attempt), ms(op.Now), ms(op.Due), ms(op.First)
		tk := s.k.Task(e.TaskID)
		r.keys = [6]string{r.keys[0], e.Lane, tk.Push, s.k.LegacyAttempts(p, e.NotificationID), s.k.TaskDeliveries(e.TaskID), tk.Hash}
		r.done = make(chan struct{})
	}
	s.outboxBatch.do(batchKey{p, holder}, reqs, func(batch []*outboxReq) { s.runOutboxOps(ctx, p, holder, batch) })
	out := make([]int, len(reqs))
	for i, r := range reqs {
		if r.err != nil {
			return nil, r.err
		}
		out[i] = r.res
	}
	return out, nil
}

// finishPlain writes r's new record, unless the notification has one: it
// expires a retention after its commit, as the script has it. It needs no
// order with other ops (a lane's next op waits for this one), so it goes
// straight into a shared round trip.
func (s *Outboxes) finishPlain(ctx context.Context, r *outboxReq) (bool, error) {
	at, _ := strconv.ParseInt(r.js.M, 10, 64)
	var set *redis.Cmd
	s.batch.Do(func(pipe redis.Pipeliner) {
		set = pipe.Do(context.WithoutCancel(ctx), "set", r.keys[0], r.record, "nx", "pxat", at+s.keep.Milliseconds())
	})
	switch err := set.Err(); {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("outbox: finish outbox: %w", err)
	}
	return true, nil
}

// runOutboxOps runs one script call for batch, in a round trip shared with
// other partitions' calls and commands (evalBatched).
func (s *Outboxes) runOutboxOps(ctx context.Context, p int, holder string, batch []*outboxReq) {
	// The ops run for every caller in the batch: one caller giving up must
	// not cancel the others'.
	keys, args := s.outboxCall(p, holder, batch)
	s.outboxResults(batch, s.batch.Eval(context.WithoutCancel(ctx), outboxFinishScript.Script, keys, outboxFinishScript.Args(args)...))
}

// outboxFinishArgs are lua/outbox_finish.lua's arguments, each read there
// by its lua name (layout.Named), where each is described.
type outboxFinishArgs struct {
	Holder string   `lua:"holder"`
	Kept   int      `lua:"kept,number"`
	Keep   int64    `lua:"keep"`
	Ops    [][]byte `lua:"firstOp,rest"`
}

var outboxFinishScript = layout.ScriptOf[outboxFinishArgs](outboxFinishLua)

// outboxCall lays out the keys and arguments of a script call (see
// lua/outbox_finish.lua) for ops.
func (s *Outboxes) outboxCall(p int, holder string, ops []*outboxReq) ([]string, *outboxFinishArgs) {
	keys := make([]string, 0, 10+6*len(ops))
	keys = append(keys, s.k.OutboxOwner(p), s.k.Retries(p), s.k.Dead(p), s.k.Parked(p))
	keys = append(keys, s.k.StatusIndexes(p)...)
	keys = append(keys, s.k.Deliveries(p))
	args := &outboxFinishArgs{Holder: holder, Kept: s.attemptsKept, Keep: s.keep.Milliseconds(), Ops: make([][]byte, 0, len(ops))}
	for _, r := range ops { // the ops, one JSON object each, with six keys each
		keys = append(keys, r.keys[:]...)
		j, _ := json.Marshal(r.js) // (strings and bools only: cannot fail)
		args.Ops = append(args.Ops, j)
	}
	return keys, args
}

// outboxResults hands each op of a script call its result.
func (s *Outboxes) outboxResults(batch []*outboxReq, call *redis.Cmd) {
	res, err := call.Int64Slice()
	for i, r := range batch {
		switch {
		case err != nil:
			r.err = fmt.Errorf("outbox: finish outbox: %w", err)
			if r.group != nil {
				r.group.failed = true // (read by this same drain goroutine only)
			}
		case i < len(res):
			r.res = int(res[i])
		default:
			r.err = errors.New("outbox: finish outbox: short reply")
		}
	}
}

// batchKey groups ops: those of one partition, reported by one owner.
type batchKey struct {
	p      int
	holder string
}

// outboxBatcher groups the ops of concurrent callers per batchKey: a
// caller that finds no call running for its partition runs calls until
// none is queued; the others wait for theirs.
type outboxBatcher struct {
	mu      sync.Mutex
	pending map[batchKey][]*outboxReq
	running map[batchKey]bool
}

// opGroup ties the ops of one FinishOutboxOps call: once a script call
// carrying some of them fails, the later ones are not run (they are to be
// applied in order, or not at all: the caller starts over).
type opGroup struct{ failed bool }

type outboxReq struct {
	group *opGroup
	js    opJSON
	// record is the stored form of the op's new record when it needs no
	// script (FinishOutboxOps).
	record string
	keys   [6]string
	res    int
	err    error
	done   chan struct{}
}

// maxOps caps the ops of one script call.
const maxOps = 64

func (b *outboxBatcher) do(k batchKey, rs []*outboxReq, run func([]*outboxReq)) {
	b.mu.Lock()
	b.pending[k] = append(b.pending[k], rs...) // in order: one drain runs k's ops first come, first served
	if !b.running[k] {
		// A goroutine of its own runs the calls, so that no caller waits
		// for more than the calls its ops go in.
		b.running[k] = true
		go b.drain(k, run)
	}
	b.mu.Unlock()
	for _, r := range rs {
		<-r.done
	}
}

// drain runs k's queued ops until none is left.
func (b *outboxBatcher) drain(k batchKey, run func([]*outboxReq)) {
	b.mu.Lock()
	for {
		q := b.pending[k]
		n := min(len(q), maxOps)
		if n == 0 {
			delete(b.pending, k)
			b.running[k] = false
			b.mu.Unlock()
			return
		}
		batch := q[:n:n]
		b.pending[k] = q[n:]
		b.mu.Unlock()
		// The ops of a call whose earlier ops failed are not run.
		live := batch[:0:0]
		for _, x := range batch {
			if x.group != nil && x.group.failed {
				x.err = errors.New("outbox: finish outbox: an earlier op of the same call failed")
				continue
			}
			live = append(live, x)
		}
		if len(live) > 0 {
			run(live)
		}
		for _, x := range batch {
			close(x.done)
		}
		b.mu.Lock()
	}
}
