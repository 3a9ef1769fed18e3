// Package quota holds each client to its storage budgets in Redis: bytes
// stored (tasks, events, push configs, delivery records) and tasks stored
// at once. A request that would pass a budget is refused whole, with an
// *a2a.QuotaError, before anything of it is written.
//
// The figures come from the task store (taskstore.Store.Usage, which
// documents how bytes are counted: when written, for at least a usage
// window after a task's last commit, so as long as a finished task or a
// delivery record lives). Reading them takes one pipelined round trip, so
// each instance reads a client's figures at most once per Refresh and in
// between adds what it admits itself. A request is admitted with what its
// agent estimates it will write in answer, when the agent estimates
// (ingest.Estimator: the demo's echo and steps), and the commit that
// starts the turn counts that estimate as the task's reserve (taskstore's
// Reservations), so the next read sees it: this instance's at once, other
// instances' once the committing instance sends its usage tally (about a
// second later). A client can therefore pass a budget by what other
// instances admit for it within one Refresh and what they have counted
// but not yet sent, and by what agents that do not estimate write for
// requests admitted under the budget (a worker's artifacts): agents are
// never refused mid-task.
//
// The tasks figure is each partition's index of the client's tasks, which
// also lists tasks that expired since; when it says the client is at its
// budget, the tasks whose status has not changed for a task retention (the
// index's order) are checked and those gone are dropped from the index
// (PruneIndex), so the count is exact when it matters.
package quota

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// Reader reads a client's usage (taskstore.Store implements it).
type Reader interface {
	Usage(ctx context.Context, owner string, now time.Time) (taskstore.Usage, error)
	PruneIndex(ctx context.Context, owner string, idle time.Time) (int, error)
}

// Config configures a Quota. Zero MaxBytes or MaxTasks means no such
// budget; zero durations take the documented defaults.
type Config struct {
	// MaxBytes is each client's budget of bytes stored.
	MaxBytes int64
	// MaxTasks is each client's budget of tasks stored at once.
	MaxTasks int64
	// Refresh is how stale a client's figures may be (default 1s).
	Refresh time.Duration
	// Idle is how long a task may go without a commit before it may have
	// expired: the task retention (default 7 days).
	Idle time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// maxClients bounds the clients whose figures an instance keeps; past it
// they are all forgotten, which only costs reads.
const maxClients = 10000

// Quota admits or refuses requests by the budgets of their client.
type Quota struct {
	r   Reader
	cfg Config

	mu      sync.Mutex
	clients map[string]*figures
}

// figures are one client's usage as last read, plus what was admitted here
// since.
type figures struct {
	mu     sync.Mutex // held while they are read from Redis
	usage  taskstore.Usage
	read   time.Time
	pruned time.Time
}

// New returns a Quota reading usage from r.
func New(r Reader, cfg Config) *Quota {
	cfg.Refresh = cmp.Or(cfg.Refresh, time.Second)
	cfg.Idle = cmp.Or(cfg.Idle, 7*24*time.Hour)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Quota{r: r, cfg: cfg, clients: make(map[string]*figures)}
}

// Enabled reports whether any budget is set.
func (q *Quota) Enabled() bool { return q.cfg.MaxBytes > 0 || q.cfg.MaxTasks > 0 }

// Admit checks that owner may store bytes more, and a new task when
// newTask, and counts them as stored; past a budget it returns an
// *a2a.QuotaError naming it.
func (q *Quota) Admit(ctx context.Context, owner string, bytes int64, newTask bool) error {
	if !q.Enabled() {
		return nil
	}
	f := q.client(owner)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := q.cfg.Now()
	if now.Sub(f.read) >= q.cfg.Refresh || now.Before(f.read) {
		if err := q.read(ctx, owner, f, now); err != nil {
			return err
		}
	}
	if newTask && q.cfg.MaxTasks > 0 && f.usage.Tasks >= q.cfg.MaxTasks && now.Sub(f.pruned) >= q.cfg.Refresh {
		f.pruned = now
		if n, err := q.r.PruneIndex(ctx, owner, now.Add(-q.cfg.Idle)); err != nil {
			return fmt.Errorf("quota: %w", err)
		} else if n > 0 {
			if err := q.read(ctx, owner, f, now); err != nil {
				return err
			}
		}
	}
	if newTask && q.cfg.MaxTasks > 0 && f.usage.Tasks >= q.cfg.MaxTasks {
		return &a2a.QuotaError{Limit: a2a.QuotaTasks, Max: q.cfg.MaxTasks, Used: f.usage.Tasks}
	}
	if q.cfg.MaxBytes > 0 && f.usage.Bytes+bytes > q.cfg.MaxBytes {
		return &a2a.QuotaError{Limit: a2a.QuotaStorageBytes, Max: q.cfg.MaxBytes, Used: f.usage.Bytes}
	}
	f.usage.Bytes += bytes
	if newTask {
		f.usage.Tasks++
	}
	return nil
}

func (q *Quota) read(ctx context.Context, owner string, f *figures, now time.Time) error {
	u, err := q.r.Usage(ctx, owner, now)
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	f.usage, f.read = u, now
	return nil
}

// client returns owner's figures, made when missing.
func (q *Quota) client(owner string) *figures {
	q.mu.Lock()
	defer q.mu.Unlock()
	f, ok := q.clients[owner]
	if !ok {
		if len(q.clients) >= maxClients {
			clear(q.clients)
		}
		f = &figures{}
		q.clients[owner] = f
	}
	return f
}
