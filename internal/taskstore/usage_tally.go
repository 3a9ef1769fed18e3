package taskstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/cadence"
)

// usageKey names one usage counter (layout.Keys.Usage).
type usageKey struct {
	part   int
	owner  string
	bucket int64
}

// usageTally sums what this relay's writes add to the usage counters
// (commit.lua and pushset.lua return it) until a flush sends the sums: one
// INCRBY per counter per flush, not one per commit (usage.go).
type usageTally struct {
	// flushing is held by the flush under way: one at a time.
	flushing sync.Mutex

	mu      sync.Mutex
	pending map[usageKey]int64
	// sending is what the flush under way sends (nil when none): Usage
	// still counts it until the flush is over.
	sending map[usageKey]int64
}

// add counts n more bytes in k.
func (t *usageTally) add(k usageKey, n int64) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[usageKey]int64{}
	}
	t.pending[k] += n
}

// held is what the tally holds for owner's counters of buckets in parts
// partitions and has not sent yet (or is sending).
func (t *usageTally) held(owner string, parts int, buckets []int64) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 && len(t.sending) == 0 {
		return 0
	}
	var n int64
	for p := range parts {
		for _, b := range buckets {
			k := usageKey{part: p, owner: owner, bucket: b}
			n += t.pending[k] + t.sending[k]
		}
	}
	return n
}

// tallyAdd adds to the tally the bytes a script returned (add, a decimal
// string) for owner's counter of task's partition and the bucket of at.
func (s *Store) tallyAdd(task, owner string, at time.Time, add string) {
	n, err := strconv.ParseInt(add, 10, 64)
	if err != nil || n == 0 {
		return // (the scripts write it with %d: it parses)
	}
	s.tally.add(usageKey{part: s.k.Partition(task), owner: owner, bucket: s.usage.bucket(at)}, n)
}

// FlushUsage sends what the usage tally holds, in one pipeline: per
// counter, INCRBY by its sum and PEXPIRE NX (the expiry of a counter
// the INCRBY made; a counter keeps the expiry its maker gave it). The sums
// that could not be sent are kept for the next flush, unless their bucket
// is no longer read (usageClock.live) or the tally already holds
// usageTallyMax counters.
func (s *Store) FlushUsage(ctx context.Context) error {
	t := &s.tally
	t.flushing.Lock()
	defer t.flushing.Unlock()
	t.mu.Lock()
	send := t.pending
	t.pending, t.sending = nil, send
	t.mu.Unlock()
	if len(send) == 0 {
		return nil
	}
	oldest := s.usage.live(time.Now())[0]
	keys := make([]usageKey, 0, len(send))
	incrs := make([]*redis.IntCmd, 0, len(send))
	ttl := strconv.FormatInt(s.usage.ttl().Milliseconds(), 10)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, n := range send {
			if k.bucket < oldest {
				continue // no longer read: gone
			}
			key := s.k.Usage(k.part, k.owner, k.bucket)
			keys = append(keys, k)
			incrs = append(incrs, p.IncrBy(ctx, key, n))
			p.Do(ctx, "pexpire", key, ttl, "nx")
		}
		return nil
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sending = nil
	if err == nil {
		return nil
	}
	for i, c := range incrs {
		if c.Err() == nil {
			continue
		}
		k := keys[i]
		if _, ok := t.pending[k]; !ok && len(t.pending) >= usageTallyMax {
			continue // dropped: the count errs low
		}
		if t.pending == nil {
			t.pending = map[usageKey]int64{}
		}
		t.pending[k] += send[k]
	}
	return fmt.Errorf("taskstore: flush usage: %w", err)
}

// usageFlushTimeout bounds one flush of RunUsage (and so how long a
// stopping relay waits for the flush under way).
const usageFlushTimeout = 5 * time.Second

// RunUsage sends the usage tally every usageFlushEvery, on the process's
// grid (internal/cadence), until ctx ends; Close sends what is left.
func (s *Store) RunUsage(ctx context.Context) {
	t := time.NewTimer(cadence.Until(time.Now(), usageFlushEvery))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(cadence.Until(time.Now(), usageFlushEvery))
			// A flush under way is not cut short when ctx ends: cut after
			// its INCRBYs were sent, it would keep sums Redis already
			// added, and Close would send them again.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), usageFlushTimeout)
			_ = s.FlushUsage(fctx) // (a failed flush keeps its sums for the next)
			cancel()
		}
	}
}

// Close sends what the usage tally holds: the store's last write, made
// once nothing commits any more (after RunUsage ended).
func (s *Store) Close(ctx context.Context) error {
	return s.FlushUsage(ctx)
}
