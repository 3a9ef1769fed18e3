package outbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/begin.lua
	beginLua string
	//go:embed lua/finish.lua
	finishLua string
	//go:embed lua/mover.lua
	moverLua string
	//go:embed lua/redeliver.lua
	redeliverLua string
)

// group is the consumer group of every delivery stream.
const group = layout.Group

// Token is the right to deliver the head of one lane: one (task, config)
// pair's queue of notifications. A lane with work has exactly one token, in
// its partition's delivery stream or in the retry set, which keeps a lane's
// notifications in order and lets other lanes run past a failing one.
type Token struct {
	Partition int
	// ID is the token's entry id in the delivery stream.
	ID       string
	TaskID   string
	ConfigID string
	// Attempt is the number of the attempt this token is for (1 = first).
	Attempt int
	// First is when the head was first attempted (zero before that).
	First time.Time
	// Reclaimed marks a token taken over from a worker that went quiet.
	Reclaimed bool
	// Read is when the consumer started the read that returned the token,
	// on the consumer's clock (Consumer.ReadTokens sets it; Lanes.ReadTokens
	// does not).
	Read time.Time
	// Fresh marks a token its consumer read from the stream itself a
	// short while ago: Begin then skips the re-claim when Redis shows the
	// token pending, the consumer's, and never delivered to another.
	// Consumer.Begin decides it.
	Fresh bool
	// NotificationID, on a retry token, names the notification Attempt and
	// First are for: when the lane's head is another one (the token went
	// on with a lane run since), the head's attempt is its first.
	NotificationID string
}

// Head is the notification at the head of a lane.
type Head struct {
	// Entry is the lane entry ("eventId notificationId"); empty when the lane is empty.
	Entry          string
	EventID        string
	NotificationID string
	// Config is the stored push config; nil when it was deleted.
	Config []byte
	// Event is the committed event, read from the task's event stream; nil
	// when the event is no longer stored.
	Event []byte
	// Version is the task version the event made (0 when unknown): the task
	// after the event is TaskAt(Version).
	Version int64
	// TraceParent is the W3C traceparent of the task turn whose commit
	// made the event ("": none, as when tracing was off): its delivery
	// attempts join that trace.
	TraceParent string
	// Snapshot is the task after the event, carried only by a head that a
	// previous relay wrote (which copied event and task into the lane).
	Snapshot []byte
	// Waited is how long the token waited in the stream before Begin, on
	// Redis's clock (zero for the later heads of a lane run).
	Waited time.Duration
	// Lease is the value of the lane lease its holder set: only the holder
	// renews or releases it.
	Lease string
	// held is when the lane lease the head is worked under was taken or
	// last renewed, and claimed when its token was last claimed, on the
	// Consumer's clock (zero: no lane lease); the Consumer sets and reads
	// them.
	held, claimed time.Time
}

// Lanes are the partitions' delivery streams of tokens, the lanes they
// hand out and the retry sets: a token is read (or reclaimed), its head
// begun under a lane lease and finished, retries come due, and the streams
// are trimmed and their consumers pruned. The Consumer drives them and
// decides the lease timing. Its API: EnsureGroups, ReadTokens, Reclaim,
// Begin, FinishToken, MoveDue, TrimAcked, PruneConsumers.
type Lanes struct {
	conn
	batch        *groupcommit.Batcher
	leases       atomic.Uint64 // numbers the lane leases this process takes
	keep         time.Duration
	attemptsKept int
	outbox       bool
}

// NewLanes returns the lanes over d.RDB, named by d.Keys, whose begins and
// finishes share round trips through d.Batch (required); of cfg it reads
// DeliveryRetention and AttemptsKept (of the records a finish writes) and
// Outbox (a finished lane parked for an outbox's owner is unparked). It
// returns an error naming what is missing or out of range.
func NewLanes(d Deps, cfg Config) (*Lanes, error) {
	if err := d.check("lanes", true); err != nil {
		return nil, err
	}
	if err := cfg.check("lanes"); err != nil {
		return nil, err
	}
	return &Lanes{conn: conn{rdb: d.RDB, k: d.Keys}, batch: d.Batch, keep: cfg.retention(),
		attemptsKept: cfg.attemptsKept(), outbox: cfg.Outbox}, nil
}

// EnsureGroups creates the consumer group of every partition's delivery stream.
func (s *Lanes) EnsureGroups(ctx context.Context) error {
	for p := 0; p < s.k.Partitions(); p++ {
		err := s.rdb.XGroupCreateMkStream(ctx, s.k.Deliveries(p), layout.Group, "0").Err()
		if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("outbox: create consumer group: %w", err)
		}
	}
	return nil
}

// ReadTokens reads up to count new tokens of partition p for consumer,
// blocking up to block when there are none.
func (s *Lanes) ReadTokens(ctx context.Context, p int, consumer string, count int, block time.Duration) ([]Token, error) {
	res, err := s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: layout.Group, Consumer: consumer,
		Streams: []string{s.k.Deliveries(p), ">"}, Count: int64(count), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: read tokens: %w", err)
	}
	var out []Token
	for _, st := range res {
		out = append(out, tokensOf(p, st.Messages)...)
	}
	return out, nil
}

// Reclaim takes over tokens of partition p that another consumer has held
// for longer than minIdle (its worker died between read and ack).
func (s *Lanes) Reclaim(ctx context.Context, p int, consumer string, minIdle time.Duration, count int) ([]Token, error) {
	// XAUTOCLAIM looks at up to 10*count pending entries per call: follow
	// its cursor through the whole pending list (bounded), so that tokens
	// behind many live ones (slow webhooks) are found too.
	var msgs []redis.XMessage
	start := "0-0"
	for range 100 {
		got, next, err := s.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: s.k.Deliveries(p), Group: layout.Group,
			Consumer: consumer, MinIdle: minIdle, Start: start, Count: int64(count - len(msgs))}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("outbox: reclaim: %w", err)
		}
		msgs = append(msgs, got...)
		if len(msgs) >= count || next == "0-0" || next == "" {
			break
		}
		start = next
	}
	ts := tokensOf(p, msgs)
	for i := range ts {
		ts[i].Reclaimed = true
	}
	return ts, nil
}

func tokensOf(p int, msgs []redis.XMessage) []Token {
	out := make([]Token, 0, len(msgs))
	for _, m := range msgs {
		t := Token{Partition: p, ID: m.ID}
		t.TaskID, _ = m.Values["t"].(string)
		t.ConfigID, _ = m.Values["c"].(string)
		a, _ := m.Values["a"].(string)
		t.Attempt, _ = strconv.Atoi(a)
		t.NotificationID, _ = m.Values["n"].(string)
		f, _ := m.Values["f"].(string)
		if ms, _ := strconv.ParseInt(f, 10, 64); ms > 0 {
			t.First = time.UnixMilli(ms)
		}
		if t.Attempt < 1 {
			t.Attempt = 1
		}
		out = append(out, t)
	}
	return out
}

// Begin status values.
const (
	// Go: the token is this worker's to deliver.
	Go = 1
	// Stale: the token was finished already (a reclaimed duplicate).
	Stale = 0
	// Busy: another worker holds the lane's lease.
	Busy = 2
)

// Begin starts work on a token: it re-claims it (resetting its idle time,
// and finding out whether it is still pending), takes the lane's lease for
// lease, and returns the lane's head with its config, in one round trip.
// Only when status is Go may the caller deliver and then FinishToken.
func (s *Lanes) Begin(ctx context.Context, t Token, consumer string, lease time.Duration) (Head, int, error) {
	value := consumer + "#" + strconv.FormatUint(s.leases.Add(1), 36)
	keys := s.beginKeys(t)
	res, err := s.batch.Eval(ctx, beginScript.Script, keys, beginScript.Args(&beginArgs{
		TokenID:    t.ID,
		Consumer:   consumer,
		LeaseMs:    lease.Milliseconds(),
		Config:     t.ConfigID,
		LeaseValue: value,
		Fresh:      t.Fresh && !t.Reclaimed,
	})...).Slice()
	if err != nil {
		return Head{}, Stale, fmt.Errorf("outbox: begin delivery: %w", err)
	}
	status, _ := res[0].(int64)
	if status != Go {
		return Head{}, int(status), nil
	}
	h := headOf(res)
	h.Lease = value
	if len(res) > 5 {
		h.Waited = waited(t.ID, res[5])
	}
	return h, Go, nil
}

// beginArgs are lua/begin.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type beginArgs struct {
	TokenID    string `lua:"tokenID"`
	Consumer   string `lua:"consumer"`
	LeaseMs    int64  `lua:"leaseMs"`
	Config     string `lua:"config"`
	LeaseValue string `lua:"leaseValue"`
	Fresh      bool   `lua:"fresh"`
}

var beginScript = layout.ScriptOf[beginArgs](beginLua)

// beginKeys are the keys begin.lua touches for token t.
func (s *Lanes) beginKeys(t Token) []string {
	tk := s.k.Task(t.TaskID)
	return []string{s.k.Deliveries(t.Partition), s.k.Lease(t.TaskID, t.ConfigID), s.k.Lane(t.TaskID, t.ConfigID), tk.Push, tk.Events}
}

// headOf reads a script's {status, lane entry or false, config or false,
// event or false, version or false, [time or false, traceparent or false]} reply. A lane entry is "eventId
// notificationId"; one a previous relay wrote goes on with "\n<event>\n<snapshot>".
func headOf(res []any) Head {
	var h Head
	str := func(i int) (string, bool) {
		if len(res) <= i {
			return "", false
		}
		v, ok := res[i].(string)
		return v, ok
	}
	if c, ok := str(2); ok {
		h.Config = []byte(c)
	}
	raw, ok := str(1)
	if !ok {
		return h
	}
	ids, rest, legacy := strings.Cut(raw, "\n")
	h.Entry = ids
	h.EventID, h.NotificationID, _ = strings.Cut(ids, " ")
	if legacy {
		ev, snap, _ := strings.Cut(rest, "\n")
		h.Event, h.Snapshot = []byte(ev), []byte(snap)
		return h
	}
	if ev, ok := str(3); ok {
		h.Event = []byte(ev)
	}
	if v, ok := str(4); ok {
		h.Version, _ = strconv.ParseInt(v, 10, 64)
	}
	h.TraceParent, _ = str(6)
	return h
}

// waited is the time between a stream entry id's timestamp and a Redis
// TIME reply.
func waited(id string, t any) time.Duration {
	parts, _ := t.([]any)
	if len(parts) != 2 {
		return 0
	}
	s0, _ := parts[0].(string) // TIME answers two bulk strings
	s1, _ := parts[1].(string)
	sec, _ := strconv.ParseInt(s0, 10, 64)
	usec, _ := strconv.ParseInt(s1, 10, 64)
	ms, _, _ := strings.Cut(id, "-")
	idMs, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || sec == 0 {
		return 0
	}
	return time.Duration(sec*1e9+usec*1e3) - time.Duration(idMs)*time.Millisecond
}

// Outcome is what became of one delivery attempt.
type Outcome string

// Outcomes of an attempt.
const (
	Delivered Outcome = "delivered"
	Retry     Outcome = "retry"
	Dead      Outcome = "dead"
	Gone      Outcome = "gone"
	Drop      Outcome = "drop"
	Skip      Outcome = "skip"
	// Wait: no attempt was made; the webhook's limits hold the head until
	// Finish.Due. The lane waits as for a retry, but nothing is logged or
	// counted, and the next try is the same attempt.
	Wait Outcome = "wait"
)

// Finish is the result of working on a token.
type Finish struct {
	Outcome Outcome
	// Attempt is the JSON attempt record to log (nil: none, e.g. for drop).
	Attempt []byte
	// Due is when a retry is due.
	Due time.Time
	// First is when the head was first attempted.
	First  time.Time
	Reason string
	Now    time.Time
	// Run asks to go on with the lane's next head under the same token
	// (see Finished.Run), renewing the lease for Lease, for Consumer.
	// Consumer.FinishToken sets Lease and Consumer.
	Run      bool
	Lease    time.Duration
	Consumer string
	// Claim, on a run step, restarts the token's idle time (an XCLAIM), so
	// that it is not reclaimed while the run goes on. Consumer.FinishToken
	// asks for it once the token's last claim (its read, Begin or an
	// earlier claim) is a good part of the lane lease ago.
	Claim bool
}

// Finished is what FinishToken did.
type Finished struct {
	// Applied is false when the token had already been finished (a
	// reclaimed duplicate): nothing changed.
	Applied bool
	// Run is true when the caller holds the token and the lane's lease
	// still, renewed, and is to deliver Next, the lane's next head, and
	// then finish the same token again. It is only ever true when
	// Finish.Run asked for it, the outcome moved the lane on (delivered or
	// skip), and the lane has another head. Run without Applied: this very
	// finish had been applied already (sent twice after a lost reply).
	Run  bool
	Next Head
}

// FinishToken records an attempt and moves the lane on, atomically; with
// f.Run it may hand the caller the lane's next head (a lane run).
func (s *Lanes) FinishToken(ctx context.Context, t Token, h Head, f Finish) (Finished, error) {
	tk := s.k.Task(t.TaskID)
	keys := append([]string{s.k.Deliveries(t.Partition), s.k.Lane(t.TaskID, t.ConfigID), s.k.Retries(t.Partition), s.k.Dead(t.Partition),
		s.k.Record(t.Partition, h.NotificationID), s.k.LegacyAttempts(t.Partition, h.NotificationID), tk.Push, s.k.Lease(t.TaskID, t.ConfigID),
		tk.Events, s.k.Parked(t.Partition)}, s.k.StatusIndexes(t.Partition)...)
	keys = append(keys, tk.Hash)
	next, first := t.Attempt+1, f.First.UnixMilli()
	if f.Outcome == Wait {
		next, first = t.Attempt, t.First.UnixMilli()
		if t.First.IsZero() {
			first = 0
		}
	}
	res, err := s.batch.Eval(ctx, finishScript.Script, keys, finishScript.Args(&finishArgs{
		TokenID:     t.ID,
		Attempted:   h.Entry,
		Outcome:     string(f.Outcome),
		Task:        t.TaskID,
		Config:      t.ConfigID,
		NextAttempt: next,
		FirstMs:     first,
		Now:         f.Now.UnixMilli(),
		RetryDue:    f.Due.UnixMilli(),
		AttemptRec:  f.Attempt,
		Kept:        s.attemptsKept,
		Records:     s.k.RecordPrefix(t.Partition),
		NID:         h.NotificationID,
		Reason:      f.Reason,
		Keep:        s.keep.Milliseconds(),
		GoOn:        f.Run,
		LeaseMs:     f.Lease.Milliseconds(),
		Consumer:    f.Consumer,
		LeaseValue:  h.Lease,
		RestartIdle: f.Claim,
		Unpark:      s.outbox,
		Legacy:      s.k.LegacyAttemptsPrefix(t.Partition),
	})...).Slice()
	if err != nil {
		return Finished{}, fmt.Errorf("outbox: finish delivery: %w", err)
	}
	status, _ := res[0].(int64)
	done := Finished{Applied: status == 1 || status == 3}
	if status == 3 || status == 4 {
		done.Run, done.Next = true, headOf(res)
		done.Next.Lease = h.Lease
	}
	return done, nil
}

// finishArgs are lua/finish.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type finishArgs struct {
	TokenID     string `lua:"tokenID"`
	Attempted   string `lua:"attempted"`
	Outcome     string `lua:"outcome"`
	Task        string `lua:"task"`
	Config      string `lua:"config"`
	NextAttempt int    `lua:"nextAttempt"`
	FirstMs     int64  `lua:"firstMs"`
	Now         int64  `lua:"now"`
	RetryDue    int64  `lua:"retryDue"`
	AttemptRec  []byte `lua:"attemptRec"`
	Kept        int    `lua:"kept"`
	Records     string `lua:"records"`
	NID         string `lua:"nid"`
	Reason      string `lua:"reason"`
	Keep        int64  `lua:"keep"`
	GoOn        bool   `lua:"goOn"`
	LeaseMs     int64  `lua:"leaseMs"`
	Consumer    string `lua:"consumer"`
	LeaseValue  string `lua:"leaseValue"`
	RestartIdle bool   `lua:"restartIdle"`
	Unpark      bool   `lua:"unpark"`
	Legacy      string `lua:"legacy"`
}

var finishScript = layout.ScriptOf[finishArgs](finishLua)

// moveArgs are lua/mover.lua's arguments, and trimArgs lua/trim.lua's, each
// read there by its lua name (layout.Named), where each is described.
type (
	moveArgs struct {
		Now   int64 `lua:"now"`
		Limit int   `lua:"limit,number"`
	}
	trimArgs struct {
		MinID string `lua:"minID"`
	}
)

var (
	moveScript = layout.BareScriptOf[moveArgs](moverLua)
	trimScript = layout.BareScriptOf[trimArgs](trimLua)
)

// MoveDue moves up to limit due retries of partition p back onto its
// delivery stream. It returns how many it moved and when the earliest retry
// left is due (zero when none is).
func (s *Lanes) MoveDue(ctx context.Context, p int, now time.Time, limit int) (int, time.Time, error) {
	res, err := moveScript.Run(ctx, s.rdb, []string{s.k.Retries(p), s.k.Deliveries(p)},
		moveScript.Args(&moveArgs{Now: now.UnixMilli(), Limit: limit})...).Slice()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("outbox: move due retries: %w", err)
	}
	n, _ := res[0].(int64)
	var next time.Time
	if len(res) > 1 {
		if ms, ok := res[1].(string); ok {
			if f, err := strconv.ParseFloat(ms, 64); err == nil {
				next = time.UnixMilli(int64(f))
			}
		}
	}
	return int(n), next, nil
}

// TrimAcked removes acknowledged tokens from partition p's delivery stream:
// every entry older than both the oldest pending one and the group's
// last-delivered id.
func (s *Lanes) TrimAcked(ctx context.Context, p int) error {
	key := s.k.Deliveries(p)
	groups, err := s.rdb.XInfoGroups(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("outbox: trim deliveries: %w", err)
	}
	minID := ""
	for _, g := range groups {
		if g.Name == group {
			minID = g.LastDeliveredID
		}
	}
	if minID == "" || minID == "0-0" {
		return nil
	}
	pending, err := s.rdb.XPending(ctx, key, group).Result()
	if err != nil {
		return fmt.Errorf("outbox: trim deliveries: %w", err)
	}
	if pending.Count > 0 && layout.IDBefore(pending.Lower, minID) {
		minID = pending.Lower
	}
	// Not while the outbox adopts the partition's lanes (AdoptLanes): it
	// finds a lane by a token's stream entry, even one acked since.
	if err := trimScript.Run(ctx, s.rdb, []string{key, s.k.OutboxAdopting(p)}, trimScript.Args(&trimArgs{MinID: minID})...).Err(); err != nil {
		return fmt.Errorf("outbox: trim deliveries: %w", err)
	}
	return nil
}

// PruneConsumers removes the consumers of partition p's group that have
// nothing pending and have been idle longer than idle: each relay process
// joins under a name of its own, and without this every restart would
// leave one behind. It returns how many it removed.
func (s *Lanes) PruneConsumers(ctx context.Context, p int, idle time.Duration) (int, error) {
	key := s.k.Deliveries(p)
	cs, err := s.rdb.XInfoConsumers(ctx, key, group).Result()
	if err != nil {
		return 0, fmt.Errorf("outbox: list consumers: %w", err)
	}
	n := 0
	for _, c := range cs {
		if c.Pending == 0 && c.Idle > idle {
			if err := s.rdb.XGroupDelConsumer(ctx, key, layout.Group, c.Name).Err(); err != nil {
				return n, fmt.Errorf("outbox: remove consumer: %w", err)
			}
			n++
		}
	}
	return n, nil
}
