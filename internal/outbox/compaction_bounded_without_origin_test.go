package outbox

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// A long task the previous relay (commit_v1.lua) wrote without push
// configs has no entry carrying its task ('s'), and MAXLEN ~ cut its
// creation: no fold can rebuild any of its past versions (fakeFold, like
// a2a.FoldStored, fails with no origin). commit.lua no longer trims, so
// after the upgrade only the compactor can bound the stream; it must
// still do so (those versions were not renderable before the cut either),
// not fail on every pass while the stream grows with every commit.
func TestLegacyStreamWithoutOriginIsStillBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10})
	tk := s.k.Task("nohook")
	commitV1(t, s, "nohook", 300, nil)
	var lastErr error
	for v := 301; v <= 700; v += 10 {
		commitN(t, s, "nohook", v, 10, nil)
		ids, err := s.candidates(ctx, 0, 64, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids { // what Compactor.RunOnce does every second
			if _, err := s.Compact(ctx, id, time.Now(), fakeFold); err != nil {
				lastErr = err
			}
		}
	}
	n, _ := rdb.XLen(ctx, tk.Events).Result()
	if bound := int64(s.compactAt() + 16); n > bound {
		t.Fatalf("stream of %d entries (max length 10, compacted over %d) after 400 versions; the compactor: %v",
			n, s.compactAt(), lastErr)
	}
}

// A task whose compaction fails (here a fold that cannot rebuild it; in
// production a legacy stream without origin, a stored event that no
// longer decodes, ...) keeps its listing score, so it is listed first at
// every pass. 64 of them in a partition take every pass of the compactor
// (CompactCandidates(p, 64)), and no other stream of the partition is
// ever compacted.
func TestFailingCompactionsDoNotStarveThePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 20})
	for i := range 64 {
		commitN(t, s, "bad"+strconv.Itoa(i), 1, 40, nil)
	}
	commitN(t, s, "good", 1, 40, nil)
	errFold := errors.New("cannot fold")
	for pass := range 5 { // five seconds of Compactor.RunOnce
		now := time.Now().Add(time.Duration(pass) * time.Second)
		ids, err := s.candidates(ctx, 0, 64, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			f := fakeFold
			if strings.HasPrefix(id, "bad") {
				f = func(taskstore.TaskAt) ([]byte, error) { return nil, errFold }
			}
			_, _ = s.Compact(ctx, id, now, f)
		}
	}
	if n, _ := rdb.XLen(ctx, s.EventsKey("good")).Result(); n > 20 {
		t.Fatalf("stream of task good still %d entries after 5 passes: 64 failing tasks are listed first at every pass", n)
	}
}
