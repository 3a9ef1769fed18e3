// Package zindex lists Redis sorted-set indexes newest first, after a
// cursor, merged across several sets (one per partition): the paging of
// the task list and of the delivery listings. It names no key: callers
// pass them.
package zindex

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Entry is one member of an index in listing order: highest score (the
// newest) first, then by member. TaskID holds the member (a task id, or a
// notification id in the delivery listings).
type Entry struct {
	TaskID string
	Score  int64
}

// after reports whether e comes after cursor c in listing order.
func (e Entry) after(c Entry) bool {
	return e.Score < c.Score || (e.Score == c.Score && e.TaskID < c.TaskID)
}

// Scan returns up to limit entries that come after cursor (nil: from the
// newest) in the sets keys, merged, newest first; a member in several sets
// with one score is listed once.
func Scan(ctx context.Context, rdb redis.UniversalClient, keys []string, cursor *Entry, limit int) ([]Entry, error) {
	var all []Entry
	for _, k := range keys {
		part, err := scanOne(ctx, rdb, k, cursor, limit)
		if err != nil {
			return nil, err
		}
		all = append(all, part...)
	}
	slices.SortFunc(all, compare)
	all = slices.Compact(all)
	return all[:min(limit, len(all))], nil
}

// scanOne reads up to limit entries after cursor from one set.
func scanOne(ctx context.Context, rdb redis.UniversalClient, key string, cursor *Entry, limit int) ([]Entry, error) {
	max := "+inf"
	if cursor != nil {
		max = strconv.FormatInt(cursor.Score, 10)
	}
	var out []Entry
	for offset := int64(0); len(out) < limit; {
		zs, err := rdb.ZRevRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{
			Max: max, Min: "-inf", Offset: offset, Count: int64(limit),
		}).Result()
		if err != nil {
			return nil, fmt.Errorf("zindex: scan %s: %w", key, err)
		}
		for _, z := range zs {
			e := Entry{TaskID: z.Member.(string), Score: int64(math.Round(z.Score))}
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

// Merge returns up to limit of the entries of both lists that come after
// cursor, newest first, each once.
func Merge(a, b []Entry, cursor *Entry, limit int) []Entry {
	all := slices.Concat(a, b)
	if cursor != nil {
		all = slices.DeleteFunc(all, func(e Entry) bool { return !e.after(*cursor) })
	}
	slices.SortFunc(all, compare)
	all = slices.Compact(all)
	return all[:min(limit, len(all))]
}

// compare orders entries newest first.
func compare(a, b Entry) int {
	switch {
	case a == b:
		return 0
	case a.after(b):
		return 1
	}
	return -1
}
