package taskstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// The records of offers made together (DropOfferSoon within its linger)
// are removed at the linger's end by one ZREM per partition, not one per
// record: twelve offers of tasks in two partitions take two ZREMs (INFO
// commandstats of a Redis of the test's own), and no record is left.
func TestOffersDroppedTogetherTakeOneZremPerPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s := must(New(Deps{RDB: rdb, Keys: layout.New("p", 2), Batch: groupcommit.New(rdb)}, Config{}))
	turns := must(NewTurns(partsOf(s)))
	var made []Offer
	for i := range 12 {
		id := fmt.Sprintf("task-%d", i)
		o := &Offer{Queue: "jobs", MessageID: "m1"}
		if _, err := s.Commit(ctx, Commit{TaskID: id, Snapshot: []byte(`{}`), Events: [][]byte{[]byte(`{}`)}, UpdatedAt: t0, Offer: o}); err != nil {
			t.Fatal(err)
		}
		made = append(made, Offer{Queue: "jobs", TaskID: id, MessageID: "m1", Turn: 1})
	}
	parts := map[int]bool{}
	for _, o := range made {
		parts[s.k.Partition(o.TaskID)] = true
	}
	if len(parts) != 2 {
		t.Fatalf("the tasks fall in %d partitions, want both", len(parts))
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	turns.drops.linger = time.Hour // (the test ends the linger itself, below)
	for _, o := range made {
		turns.DropOfferSoon(o)
	}
	if n := rdb.ZCard(ctx, s.k.Offers(0)).Val() + rdb.ZCard(ctx, s.k.Offers(1)).Val(); n != 12 {
		t.Fatalf("%d offer records before the linger ended, want 12", n)
	}
	turns.dropOffersNow() // (what the linger's timer does)
	if n := rdb.ZCard(ctx, s.k.Offers(0)).Val() + rdb.ZCard(ctx, s.k.Offers(1)).Val(); n != 0 {
		t.Fatalf("%d offer records left", n)
	}
	zrems := redistest.CommandCalls(t, rdb)["zrem"]
	if zrems != 2 {
		t.Fatalf("%d ZREMs removed 12 records of 2 partitions, want 2", zrems)
	}
}
