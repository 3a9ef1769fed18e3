// Package workqueue holds the work queues of the worker API: per queue, a
// stream of task turns read through a consumer group, and per task a lease
// naming the worker that holds it. It never decides task state (ingest
// does) and knows nothing of A2A.
package workqueue

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

var (
	//go:embed lua/grant.lua
	grantLua string
	//go:embed lua/renew.lua
	renewLua string
)

// ErrLeaseLost: the lease expired and went to another worker, the work was
// finished or handed back, or the lease id is not one relay issued.
var ErrLeaseLost = errors.New("lease lost")

// Claims are the work queues of the worker API: per queue, a stream of work
// entries (one per task turn: "t" task id, "m" message id, "v" turn number)
// read through the consumer group "workers", and per task a lease key naming
// the worker that holds it. An entry whose lease is not renewed is pending
// with a growing idle time, and the next claim takes it over (XAUTOCLAIM).
// An entry's delivery count in the pending list is its attempt number: a
// delivery that does not grant it (it waits for another turn of its task,
// or the claim that read it was given up) is taken back from the count.
//
// A task's turns are numbered (the task version of the commit that opened
// the turn, so a later turn has a higher number), and the number decides
// what a claim does with an offer while the task's lease key holds a live
// lease or, once a turn is done, the done marker (kept DoneHorizon): an
// offer of a turn at or below the done or held one is a duplicate (or a turn
// superseded by a later one) and is dropped; an offer of a later turn waits
// for the held one to end. Offers without a number (written before turns
// were numbered) are never dropped as duplicates.
//
// A turn's life costs, when its task's lease key is free and the turn ends
// its task (the common case): the offer's XADD, a share of a claim's
// XREADGROUP, the grant's SET NX and, at its end (Final), DEL, XACK and
// XDEL, with no script.
//
// The keys of one queue share the hash tag {wq:<queue>}.
type Claims struct {
	rdb   redis.UniversalClient
	block redis.UniversalClient
	// batch sends the commands of a turn's life (its offer, grant and
	// lease changes) in pipelines shared with other callers: none of them
	// needs its answer before the round trip that carries it ends, so under
	// load many ride one round trip.
	batch *groupcommit.Batcher
	k     layout.Keys
	ready sync.Map // queue -> struct{}: the consumer group exists
	// scan is where the next search for expired leases resumes, per queue:
	// XAUTOCLAIM looks at a bounded stretch of the pending list per call.
	scan sync.Map // queue -> string
	// quiet is when a search went through a queue's whole pending list
	// and found no expired lease, per queue: searches are skipped for
	// reclaimPause after it, so that claims coming fast (one per task turn)
	// do not each walk a pending list of live leases.
	quiet sync.Map // queue -> time.Time
}

// reclaimPause is how long after a search that found no expired lease the
// next one waits: a tenth of the lease, up to a second. An abandoned turn
// is thus taken over at most that much after its lease ran out, and a
// released one at most that much after its release (at once by the
// instance that released it).
func reclaimPause(ttl time.Duration) time.Duration { return min(ttl/10, time.Second) }

// reclaimScan bounds the XAUTOCLAIM calls of one search for an expired
// lease (each looks at up to 10 pending entries); the search resumes where
// it stopped on the next one.
const reclaimScan = 20

// expired looks for an entry whose lease expired (idle past ttl), walking
// the pending list from where the last search stopped.
func (c *Claims) expired(ctx context.Context, queue, consumer string, ttl time.Duration) ([]redis.XMessage, error) {
	if v, ok := c.quiet.Load(queue); ok && time.Since(v.(time.Time)) < reclaimPause(ttl) {
		return nil, nil
	}
	start := "0-0"
	if v, ok := c.scan.Load(queue); ok {
		start = v.(string)
	}
	for range reclaimScan {
		msgs, next, err := c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: c.stream(queue), Group: layout.Group,
			Consumer: consumer, MinIdle: ttl, Start: start, Count: 1}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("workqueue: reclaim work: %w", err)
		}
		c.scan.Store(queue, next)
		if len(msgs) > 0 {
			return msgs, nil
		}
		if next == "0-0" || next == "" {
			c.quiet.Store(queue, time.Now())
			return nil, nil // the whole pending list was searched
		}
		start = next
	}
	return nil, nil
}

// New returns the work queues named by k. block serves the blocking reads
// of long-polling claims (a pool of its own, so that they never starve the
// commit path); it may be rdb. batch, over rdb, carries offers, grants and
// lease changes in pipelines shared with its other callers (the task
// store's commits, say); nil gives the queues a batcher of their own.
func New(rdb, block redis.UniversalClient, batch *groupcommit.Batcher, k layout.Keys) *Claims {
	if batch == nil {
		batch = groupcommit.New(rdb)
	}
	return &Claims{rdb: rdb, block: block, batch: batch, k: k}
}

func (c *Claims) stream(queue string) string { return c.k.WorkQueue(queue).Stream }
func (c *Claims) lease(queue, taskID string) string {
	return c.k.WorkQueue(queue).Lease(taskID)
}

// DoneHorizon is how long a task's lease key, once its turn is done
// (LeaseDone: the task waits for its client), keeps the done marker by
// which a claim recognizes a later offer of that turn (a duplicate, by a
// re-offer) and drops it. Re-offers come within about twice the
// re-offer delay of the commit (ingest.Reofferer) whenever any relay
// runs, or once Redis answers again after an outage: an hour covers both.
// A duplicate that comes later still is granted, and the claimer drops it
// only if the task is finished. A turn that finished its task
// (LeaseFinal) leaves no marker: the claimer drops its duplicates by the
// task's state.
const DoneHorizon = time.Hour

// Work is one task turn granted to a worker.
type Work struct {
	Queue, TaskID, MessageID string
	// Turn is the turn's number (0: unknown).
	Turn int64
	// LeaseID identifies the lease; it names the queue, so that it alone
	// finds the lease again, and the attempt: "<queue, base64url>.<random
	// hex>.<attempt>" (a lease granted by a3a5dfe or older has no
	// ".<attempt>").
	LeaseID string
	// Attempt counts how often the entry was handed out (1 = first).
	Attempt int
	// entry is the work entry's stream id (Final).
	entry string
}

// QueueOf returns the queue a lease id belongs to.
func QueueOf(leaseID string) (string, error) {
	enc, _, ok := strings.Cut(leaseID, ".")
	q, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || len(q) == 0 {
		return "", ErrLeaseLost
	}
	return string(q), nil
}

// ensureGroup creates queue's consumer group, once per queue and process,
// and deletes the queue's hash of grants per entry that builds up to
// a3a5dfe kept (layout.WorkQueueKeys.LegacyGrants): attempts are counted
// in the pending list now, and the leases those builds granted end without
// it.
func (c *Claims) ensureGroup(ctx context.Context, queue string) error {
	if _, ok := c.ready.Load(queue); ok {
		return nil
	}
	var create *redis.StatusCmd
	var legacy *redis.IntCmd
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		create = p.XGroupCreateMkStream(ctx, c.stream(queue), layout.Group, "0")
		legacy = p.Del(ctx, c.k.WorkQueue(queue).LegacyGrants)
		return nil
	})
	if err := create.Err(); err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("workqueue: create work group: %w", err)
	}
	if err := legacy.Err(); err != nil {
		return fmt.Errorf("workqueue: delete the grants of an earlier build: %w", err)
	}
	c.ready.Store(queue, struct{}{})
	return nil
}

// Offer queues a turn of a task (its creation, or a client's message),
// numbered turn (0: unknown). The same turn offered twice (a re-offer of a
// turn whose first offer was made after all) runs once: its other offer is
// dropped at its claim while the turn's lease is held, or once the turn is
// done (grant.lua), and so is an offer of a turn older than the held or
// done one. A turn offered while an earlier one runs waits for it to end.
func (c *Claims) Offer(ctx context.Context, queue, taskID, messageID string, turn int64) error {
	if err := c.ensureGroup(ctx, queue); err != nil {
		return err
	}
	values := []any{"t", taskID, "m", messageID}
	if turn > 0 {
		values = append(values, "v", turn)
	}
	var cmd *redis.StringCmd
	c.batch.Do(func(p redis.Pipeliner) { cmd = p.XAdd(ctx, &redis.XAddArgs{Stream: c.stream(queue), Values: values}) })
	if err := cmd.Err(); err != nil {
		return fmt.Errorf("workqueue: offer work: %w", err)
	}
	return nil
}

// Claim hands the next turn of queue to consumer under a lease of ttl: an
// entry whose previous lease expired first, else a new one, waiting up to
// wait for one. It returns nil when none came.
func (c *Claims) Claim(ctx context.Context, queue, consumer string, ttl, wait time.Duration) (*Work, error) {
	ws, err := c.ClaimN(ctx, queue, consumer, ttl, wait, 1)
	if len(ws) == 0 {
		return nil, err
	}
	return ws[0], err
}

// ClaimN is Claim for up to n turns at once: when several are waiting, it
// reads up to n in one round trip and grants them in another, each under
// a lease of its own. It returns the turns granted (none when none came),
// and an error only when it granted none.
func (c *Claims) ClaimN(ctx context.Context, queue, consumer string, ttl, wait time.Duration, n int) ([]*Work, error) {
	if err := c.ensureGroup(ctx, queue); err != nil {
		return nil, err
	}
	n = max(n, 1)
	deadline := time.Now().Add(wait)
	for {
		msgs, err := c.expired(ctx, queue, consumer, ttl)
		if err != nil {
			return nil, err
		}
		reclaimed := len(msgs) > 0
		if !reclaimed {
			// Block in slices of a second at most, so that a lease expiring
			// meanwhile is noticed by a waiting claim.
			block := min(time.Until(deadline), time.Second, max(reclaimPause(ttl), time.Millisecond)).Truncate(time.Millisecond)
			if block < time.Millisecond { // BLOCK 0 would wait forever
				return nil, nil
			}
			res, err := c.block.XReadGroup(ctx, &redis.XReadGroupArgs{Group: layout.Group, Consumer: consumer,
				Streams: []string{c.stream(queue), ">"}, Count: int64(n), Block: block}).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, fmt.Errorf("workqueue: read work: %w", err)
			}
			for _, st := range res {
				msgs = append(msgs, st.Messages...)
			}
			if ctx.Err() != nil && len(msgs) > 0 {
				// The claim was given up while Redis handed it entries:
				// make them look abandoned, so the next claim takes them.
				c.abandon(context.WithoutCancel(ctx), queue, consumer, ttl, msgs)
				return nil, ctx.Err()
			}
		}
		// Granted even if the claim was given up meanwhile: the caller
		// then releases them, rather than leaving them to expire.
		ws, err := c.grantEntries(context.WithoutCancel(ctx), queue, consumer, ttl, msgs, reclaimed)
		if len(ws) > 0 || err != nil {
			return ws, err
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
	}
}

// grantArgs are lua/grant.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type grantArgs struct {
	EntryID   string `lua:"entryID"`
	LeaseID   string `lua:"leaseID"`
	LeaseMs   int64  `lua:"leaseMs"`
	Consumer  string `lua:"consumer"`
	Turn      int64  `lua:"turn,number"`
	Delivered int64  `lua:"delivered,number"`
}

var grantScript = layout.BareScriptOf[grantArgs](grantLua)

// renewArgs are lua/renew.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type renewArgs struct {
	LeaseID string `lua:"leaseID"`
	Action  string `lua:"action"`
	Ms      int64  `lua:"ms"`
	DoneMs  int64  `lua:"doneMs"`
}

var renewScript = layout.BareScriptOf[renewArgs](renewLua)

// abandon sets the idle time of entries read by a claim nobody waits for
// any more past the lease, so that the next claim takes them over, and
// takes their delivery back from their count (they were read new: 1), so
// that the claim that grants them sees its first attempt.
func (c *Claims) abandon(ctx context.Context, queue, consumer string, ttl time.Duration, msgs []redis.XMessage) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	args := []any{"XCLAIM", c.stream(queue), layout.Group, consumer, 0}
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, "IDLE", ttl.Milliseconds()+1, "RETRYCOUNT", 0, "JUSTID")
	_ = c.rdb.Do(ctx, args...).Err()
}

// grantEntries grants the entries msgs (reclaimed: taken over from
// expired leases, else read new). A new entry whose task's lease key is
// free is granted by a SET NX of the lease, as its first attempt; the
// others by grant.lua, in a second round trip (reclaimed ones there
// alone). Entries not granted (another lease holds the task, or the turn
// is done) are left as grant.lua leaves them; entries whose grant failed
// stay pending, and a claim takes them over once ttl passed. It returns
// the turns granted, and the first error only when none was.
func (c *Claims) grantEntries(ctx context.Context, queue, consumer string, ttl time.Duration, msgs []redis.XMessage, reclaimed bool) ([]*Work, error) {
	ws := make([]*Work, 0, len(msgs))
	for _, m := range msgs {
		w := &Work{Queue: queue, entry: m.ID, LeaseID: base64.RawURLEncoding.EncodeToString([]byte(queue)) + "." + strings.ReplaceAll(uuid.NewString(), "-", "")}
		w.TaskID, _ = m.Values["t"].(string)
		w.MessageID, _ = m.Values["m"].(string)
		if v, ok := m.Values["v"].(string); ok {
			w.Turn, _ = strconv.ParseInt(v, 10, 64)
		}
		if w.TaskID == "" { // not an entry relay wrote: drop it
			c.rdb.XAck(ctx, c.stream(queue), layout.Group, m.ID)
			continue
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return nil, nil
	}
	granted := ws[:0:0]
	var firstErr error
	scripted := ws
	if !reclaimed {
		sets := make([]*redis.StatusCmd, len(ws))
		c.batch.Do(func(p redis.Pipeliner) {
			for i, w := range ws {
				sets[i] = p.SetArgs(ctx, c.lease(queue, w.TaskID), leaseValue(w.LeaseID+".1", w, consumer), redis.SetArgs{Mode: "NX", Get: true, TTL: ttl})
			}
		})
		scripted = nil
		for i, w := range ws {
			switch err := sets[i].Err(); {
			case errors.Is(err, redis.Nil): // the key was free: granted
				w.Attempt, w.LeaseID = 1, w.LeaseID+".1"
				granted = append(granted, w)
			case err != nil:
				firstErr = cmp.Or(firstErr, fmt.Errorf("workqueue: grant work: %w", err))
			default: // a lease or a done marker is there: grant.lua decides
				scripted = append(scripted, w)
			}
		}
	}
	if len(scripted) > 0 {
		delivered := int64(1) // read new: this is its first delivery
		if reclaimed {
			delivered = 0 // grant.lua reads it from the pending list
		}
		cmds := make([]*redis.Cmd, len(scripted))
		args := func(i int) ([]string, []any) {
			w := scripted[i]
			return []string{c.stream(queue), c.lease(queue, w.TaskID)}, grantScript.Args(&grantArgs{
				EntryID:   w.entry,
				LeaseID:   w.LeaseID,
				LeaseMs:   ttl.Milliseconds(),
				Consumer:  consumer,
				Turn:      w.Turn,
				Delivered: delivered,
			})
		}
		c.batch.Do(func(p redis.Pipeliner) {
			for i := range scripted {
				keys, argv := args(i)
				cmds[i] = grantScript.EvalSha(ctx, p, keys, argv...)
			}
		})
		for i, w := range scripted {
			cmd := cmds[i]
			if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				keys, argv := args(i)
				cmd = grantScript.Run(ctx, c.rdb, keys, argv...) // (Redis restarted: this loads the script)
			}
			res, err := cmd.Slice()
			if err != nil {
				firstErr = cmp.Or(firstErr, fmt.Errorf("workqueue: grant work: %w", err))
				continue
			}
			if ok, _ := res[0].(int64); ok != 1 {
				continue // another worker holds a live lease on this task, or the turn is done
			}
			n, _ := res[1].(int64)
			w.Attempt = max(int(n), 1)
			w.LeaseID += "." + strconv.FormatInt(n, 10) // (as grant.lua wrote it)
			granted = append(granted, w)
		}
	}
	if len(granted) > 0 {
		return granted, nil
	}
	return nil, firstErr
}

// leaseValue is the value of the lease leaseID on w (grant.lua describes
// it).
func leaseValue(leaseID string, w *Work, consumer string) string {
	at := w.entry
	if w.Turn > 0 {
		at += "/" + strconv.FormatInt(w.Turn, 10)
	}
	return leaseID + " " + at + " " + consumer
}

// Lease actions of Renew.
const (
	LeaseRenew   = "renew"
	LeaseDone    = "done"
	LeaseFinal   = "final"
	LeaseRelease = "release"
)

// Renew keeps (LeaseRenew, for ttl more), ends (LeaseDone: the turn is
// over, and later offers of it are dropped for DoneHorizon; LeaseFinal:
// the turn is over and so is its task, and nothing is kept) or hands back
// (LeaseRelease: offered to the next claim at once, ttl being the lease time
// claims wait for) a lease on taskID. It returns ErrLeaseLost when the lease
// is not current.
func (c *Claims) Renew(ctx context.Context, leaseID, taskID, action string, ttl time.Duration) error {
	queue, err := QueueOf(leaseID)
	if err != nil {
		return err
	}
	arg := ttl.Milliseconds()
	if action == LeaseRelease {
		arg = ttl.Milliseconds() + 1
	}
	n, err := c.batch.Eval(ctx, renewScript.Script, []string{c.stream(queue), c.lease(queue, taskID)},
		renewScript.Args(&renewArgs{LeaseID: leaseID, Action: action, Ms: arg, DoneMs: DoneHorizon.Milliseconds()})...).Int()
	if err != nil {
		return fmt.Errorf("workqueue: %s lease: %w", action, err)
	}
	if n != 1 {
		return ErrLeaseLost
	}
	if action == LeaseRelease {
		c.quiet.Delete(queue) // this instance's next claim takes it at once; others' within reclaimPause
	}
	return nil
}

// Final ends the turn w, which finished its task (or whose task is gone),
// as LeaseFinal does, but in three commands (DEL of the lease, XACK and
// XDEL of the entry) and without reading the lease first: it ends the turn
// whoever holds its lease now. That is safe only because the task is
// final: a worker that took the turn over works on a finished task, and
// learns so on its next heartbeat or post. w must be as a claim returned
// it (a Work without its entry is ended by Renew, LeaseFinal); a lease id
// from elsewhere (a worker's request) goes through Renew, which checks it.
func (c *Claims) Final(ctx context.Context, w *Work) error {
	if w.entry == "" {
		return c.Renew(ctx, w.LeaseID, w.TaskID, LeaseFinal, 0)
	}
	stream := c.stream(w.Queue)
	var cmds [3]redis.Cmder
	c.batch.Do(func(p redis.Pipeliner) {
		cmds[0] = p.Del(ctx, c.lease(w.Queue, w.TaskID))
		cmds[1] = p.XAck(ctx, stream, layout.Group, w.entry)
		cmds[2] = p.XDel(ctx, stream, w.entry)
	})
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return fmt.Errorf("workqueue: %s lease: %w", LeaseFinal, err)
		}
	}
	return nil
}
