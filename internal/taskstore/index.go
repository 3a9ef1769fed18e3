package taskstore

import (
	"context"
	"fmt"

	"github.com/a2arelay/relay/internal/zindex"
	"github.com/redis/go-redis/v9"
)

// IndexEntry is one task in listing order: by its latest status change
// (or its creation), newest first (Commit.KeepPlace).
type IndexEntry = zindex.Entry

// ScanIndex returns up to limit of owner's tasks that come after cursor
// (nil: from the newest), newest first, merged across all partitions.
func (s *Store) ScanIndex(ctx context.Context, owner string, cursor *IndexEntry, limit int) ([]IndexEntry, error) {
	keys := make([]string, s.k.Partitions())
	for p := range keys {
		keys[p] = s.k.Index(p, owner)
	}
	return zindex.Scan(ctx, s.rdb, keys, cursor, limit)
}

// IndexSize returns the number of owner's indexed tasks, across all partitions.
func (s *Store) IndexSize(ctx context.Context, owner string) (int64, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, s.k.Partitions())
	for p := range cmds {
		cmds[p] = pipe.ZCard(ctx, s.k.Index(p, owner))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("taskstore: index size: %w", err)
	}
	var n int64
	for _, c := range cmds {
		n += c.Val()
	}
	return n, nil
}

// LoadMany loads several of owner's tasks in one round trip. A task that no
// longer exists (expired) is missing from the result and dropped from
// owner's index.
func (s *Store) LoadMany(ctx context.Context, owner string, taskIDs []string) (map[string]Record, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(taskIDs))
	for i, id := range taskIDs {
		cmds[i] = pipe.HGetAll(ctx, s.k.Task(id).Hash)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("taskstore: load tasks: %w", err)
	}
	out := make(map[string]Record, len(taskIDs))
	var gone []string
	for i, c := range cmds {
		r, err := recordOf(c.Val())
		if err == ErrNotFound {
			gone = append(gone, taskIDs[i])
			continue
		}
		if err != nil {
			return nil, err
		}
		out[taskIDs[i]] = r
	}
	for _, id := range gone {
		if err := s.rdb.ZRem(ctx, s.k.Index(s.k.Partition(id), owner), id).Err(); err != nil {
			return nil, fmt.Errorf("taskstore: drop expired task from index: %w", err)
		}
	}
	return out, nil
}

// Unindex drops a task from owner's index (its id now names another
// owner's task).
func (s *Store) Unindex(ctx context.Context, owner, taskID string) error {
	if err := s.rdb.ZRem(ctx, s.k.Index(s.k.Partition(taskID), owner), taskID).Err(); err != nil {
		return fmt.Errorf("taskstore: unindex task: %w", err)
	}
	return nil
}
