package taskstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
)

// Entry is one entry of a task's event stream.
type Entry struct {
	ID    string
	Event []byte
}

// Current returns a task and the id of its last event, read together (in
// one MULTI) so that a subscriber that sends the task first and then reads
// after that id neither misses nor repeats an event.
func (s *Store) Current(ctx context.Context, taskID string) (Record, string, error) {
	tk := s.k.Task(taskID)
	var h *redis.MapStringStringCmd
	var last *redis.XMessageSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		h = p.HGetAll(ctx, tk.Hash)
		last = p.XRevRangeN(ctx, tk.Events, "+", "-", 1)
		return nil
	})
	if err != nil {
		return Record{}, "", fmt.Errorf("taskstore: read task: %w", err)
	}
	rec, err := recordOf(h.Val())
	if err != nil {
		return Record{}, "", err
	}
	id := ""
	if m := last.Val(); len(m) == 1 {
		id = m[0].ID
	}
	return rec, id, nil
}

// ReadEvents returns the events of a task after id afterID, waiting up to
// block for one to arrive when there are none. rdb is the client to block
// on (a pool of its own, so that waiting subscribers never starve the rest).
func (s *Store) ReadEvents(ctx context.Context, rdb redis.UniversalClient, taskID, afterID string, block time.Duration) ([]Entry, error) {
	block = max(block, time.Millisecond) // BLOCK 0 would wait forever
	res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{s.k.Task(taskID).Events, afterID}, Count: 100, Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("taskstore: read events: %w", err)
	}
	var out []Entry
	for _, st := range res {
		for _, m := range st.Messages {
			out = append(out, Entry{ID: m.ID, Event: layout.DecodeEventEntry(m.Values).Event})
		}
	}
	return out, nil
}
