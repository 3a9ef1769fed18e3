package outbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// Compaction keeps every event a notification waiting in the outbox may
// refer to (a lagging owner, a failover), as it keeps those lanes refer
// to: none of them loads without its event. Once the owner's offset has
// moved past them (the outbox trimmed to it), the stream is cut.
func TestCompactionSparesEventsWaitingInTheOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10, Outbox: true})
	commitN(t, s, "busy", 1, 40, map[string][]byte{"c1": []byte(`{"url":"http://127.0.0.1/hook"}`)})
	es, err := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
	if err != nil || len(es) != 40 {
		t.Fatalf("outbox %d entries, %v", len(es), err)
	}
	if compact(t, s, "busy") {
		t.Fatal("compaction cut events that notifications in the outbox refer to")
	}
	loaded, _, err := s.LoadOutbox(ctx, 0, es, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range loaded {
		if l.Head.Event == nil {
			t.Fatalf("notification %d loads without its event", i)
		}
	}
	// Delivered: the owner stores the offset at the last entry.
	if _, ok, _ := s.Own(ctx, 0, "a", time.Minute); !ok {
		t.Fatal("cannot own the partition")
	}
	if ok, _ := s.KeepOwning(ctx, 0, "a", time.Minute, es[len(es)-1].ID, false); !ok {
		t.Fatal("cannot store the offset")
	}
	if n := s.rdb.XLen(ctx, s.k.Outbox(0)).Val(); n != 1 {
		t.Fatalf("outbox holds %d entries, want the offset's", n)
	}
	if !compact(t, s, "busy") {
		t.Fatal("compaction still held back after the outbox moved on")
	}
}
