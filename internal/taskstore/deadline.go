package taskstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// Turn deadlines. A task turn (its creation, or a client's answer to an
// interrupted task, until the task is final or interrupted again) may run
// under limits: how long it waits unclaimed, how long it runs once claimed.
// Its record is the task hash's field 'dl', "<phase> <waitMs> <runMs>
// <sinceMs>" (phase w: waiting since; r: claimed since), and while a limit
// applies the task is listed in its partition's deadline zset
// (layout.Keys.Deadlines) at the time it is reached. The commit that
// starts a turn writes both (Commit.Deadline; a turn claimed already, phase
// r, keeps its record: the agent of a turn claimed while the task was
// interrupted takes the task up again), the claim moves them (ClaimTurn),
// the commit that ends the turn removes them: a store without limits
// writes nothing.

// Turns is a task's turn bookkeeping beside its commits, for the work
// queues and the sweepers: the claims and deadlines of turns (ClaimTurn,
// DropDeadline, DueTurns: this file) and the records of the turns offered
// to work queues (DueOffers, DropOffer, DropOfferSoon: offers.go). The
// commit that starts or ends a turn, or records its offer, writes both
// (Store.Commit); Turns never writes a task's state, and never offers a
// turn or fails one (ingest does).
type Turns struct {
	rdb   redis.UniversalClient
	k     layout.Keys
	batch *groupcommit.Batcher
	// drops are the offer records to remove together (DropOfferSoon).
	drops offerDrops
}

// NewTurns returns the turn bookkeeping of d.RDB, named by d.Keys, whose
// offer removals share round trips through d.Batch, or an error naming
// what is missing. It takes no config: nothing of it is set.
func NewTurns(d Deps) (*Turns, error) {
	if err := d.check("turns", true); err != nil {
		return nil, err
	}
	return &Turns{rdb: d.RDB, k: d.Keys, batch: d.Batch}, nil
}

//go:embed lua/deadline.lua
var deadlineLua string

var deadlineScript = layout.BareScriptOf[deadlineArgs](deadlineLua)

// deadlineArgs are lua/deadline.lua's arguments, each read there by its lua
// name (layout.Named), where each is described.
type deadlineArgs struct {
	Action    string `lua:"action"`
	Task      string `lua:"task"`
	Now       int64  `lua:"now,number"`
	WaitLimit int64  `lua:"waitLimit,number"`
	RunLimit  int64  `lua:"runLimit,number"`
}

// ErrTurnMoved: a commit conditioned on the task's turn record
// (Deadline.Expect) found another record; nothing was written.
var ErrTurnMoved = errors.New("the task's turn moved on")

// TurnLimits are the limits of a turn; zero is no limit.
type TurnLimits struct {
	// Wait bounds the time from the turn's start to its claim.
	Wait time.Duration
	// Run bounds the time from the turn's first claim to its end.
	Run time.Duration
}

// Any reports whether some limit is set.
func (l TurnLimits) Any() bool { return l.Wait > 0 || l.Run > 0 }

// Deadline is what a commit does to the task's turn record.
type Deadline struct {
	// Start, when it has a limit, starts a turn under it.
	Start TurnLimits
	// Running, with Start: the turn starts claimed (phase r, its run limit
	// from now): the agent holding a claim takes an interrupted task up
	// again, so no wait is left to time.
	Running bool
	// End: the commit ends the turn (a final or interrupted state); a
	// record the task has goes.
	End bool
	// Expect, with End, applies the commit only while the task's record is
	// Expect (Record.Deadline): else nothing is written and the commit
	// returns ErrTurnMoved.
	Expect string
}

// arg is the commit script's deadline argument (lua/commit.lua).
func (d Deadline) arg() string {
	switch {
	case d.End && d.Expect != "":
		return "end " + d.Expect
	case d.End:
		return "end"
	case d.Start.Any() && d.Running:
		return "run " + strconv.FormatInt(d.Start.Wait.Milliseconds(), 10) + " " + strconv.FormatInt(d.Start.Run.Milliseconds(), 10)
	case d.Start.Any():
		return "turn " + strconv.FormatInt(d.Start.Wait.Milliseconds(), 10) + " " + strconv.FormatInt(d.Start.Run.Milliseconds(), 10)
	}
	return ""
}

// Turn is a task's turn record.
type Turn struct {
	// Claimed: the turn was claimed at Since; else it waits since Since.
	Claimed bool
	Limits  TurnLimits
	Since   time.Time
}

// ParseTurn reads a record (Record.Deadline); ok is false for "" and
// for what relay never wrote.
func ParseTurn(rec string) (t Turn, ok bool) {
	f := strings.Fields(rec)
	if len(f) != 4 || (f[0] != "w" && f[0] != "r") {
		return Turn{}, false
	}
	var ms [3]int64
	for i := range ms {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || n < 0 {
			return Turn{}, false
		}
		ms[i] = n
	}
	return Turn{Claimed: f[0] == "r", Limits: TurnLimits{Wait: time.Duration(ms[0]) * time.Millisecond,
		Run: time.Duration(ms[1]) * time.Millisecond}, Since: time.UnixMilli(ms[2])}, true
}

// Limit is the limit in force: the run limit once claimed, else the wait
// limit (zero: none).
func (t Turn) Limit() time.Duration {
	if t.Claimed {
		return t.Limits.Run
	}
	return t.Limits.Wait
}

// Due is when the limit in force is reached; ok is false without one.
func (t Turn) Due() (due time.Time, ok bool) {
	if l := t.Limit(); l > 0 {
		return t.Since.Add(l), true
	}
	return time.Time{}, false
}

// ClaimTurn records that taskID's turn was claimed at now: a turn still
// waiting moves to its run limit; one claimed before keeps its own; one
// without a record (claimed while the task is interrupted, or started
// where no limit was set) starts its run limit, limits.Run, now. It is one
// command, and none is needed for a task without a record when limits has
// no run limit. expired is the record when the turn's wait limit had
// passed: nothing changed, and the turn must not be handed out.
func (s *Turns) ClaimTurn(ctx context.Context, taskID string, now time.Time, limits TurnLimits) (expired string, err error) {
	res, err := deadlineScript.Run(ctx, s.rdb, s.deadlineKeys(taskID), deadlineScript.Args(&deadlineArgs{
		Action:    "claim",
		Task:      taskID,
		Now:       now.UnixMilli(),
		WaitLimit: limits.Wait.Milliseconds(),
		RunLimit:  limits.Run.Milliseconds(),
	})...).StringSlice()
	if err != nil {
		return "", fmt.Errorf("taskstore: claim a turn: %w", err)
	}
	if len(res) == 2 && res[0] == "expired" {
		return res[1], nil
	}
	return "", nil
}

// DropDeadline unlists taskID from its partition's deadline zset when the
// task has no turn record (its hash expired or was deleted); a task with
// one stays listed.
func (s *Turns) DropDeadline(ctx context.Context, taskID string) error {
	if err := deadlineScript.Run(ctx, s.rdb, s.deadlineKeys(taskID),
		deadlineScript.Args(&deadlineArgs{Action: "drop", Task: taskID})...).Err(); err != nil {
		return fmt.Errorf("taskstore: drop a deadline: %w", err)
	}
	return nil
}

func (s *Turns) deadlineKeys(taskID string) []string {
	return []string{s.k.Task(taskID).Hash, s.k.Deadlines(s.k.Partition(taskID))}
}

// Partitions is the number of partitions DueTurns lists (the Store's).
func (s *Turns) Partitions() int { return s.k.Partitions() }

// DueTurns lists up to n tasks of partition p whose turn reached its limit
// by now, the earliest first.
func (s *Turns) DueTurns(ctx context.Context, p, n int, now time.Time) ([]string, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, s.k.Deadlines(p), &redis.ZRangeBy{Min: "-inf",
		Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(n)}).Result()
	if err != nil {
		return nil, fmt.Errorf("taskstore: due turns: %w", err)
	}
	return ids, nil
}
