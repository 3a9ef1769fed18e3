// Package taskstore keeps tasks in Redis: the snapshot of each task's
// latest version, its event stream, its push configs and the index that
// lists a client's tasks (Store). Commit is the one write of task state: it
// checks the version, writes the snapshot, appends the events and enqueues
// their notifications for the outbox in one atomic step. It stores opaque
// bytes and knows nothing of A2A (callers bring snapshots and events
// encoded), and never delivers anything (the outbox and delivery do). It
// also counts what each owner stores, for storage budgets (usage.go says
// how, and what the count bounds).
//
// Beside the Store, over the same Redis and keys (Deps), each with its own
// constructor and the narrow side its callers use: URLIndex, the push
// configs listed by webhook URL (urlindex.go); Turns, the claims,
// deadlines and offer records of task turns (deadline.go, offers.go);
// Compaction, the compactor's side of the event streams (compact.go); and
// HostValidations, the webhook hosts that passed URL validation
// (validation.go). None of them writes a task's state.
package taskstore

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// Sentinel errors of the store.
var (
	// ErrNotFound: the task (or push config) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: another commit changed the task since it was loaded.
	ErrConflict = errors.New("version conflict")
	// ErrFull: the task already has the maximum number of push configs.
	ErrFull = errors.New("push config limit reached")
)

// OutboxInlineMax is the largest event, in bytes, that a commit copies
// into the outbox entry of its first push config (commit.lua, inline), so
// that the outbox's owner does not read it back from the event stream: a
// command and a round trip fewer per notification. Larger events are read
// from the stream. The copy is transient: it lives while the entry waits in
// the outbox (trimmed behind its owner's offset). The cap keeps the outbox
// cheap to scan (compaction and listings read up to 4,096 of its entries);
// a status update is 250-550 bytes.
const OutboxInlineMax = 1024

var (
	//go:embed lua/commit.lua
	commitLua string
	//go:embed lua/pushset.lua
	pushSetLua string
)

// Config configures a Store. Zero values take the documented defaults.
type Config struct {
	// EventsMaxLen is the approximate cap of each task's event stream (default 1000).
	EventsMaxLen int
	// DeliveryRetention is how long the delivery records a commit writes,
	// and the task's delivery index, are kept (default 7 days): the
	// outbox's Config.DeliveryRetention.
	DeliveryRetention time.Duration
	// TaskRetention is how long a finished task's keys live (the longest
	// Commit.ExpireAfter given; 0: none given). A commit names each of its
	// notifications in its event's stream entry, whence the task's
	// deliveries are listed, unless the stream may expire before their
	// records (TaskRetention or the commit's ExpireAfter shorter than
	// DeliveryRetention): then it lists them in the task's delivery index
	// (layout.Keys.TaskDeliveries), as the previous relay did.
	TaskRetention time.Duration
	// Outbox has commits append new notifications to the partitions'
	// outboxes instead of the lanes: the outbox's Config.Outbox.
	Outbox bool
	// UsageWindow is how long the bytes a commit stores stay counted in
	// its owner's usage after the task's last commit (default 7 days): at
	// least as long as a finished task and a delivery record live
	// (usage.go).
	UsageWindow time.Duration
	// OnceKeys is how many idempotency keys (CommitOnce) a task's record
	// holds at most: a new key forgets the oldest (default 128).
	OnceKeys int
	// OnceWindow is how long a task's idempotency record lives after its
	// latest key (default 24h): every key is remembered at least that long
	// after its commit, unless OnceKeys newer keys came, or the task expired.
	OnceWindow time.Duration
}

// Store reads and writes tasks, their event streams, push configs and the
// task index. Its commit is the one write of task state, and enqueues the
// commit's notifications in the same step (the outbox reads them).
type Store struct {
	rdb     redis.UniversalClient
	k       layout.Keys
	batch   *groupcommit.Batcher
	maxLen  string
	keep    time.Duration
	indexed bool // the task retention is shorter than keep (Config.TaskRetention)
	outbox  bool
	onceMax int
	onceTTL time.Duration
	usage   usageClock
	// tally sums what commits add to the usage counters until FlushUsage
	// sends it (usage_tally.go).
	tally usageTally
}

// New returns a Store over d.RDB, with its keys named by d.Keys; its
// commits share round trips through d.Batch (required). It returns an
// error naming what is missing or out of range.
func New(d Deps, cfg Config) (*Store, error) {
	if err := d.check("store", true); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"EventsMaxLen", cfg.EventsMaxLen < 0},
		{"DeliveryRetention", cfg.DeliveryRetention < 0},
		{"TaskRetention", cfg.TaskRetention < 0},
		{"OnceKeys", cfg.OnceKeys < 0},
		{"OnceWindow", cfg.OnceWindow < 0},
		{"UsageWindow", cfg.UsageWindow < 0},
	} {
		if c.bad {
			return nil, fmt.Errorf("taskstore: store: %s must not be negative", c.name)
		}
	}
	return &Store{
		rdb:     d.RDB,
		k:       d.Keys,
		batch:   d.Batch,
		maxLen:  strconv.Itoa(cmp.Or(cfg.EventsMaxLen, 1000)),
		keep:    cmp.Or(cfg.DeliveryRetention, 7*24*time.Hour),
		indexed: cfg.TaskRetention > 0 && cfg.TaskRetention < cmp.Or(cfg.DeliveryRetention, 7*24*time.Hour),
		outbox:  cfg.Outbox,
		onceMax: cmp.Or(cfg.OnceKeys, 128),
		onceTTL: cmp.Or(cfg.OnceWindow, 24*time.Hour),
		usage:   newUsageClock(cmp.Or(cfg.UsageWindow, 7*24*time.Hour)),
	}, nil
}

// Partitions returns the number of partitions the store uses.
func (s *Store) Partitions() int { return s.k.Partitions() }

// CheckPartitions records the partition count on first use and refuses to run
// with a different one later, which would orphan every stored task.
func (s *Store) CheckPartitions(ctx context.Context) error {
	want := strconv.Itoa(s.k.Partitions())
	if err := s.rdb.HSetNX(ctx, s.k.Meta(), "partitions", want).Err(); err != nil {
		return fmt.Errorf("taskstore: record partitions: %w", err)
	}
	got, err := s.rdb.HGet(ctx, s.k.Meta(), "partitions").Result()
	if err != nil {
		return fmt.Errorf("taskstore: read partitions: %w", err)
	}
	if got != want {
		return fmt.Errorf("taskstore: this Redis holds data written with %s partitions; relay is configured with %s", got, want)
	}
	return nil
}

// Record is a stored task: its snapshot, version and extra fields.
type Record struct {
	Snapshot []byte
	Version  int64
	// Reserve is the bytes counted ahead for the task that its commits
	// have not drawn yet (Commit.Reserve).
	Reserve int64
	Fields  map[string]string
	// Deadline is the task's turn deadline record ("" for none): see
	// ParseTurn.
	Deadline string
}

// Load returns the stored task, or ErrNotFound.
func (s *Store) Load(ctx context.Context, taskID string) (Record, error) {
	var cmd *redis.MapStringStringCmd
	s.batch.Do(func(p redis.Pipeliner) { cmd = p.HGetAll(ctx, s.k.Task(taskID).Hash) }) // (concurrent loads, a claim's say, share a round trip)
	m, err := cmd.Result()
	if err != nil {
		return Record{}, fmt.Errorf("taskstore: load task: %w", err)
	}
	return recordOf(m)
}

func recordOf(m map[string]string) (Record, error) {
	snap, ok := m["snap"]
	if !ok {
		return Record{}, ErrNotFound
	}
	ver, err := strconv.ParseInt(m["ver"], 10, 64)
	if err != nil {
		return Record{}, fmt.Errorf("taskstore: bad version %q: %w", m["ver"], err)
	}
	delete(m, "snap")
	delete(m, "ver")
	delete(m, "cid")
	delete(m, "cids")
	delete(m, "ck")
	delete(m, "dx")
	delete(m, "ub")
	delete(m, "us")
	delete(m, "pc")
	delete(m, "pf")
	dl := m["dl"]
	delete(m, "dl")
	rs, _ := strconv.ParseInt(m[fieldReserve], 10, 64) // (none: 0)
	delete(m, fieldReserve)
	return Record{Snapshot: []byte(snap), Version: ver, Reserve: rs, Fields: m, Deadline: dl}, nil
}

// Commit is one atomic change of a task.
type Commit struct {
	TaskID string
	// Version is the version the change was computed from; 0 creates the task.
	Version  int64
	Snapshot []byte
	// PrevSnapshotLen is the length of the snapshot of Version (0 for a new
	// task): the owner's usage counts the snapshot's growth, not the whole.
	PrevSnapshotLen int
	// Events are appended to the task's event stream, in order.
	Events [][]byte
	// Deliver marks, per event, those delivered to the task's push configs.
	Deliver []bool
	// Class gives, per event delivered, its class for the configs' event
	// filters (Accept): a byte in 'a'..'z'; 0 (or none given) is class
	// ClassAny, which only configs without a filter take.
	Class []byte
	// Fields are written to the task hash beside the snapshot.
	Fields map[string]string
	// PushConfigs are stored before the events are appended, so that they
	// see every event of this commit.
	PushConfigs map[string][]byte
	// PushAccept gives, per config of PushConfigs that filters events, the
	// event classes it takes (Accept); the others take every event.
	PushAccept map[string]string
	// UpdatedAt is the commit's time; it orders the task in listings,
	// unless KeepPlace.
	UpdatedAt time.Time
	// KeepPlace leaves the task where it is in listings (the task index
	// keeps its score): a commit that changes no status (an artifact, or
	// metadata), since listings are ordered by the time of each task's
	// latest status (A2A's ListTasks sorts by status timestamp). Ignored
	// when the commit creates the task.
	KeepPlace bool
	// Owner is the principal the task belongs to ("" without client
	// authentication): it picks the index the task is listed in.
	Owner string
	// ExpireAfter, when positive, expires all of the task's keys (a finished task).
	ExpireAfter time.Duration
	// Offer, when not nil, is the turn of the task this commit makes
	// claimable in a work queue: it is recorded with the commit, in the
	// same atomic step (offers.go). Its TaskID is c's, and its Turn the
	// version the commit makes (Version + 1), whatever the caller set.
	Offer *Offer
	// Deadline is what the commit does to the task's turn deadline
	// (deadline.go): nothing, by default.
	Deadline Deadline
	// Reserve, PrevReserve and Release count bytes in the owner's usage
	// ahead of their writing (usage.go, Reservations).
	Reserve, PrevReserve int64
	Release              bool
	// TraceParent is the W3C traceparent of the task turn the commit
	// belongs to ("": none, as when tracing is off): each event keeps it
	// (its stream entry's 't', lua/commit.lua), so that the deliveries of
	// the event join the turn's trace (the outbox's Head.TraceParent).
	TraceParent string
}

// Commit applies c atomically and returns the stream ids of its events. It
// returns ErrConflict when the task's version is no longer c.Version.
func (s *Store) Commit(ctx context.Context, c Commit) ([]string, error) {
	ids, _, err := s.commit1(ctx, c, nil)
	return ids, err
}

// Once makes a commit apply at most once per key: a request that comes
// again (its answer was lost) is not applied again, and gets back what the
// first one recorded. The record is written with the commit, atomically;
// the task keeps its last Config.OnceKeys keys for Config.OnceWindow after
// the latest (lua/commit.lua, KEYS[11]).
type Once struct {
	// Key is the caller's idempotency key (not empty).
	Key string
	// Hash identifies the request (OnceHashLen characters), so that a key
	// sent again with another request can be told from a replay.
	Hash string
	// Answer is what the request answers (at most OnceAnswerMax bytes),
	// recorded for its replays.
	Answer []byte
}

// Bounds of Once.
const (
	OnceHashLen   = 64 // a hex SHA-256
	OnceAnswerMax = 1024
)

// Applied is what the first commit under an idempotency key recorded.
type Applied struct {
	Hash   string
	Answer []byte
}

// CommitOnce is Commit under an idempotency key. When a commit of the task
// recorded once.Key already, whatever its request and whatever the task's
// version now, nothing is written and first is what it recorded (the
// caller compares first.Hash with its own); otherwise c is applied, once
// recorded with it, and first is nil.
func (s *Store) CommitOnce(ctx context.Context, c Commit, once Once) (ids []string, first *Applied, err error) {
	switch {
	case once.Key == "":
		return nil, nil, errors.New("taskstore: commit once: empty key")
	case len(once.Hash) != OnceHashLen:
		return nil, nil, fmt.Errorf("taskstore: commit once: hash of %d characters, want %d", len(once.Hash), OnceHashLen)
	case len(once.Answer) > OnceAnswerMax:
		return nil, nil, fmt.Errorf("taskstore: commit once: answer of %d bytes, over %d", len(once.Answer), OnceAnswerMax)
	}
	return s.commit1(ctx, c, &once)
}

func (s *Store) commit1(ctx context.Context, c Commit, once *Once) ([]string, *Applied, error) {
	args, err := s.commitArgs(c, uuid.NewString(), once)
	if err != nil {
		return nil, nil, err
	}
	return s.commitRun(ctx, c, &args)
}

// commitRun runs the commit script with args, made for c, and counts in
// the usage tally what it adds to c's owner's usage.
func (s *Store) commitRun(ctx context.Context, c Commit, args *commitArgs) ([]string, *Applied, error) {
	res, err := s.batch.Eval(ctx, commitScript.Script, s.commitKeys(c), commitScript.Args(args)...).StringSlice()
	if err != nil {
		if strings.HasPrefix(err.Error(), "CONFLICT") {
			return nil, nil, ErrConflict
		}
		if strings.HasPrefix(err.Error(), "DEADLINE") {
			return nil, nil, ErrTurnMoved
		}
		return nil, nil, fmt.Errorf("taskstore: commit: %w", err)
	}
	if len(res) == 2 && res[0] == "once" { // (a stream id is never "once")
		a := appliedOf(res[1])
		return nil, &a, nil
	}
	if len(res) == 0 {
		return nil, nil, errors.New("taskstore: commit: empty reply")
	}
	last := len(res) - 1 // the ids, then what the owner's usage gains
	s.tallyAdd(c.TaskID, c.Owner, c.UpdatedAt, res[last])
	return res[:last], nil, nil
}

// appliedOf splits a stored idempotency record: the hash, then the answer.
func appliedOf(v string) Applied {
	n := min(len(v), OnceHashLen)
	return Applied{Hash: v[:n], Answer: []byte(v[n:])}
}

// Applied returns what the commit of taskID under idempotency key recorded,
// or ErrNotFound when the task's record does not hold the key (never
// committed, or forgotten: see Config.OnceKeys and OnceWindow).
func (s *Store) Applied(ctx context.Context, taskID, key string) (Applied, error) {
	v, err := s.rdb.HGet(ctx, s.k.Task(taskID).Idempotency, "k"+key).Result()
	if errors.Is(err, redis.Nil) {
		return Applied{}, ErrNotFound
	}
	if err != nil {
		return Applied{}, fmt.Errorf("taskstore: idempotency record: %w", err)
	}
	return appliedOf(v), nil
}

// commitKeys are the keys lua/commit.lua is given, in the order of its
// KEYS: every key it touches but the lanes and records of the
// notifications it makes (named by the configs it reads).
func (s *Store) commitKeys(c Commit) []string {
	tk := s.k.Task(c.TaskID)
	p := s.k.Partition(c.TaskID)
	keys := make([]string, 0, 13)
	keys = append(keys, tk.Hash, tk.Events, s.k.Index(p, c.Owner), tk.Push, tk.Base, s.k.Compact(p),
		s.k.TaskDeliveries(c.TaskID), s.k.Deliveries(p), s.k.StatusIndex(p, "pending"),
		tk.Idempotency, s.k.Offers(p), s.k.Deadlines(p))
	if s.outbox {
		keys = append(keys, s.k.Outbox(p))
	}
	return keys
}

// commitArgs returns the commit script's arguments for c; commitID makes a
// commit that is sent twice apply once; once, when not nil, records the
// commit's idempotency key.
func (s *Store) commitArgs(c Commit, commitID string, once *Once) (commitArgs, error) {
	var configs map[string]string
	if len(c.PushConfigs) > 0 {
		configs = make(map[string]string, len(c.PushConfigs))
		for id, v := range c.PushConfigs {
			configs[id] = string(v)
		}
	}
	flags, err := deliverFlags(c)
	if err != nil {
		return commitArgs{}, err
	}
	accept, err := acceptArg(c)
	if err != nil {
		return commitArgs{}, err
	}
	p := s.k.Partition(c.TaskID)
	if once == nil {
		once = &Once{}
	}
	offer := ""
	if c.Offer != nil {
		o := *c.Offer
		o.TaskID, o.Turn = c.TaskID, c.Version+1
		offer = o.member()
	}
	return commitArgs{
		Expected:   c.Version,
		Snapshot:   c.Snapshot,
		Now:        c.UpdatedAt.UnixMilli(),
		Task:       c.TaskID,
		MaxLen:     s.maxLen,
		TTL:        c.ExpireAfter.Milliseconds(),
		Extra:      stringMapJSON(reserveFields(c)),
		SetConfigs: stringMapJSON(configs),
		Flags:      flags,
		Lanes:      s.k.LanePrefix(c.TaskID),
		Records:    s.k.RecordPrefix(p),
		Part:       p,
		Keep:       s.keep.Milliseconds(),
		Indexed:    s.indexed || (c.ExpireAfter > 0 && c.ExpireAfter < s.keep),
		CommitID:   commitID,
		Inline:     OutboxInlineMax,
		Usage:      commitUsage(c),
		Bucket:     s.usage.bucket(c.UpdatedAt),
		NoteBytes:  NotificationBytes,
		Once:       once.Key,
		OnceHash:   once.Hash,
		OnceAnswer: once.Answer,
		OnceMax:    s.onceMax,
		OnceTTL:    s.onceTTL.Milliseconds(),
		Offer:      offer,
		Deadline:   c.Deadline.arg(),
		SetAccept:  accept,
		Trace:      c.TraceParent,
		KeepPlace:  c.KeepPlace && c.Version > 0,
		Events:     c.Events,
	}, nil
}

// commitArgs are lua/commit.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type commitArgs struct {
	Expected   int64    `lua:"expected"`
	Snapshot   []byte   `lua:"snapshot"`
	Now        int64    `lua:"now"`
	Task       string   `lua:"task"`
	MaxLen     string   `lua:"maxLen,number"`
	TTL        int64    `lua:"ttl,number"`
	Extra      string   `lua:"extra"`
	SetConfigs string   `lua:"setConfigs"`
	Flags      string   `lua:"flags"`
	Lanes      string   `lua:"lanes"`
	Records    string   `lua:"records"`
	Part       int      `lua:"part"`
	Keep       int64    `lua:"keep,number"`
	Indexed    bool     `lua:"indexed"`
	CommitID   string   `lua:"commitID"`
	Inline     int      `lua:"inline,number"`
	Usage      int64    `lua:"usage,number"`
	Bucket     int64    `lua:"bucket"`
	NoteBytes  int      `lua:"noteBytes,number"`
	Once       string   `lua:"once"`
	OnceHash   string   `lua:"onceHash"`
	OnceAnswer []byte   `lua:"onceAnswer"`
	OnceMax    int      `lua:"onceMax,number"`
	OnceTTL    int64    `lua:"onceTTL,number"`
	Offer      string   `lua:"offer"`
	Deadline   string   `lua:"deadline"`
	SetAccept  string   `lua:"setAccept"`
	Trace      string   `lua:"trace"`
	KeepPlace  bool     `lua:"keepPlace"`
	Events     [][]byte `lua:"firstEvent,rest"`
}

// commitScript is lua/commit.lua, after usage.lua.
var commitScript = layout.ScriptOf[commitArgs](usageLua + commitLua)

// ReplacePushConfig rewrites a push config that exists (re-encrypted
// secrets); a config deleted meanwhile stays deleted.
func (s *Store) ReplacePushConfig(ctx context.Context, taskID, id string, config []byte) error {
	tk := s.k.Task(taskID)
	keys := []string{tk.Hash, tk.Push} // (counts nothing)
	if err := pushSetScript.Run(ctx, s.rdb, keys, pushSetScript.Args(s.pushSetArgs(id, config, "", 1<<30, true, time.Time{}))...).Err(); err != nil && !strings.HasPrefix(err.Error(), "NOTFOUND") {
		return fmt.Errorf("taskstore: replace push config: %w", err)
	}
	return nil
}

// SetPushConfig stores config id of a task of owner, replacing one with the
// same id, and counts its bytes in owner's usage; accept is the event
// classes the config takes ("": every event; filter.go). It returns
// ErrNotFound when the task does not exist and ErrFull when it already has
// max configs.
func (s *Store) SetPushConfig(ctx context.Context, owner, taskID, id string, config []byte, accept string, max int) error {
	if accept != "" {
		if err := checkAccept(id, accept); err != nil {
			return err
		}
	}
	tk := s.k.Task(taskID)
	now := time.Now()
	keys := []string{tk.Hash, tk.Push}
	add, err := pushSetScript.Run(ctx, s.rdb, keys, pushSetScript.Args(s.pushSetArgs(id, config, accept, max, false, now))...).Text()
	switch {
	case err == nil:
		s.tallyAdd(taskID, owner, now, add)
		return nil
	case strings.HasPrefix(err.Error(), "NOTFOUND"):
		return ErrNotFound
	case strings.HasPrefix(err.Error(), "FULL"):
		return ErrFull
	}
	return fmt.Errorf("taskstore: set push config: %w", err)
}

// pushSetArgs returns lua/pushset.lua's arguments; a rewrite (onlyReplace)
// counts no usage.
func (s *Store) pushSetArgs(id string, config []byte, accept string, max int, onlyReplace bool, now time.Time) *pushSetArgs {
	usage := len(id) + len(config)
	if onlyReplace {
		usage = 0
	}
	return &pushSetArgs{
		ID:          id,
		Config:      config,
		Max:         max,
		OnlyReplace: onlyReplace,
		Usage:       usage,
		Bucket:      s.usage.bucket(now),
		Accept:      accept,
	}
}

// pushSetArgs are lua/pushset.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type pushSetArgs struct {
	ID          string `lua:"id"`
	Config      []byte `lua:"config"`
	Max         int    `lua:"max,number"`
	OnlyReplace bool   `lua:"onlyReplace"`
	Usage       int    `lua:"usage,number"`
	Bucket      int64  `lua:"bucket"`
	Accept      string `lua:"accept"`
}

// pushSetScript is lua/pushset.lua, after usage.lua.
var pushSetScript = layout.BareScriptOf[pushSetArgs](usageLua + pushSetLua)

// PushConfig returns one push config of a task, or ErrNotFound.
func (s *Store) PushConfig(ctx context.Context, taskID, id string) ([]byte, error) {
	b, err := s.rdb.HGet(ctx, s.k.Task(taskID).Push, id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("taskstore: get push config: %w", err)
	}
	return b, nil
}

// PushConfigs returns every push config of a task by id.
func (s *Store) PushConfigs(ctx context.Context, taskID string) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, s.k.Task(taskID).Push).Result()
	if err != nil {
		return nil, fmt.Errorf("taskstore: list push configs: %w", err)
	}
	return m, nil
}

// DeletePushConfig removes one push config; deleting a missing one is not
// an error. The task's list of config ids (commit.lua's pc) is dropped in
// the same transaction: the next commit reads the configs again.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string) error {
	tk := s.k.Task(taskID)
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HDel(ctx, tk.Push, id)
		pipe.HDel(ctx, tk.Hash, "pc")
		return nil
	})
	if err != nil {
		return fmt.Errorf("taskstore: delete push config: %w", err)
	}
	return nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// Exists reports whether a task exists.
func (s *Store) Exists(ctx context.Context, taskID string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.k.Task(taskID).Hash).Result()
	if err != nil {
		return false, fmt.Errorf("taskstore: task exists: %w", err)
	}
	return n == 1, nil
}

// EventsKey names a task's event stream (for readers such as SSE and tests).
func (s *Store) EventsKey(taskID string) string { return s.k.Task(taskID).Events }

// PartitionOf returns the partition of a task id.
func (s *Store) PartitionOf(taskID string) int { return s.k.Partition(taskID) }

// TaskKeys names every key of a task (for tests and operators).
func (s *Store) TaskKeys(taskID string) []string {
	return s.k.Task(taskID).Own()
}
