package taskstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Offer is a task's turn offered to a work queue, recorded by the commit
// that made the turn claimable (Commit.Offer), in the same atomic step: the
// offer itself goes to the work queue's stream, whose keys carry another
// hash tag than the task's, so no script can write both. The record lives
// in the task's partition (layout.Keys.Offers) until the offer is made
// (DropOffer); a relay that dies between the commit and the offer leaves
// it there, and the re-offer sweeper (ingest.Reofferer) makes it from
// DueOffers.
type Offer struct {
	Queue, TaskID, MessageID string
	// Turn numbers the turn: the task version of the commit that opened it
	// (set by the commit that records the offer, Commit.Version + 1), so a
	// later turn of the task has a higher number. The work queue tells a
	// duplicate offer from another turn by it (workqueue.Claims.Offer).
	// 0: unknown (a record written before turns were numbered).
	Turn int64
	// At is when the commit recorded it (set by DueOffers).
	At time.Time
}

// offerRecord is an Offer's stored form, the member of the partition's
// offers zset (format version 1; its score is the commit's ms). "n", the
// turn number, was added within version 1 and is absent from the records
// of earlier builds (their turn is unknown, 0): a reader that ignores it
// reads the record as before. One (queue, task, message, turn) is one
// member; every turn has a number of its own.
type offerRecord struct {
	V         int    `json:"v"`
	Queue     string `json:"q"`
	TaskID    string `json:"t"`
	MessageID string `json:"m"`
	Turn      int64  `json:"n,omitempty"`
}

// member is o's member of the offers zset.
func (o Offer) member() string {
	b, _ := json.Marshal(offerRecord{V: 1, Queue: o.Queue, TaskID: o.TaskID, MessageID: o.MessageID, Turn: o.Turn}) // (cannot fail)
	return string(b)
}

// errBadOffer: a member of an offers zset that is not a version 1 record.
var errBadOffer = errors.New("taskstore: malformed offer record")

func offerOf(member string, score float64) (Offer, error) {
	var r offerRecord
	if err := json.Unmarshal([]byte(member), &r); err != nil || r.V != 1 || r.Queue == "" || r.TaskID == "" || r.Turn < 0 {
		return Offer{}, fmt.Errorf("%w: %q", errBadOffer, member)
	}
	return Offer{Queue: r.Queue, TaskID: r.TaskID, MessageID: r.MessageID, Turn: r.Turn, At: time.UnixMilli(int64(score))}, nil
}

// DueOffers returns the recorded offers of every partition made at or
// before before, the oldest first, at most perPartition of each: one
// ZRANGE per partition, in one pipeline. A record that is not an offer
// (never written by relay) is removed.
func (s *Turns) DueOffers(ctx context.Context, before time.Time, perPartition int) ([]Offer, error) {
	cmds := make([]*redis.ZSliceCmd, s.k.Partitions())
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = p.ZRangeByScoreWithScores(ctx, s.k.Offers(i), &redis.ZRangeBy{Min: "-inf",
				Max: strconv.FormatInt(before.UnixMilli(), 10), Count: int64(perPartition)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("taskstore: read offers: %w", err)
	}
	var out []Offer
	for i, cmd := range cmds {
		for _, z := range cmd.Val() {
			member, _ := z.Member.(string)
			o, err := offerOf(member, z.Score)
			if err != nil {
				_ = s.rdb.ZRem(ctx, s.k.Offers(i), member).Err()
				continue
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// DropOffer removes o's record once the offer is in its work queue (o as
// the commit recorded it, with its Turn).
func (s *Turns) DropOffer(ctx context.Context, o Offer) error {
	var cmd *redis.IntCmd
	s.batch.Do(func(p redis.Pipeliner) { cmd = p.ZRem(ctx, s.k.Offers(s.k.Partition(o.TaskID)), o.member()) }) // (shares a round trip with other callers' commands)
	if err := cmd.Err(); err != nil {
		return fmt.Errorf("taskstore: drop offer: %w", err)
	}
	return nil
}

// offerDropLinger is how long the removal of an offer's record waits for
// others (DropOfferSoon), so that under load one ZREM per partition
// removes many: at 1,500 offers a second, 16 partitions, about 5 each.
// A relay that stops within it leaves those records to the Reofferer,
// which offers their turns again: duplicates, which the work queue drops.
const offerDropLinger = 50 * time.Millisecond

// offerDrops are the records DropOfferSoon was given and has not removed
// yet, per partition; pending is nil when no removal is scheduled.
type offerDrops struct {
	mu      sync.Mutex
	pending map[int][]any
	// linger is offerDropLinger (0), or a test's.
	linger time.Duration
}

// DropOfferSoon removes o's record, as DropOffer does, but within
// offerDropLinger and without waiting for it: in one ZREM with the other
// records of o's partition given meanwhile. A removal that fails leaves
// the records to the Reofferer (an offer made twice runs once).
func (s *Turns) DropOfferSoon(o Offer) {
	p := s.k.Partition(o.TaskID)
	s.drops.mu.Lock()
	defer s.drops.mu.Unlock()
	if s.drops.pending == nil {
		s.drops.pending = map[int][]any{}
		time.AfterFunc(cmp.Or(s.drops.linger, offerDropLinger), s.dropOffersNow)
	}
	s.drops.pending[p] = append(s.drops.pending[p], o.member())
}

// dropOffersNow removes the records DropOfferSoon gathered.
func (s *Turns) dropOffersNow() {
	s.drops.mu.Lock()
	pending := s.drops.pending
	s.drops.pending = nil
	s.drops.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.batch.Do(func(p redis.Pipeliner) { // (shares a round trip with other callers' commands)
		for part, members := range pending {
			p.ZRem(ctx, s.k.Offers(part), members...)
		}
	})
}
