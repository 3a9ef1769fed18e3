package outbox

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/taskstore"
)

// A commit copies a small event into the outbox entry of its first config,
// so that the owner loads it, for every config of the event, without
// reading the task's stream: a command fewer per notification. A larger
// event is read from the stream, as is one whose carrying entry is not
// among those loaded. Either way the owner gets the event and the version
// the stream holds.
func TestOwnerReadsNoEventItsEntryCarries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixtureWith(t, 0, storeConfig{Outbox: true}) // the task, at version 1, with config c1
	if err := s.SetPushConfig(ctx, "", "run", "c2", []byte(`{"url":"http://127.0.0.1/hook2"}`), "", 16); err != nil {
		t.Fatal(err)
	}
	small := []byte(`{"kind":"status-update","n":1}`)
	large := []byte(`{"kind":"artifact-update","text":"` + strings.Repeat("x", taskstore.OutboxInlineMax) + `"}`)
	ids, err := s.Commit(ctx, taskstore.Commit{TaskID: "run", Version: 1, Snapshot: []byte(`{}`), UpdatedAt: time.Now(),
		Events: [][]byte{small, large}, Deliver: []bool{true, true}})
	if err != nil {
		t.Fatal(err)
	}
	es, err := s.ReadOutbox(ctx, 0, "0-0", 100, 0)
	if err != nil || len(es) != 4 {
		t.Fatalf("outbox holds %d entries (%v), want 2 events × 2 configs", len(es), err)
	}
	carriers := 0
	for _, e := range es {
		if e.Event != nil {
			carriers++
			if e.EventID != ids[0] || !bytes.Equal(e.Event, small) || e.Version != 2 {
				t.Fatalf("entry %+v carries the wrong event", e)
			}
		}
	}
	if carriers != 1 {
		t.Fatalf("%d entries carry an event, want 1 (the small event's first config)", carriers)
	}

	load := func(es []OutboxEntry) (xranges int) {
		t.Helper()
		log := &commandLog{}
		s.rdb.AddHook(log)
		got, _, err := s.LoadOutbox(ctx, 0, es, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range es {
			want := map[string][]byte{ids[0]: small, ids[1]: large}[e.EventID]
			if !bytes.Equal(got[i].Head.Event, want) || got[i].Head.Version != 2 {
				t.Fatalf("entry %d loaded event %.40q version %d, want %.40q version 2", i, got[i].Head.Event, got[i].Head.Version, want)
			}
		}
		for _, c := range log.take() {
			if c == "xrange" {
				xranges++
			}
		}
		return xranges
	}
	if n := load(es[:2]); n != 0 {
		t.Fatalf("loading the small event's two entries read the stream %d times, want none", n)
	}
	if n := load(es[2:]); n != 1 {
		t.Fatalf("loading the large event's two entries read the stream %d times, want once", n)
	}
	if n := load(es[1:2]); n != 1 {
		t.Fatalf("loading the second config's entry alone read the stream %d times, want once", n)
	}
}
