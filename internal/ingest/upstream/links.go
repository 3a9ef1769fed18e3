package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// Link ties a relay task to the agent's task that does its work.
type Link struct {
	// UpstreamTaskID and ContextID are the agent's ids of the task.
	UpstreamTaskID string `json:"upstreamTaskId"`
	ContextID      string `json:"contextId,omitempty"`
	// LastMessageID is the relay message last sent to the agent: a turn
	// for the same message re-attaches, a turn for another one sends it.
	LastMessageID string `json:"lastMessageId"`
	// Waiting marks the agent's status (state, message id, timestamp) at
	// which our task last stopped for the client. A follow-up turn may
	// first see the agent's task still in that status, before the agent
	// took the answer in: that is not news, and must not stop our task
	// again.
	Waiting string `json:"waiting,omitempty"`
	// Queue is the bridge's queue (one per upstream agent) and Life the
	// id of our task's first message: a link of another upstream, or of
	// an earlier task that had the same id (v0.1 ids are the client's;
	// links outlive tasks), is not this task's.
	Queue string `json:"queue,omitempty"`
	Life  string `json:"life,omitempty"`
}

// Links stores the link of each relay task, shared by relay instances.
type Links interface {
	Get(ctx context.Context, taskID string) (Link, bool, error)
	Put(ctx context.Context, taskID string, l Link) error
}

// redisLinks keeps each link as JSON under the key layout names
// (UpstreamLink).
type redisLinks struct {
	rdb  redis.UniversalClient
	keys layout.Keys
	ttl  time.Duration
}

// NewRedisLinks returns Links in Redis, under the keys of keys. Each Put
// refreshes the key's ttl (default 7 days, the default task retention), so
// a link outlives its task's activity by ttl.
func NewRedisLinks(rdb redis.UniversalClient, keys layout.Keys, ttl time.Duration) Links {
	return &redisLinks{rdb: rdb, keys: keys, ttl: cmp.Or(ttl, 7*24*time.Hour)}
}

func (l *redisLinks) key(taskID string) string { return l.keys.UpstreamLink(taskID) }

func (l *redisLinks) Get(ctx context.Context, taskID string) (Link, bool, error) {
	b, err := l.rdb.Get(ctx, l.key(taskID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Link{}, false, nil
	}
	if err != nil {
		return Link{}, false, fmt.Errorf("upstream: read link: %w", err)
	}
	var link Link
	if err := json.Unmarshal(b, &link); err != nil {
		return Link{}, false, fmt.Errorf("upstream: decode link of task %s: %w", taskID, err)
	}
	return link, true, nil
}

func (l *redisLinks) Put(ctx context.Context, taskID string, link Link) error {
	b, err := json.Marshal(link)
	if err != nil {
		return fmt.Errorf("upstream: encode link: %w", err)
	}
	if err := l.rdb.Set(ctx, l.key(taskID), b, l.ttl).Err(); err != nil {
		return fmt.Errorf("upstream: write link: %w", err)
	}
	return nil
}
