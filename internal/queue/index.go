package queue

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// IndexEntry is one task in listing order: newest update first.
type IndexEntry struct {
	TaskID string
	Score  int64
}

// after reports whether e comes after cursor c in listing order.
func (e IndexEntry) after(c IndexEntry) bool {
	return e.Score < c.Score || (e.Score == c.Score && e.TaskID < c.TaskID)
}

// ScanIndex returns up to limit of owner's tasks that come after cursor
// (nil: from the newest), newest first, merged across all partitions.
func (s *Store) ScanIndex(ctx context.Context, owner string, cursor *IndexEntry, limit int) ([]IndexEntry, error) {
	var all []IndexEntry
	for p := 0; p < s.k.partitions; p++ {
		part, err := s.scanPartition(ctx, s.k.index(p, owner), cursor, limit)
		if err != nil {
			return nil, err
		}
		all = append(all, part...)
	}
	slices.SortFunc(all, compareEntries)
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// scanPartition reads up to limit entries after cursor from one index.
func (s *Store) scanPartition(ctx context.Context, key string, cursor *IndexEntry, limit int) ([]IndexEntry, error) {
	max := "+inf"
	if cursor != nil {
		max = strconv.FormatInt(cursor.Score, 10)
	}
	var out []IndexEntry
	for offset := int64(0); len(out) < limit; {
		zs, err := s.rdb.ZRevRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{
			Max: max, Min: "-inf", Offset: offset, Count: int64(limit),
		}).Result()
		if err != nil {
			return nil, fmt.Errorf("queue: scan index: %w", err)
		}
		for _, z := range zs {
			e := IndexEntry{TaskID: z.Member.(string), Score: int64(math.Round(z.Score))}
			if cursor == nil || e.after(*cursor) {
				out = append(out, e)
			}
		}
		if len(zs) < limit {
			break
		}
		offset += int64(len(zs))
	}
	return out, nil
}

// IndexSize returns the number of owner's indexed tasks, across all partitions.
func (s *Store) IndexSize(ctx context.Context, owner string) (int64, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, s.k.partitions)
	for p := range cmds {
		cmds[p] = pipe.ZCard(ctx, s.k.index(p, owner))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("queue: index size: %w", err)
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
		cmds[i] = pipe.HGetAll(ctx, s.k.task(id).hash)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("queue: load tasks: %w", err)
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
		if err := s.rdb.ZRem(ctx, s.k.index(s.k.partition(id), owner), id).Err(); err != nil {
			return nil, fmt.Errorf("queue: drop expired task from index: %w", err)
		}
	}
	return out, nil
}

// Unindex drops a task from owner's index (its id now names another
// owner's task).
func (s *Store) Unindex(ctx context.Context, owner, taskID string) error {
	if err := s.rdb.ZRem(ctx, s.k.index(s.k.partition(taskID), owner), taskID).Err(); err != nil {
		return fmt.Errorf("queue: unindex task: %w", err)
	}
	return nil
}

// compareEntries orders entries newest first.
func compareEntries(a, b IndexEntry) int {
	switch {
	case a == b:
		return 0
	case a.after(b):
		return 1
	}
	return -1
}
