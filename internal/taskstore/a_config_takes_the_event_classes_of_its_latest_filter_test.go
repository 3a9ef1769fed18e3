package taskstore

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// A commit makes notifications only for the configs that take its events'
// classes; a config's filter is the one it was last stored with (with the
// task, or set later), and a config stored again without one takes every
// event. A config deleted and stored again keeps no filter of its past.
func TestAConfigTakesTheEventClassesOfItsLatestFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	s.outbox = true
	v := int64(1)
	commit := func(class byte) []string {
		t.Helper()
		ids, err := s.Commit(ctx, Commit{TaskID: "t", Version: v, Snapshot: []byte("s"), UpdatedAt: time.Now(),
			Events: [][]byte{[]byte("e" + strconv.FormatInt(v, 10))}, Deliver: []bool{true}, Class: []byte{class}})
		if err != nil {
			t.Fatalf("commit at version %d: %v", v, err)
		}
		v++
		msgs, err := rdb.XRange(ctx, s.k.Outbox(s.k.Partition("t")), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var cfgs []string
		for _, m := range msgs {
			if m.Values["e"] == ids[0] {
				cfgs = append(cfgs, m.Values["c"].(string))
			}
		}
		slices.Sort(cfgs)
		return cfgs
	}
	want := func(class byte, cfgs ...string) {
		t.Helper()
		if got := commit(class); !slices.Equal(got, cfgs) {
			t.Fatalf("an event of class %q notified %v, want %v", class, got, cfgs)
		}
	}
	if _, err := s.Commit(ctx, Commit{TaskID: "t", Snapshot: []byte("s"), UpdatedAt: time.Now(), Events: [][]byte{[]byte("c")},
		Deliver: []bool{true}, Class: []byte{'o'}, PushConfigs: map[string][]byte{"all": []byte("{}"), "final": []byte("{}")},
		PushAccept: map[string]string{"final": "f"}}); err != nil {
		t.Fatal(err)
	}
	want('o', "all")
	want('f', "all", "final")
	want(0, "all") // an event without a class: only the configs without a filter
	if err := s.SetPushConfig(ctx, "", "t", "nochunks", []byte("{}"), "fo", 16); err != nil {
		t.Fatal(err)
	}
	want('c', "all")
	want('o', "all", "nochunks")
	if err := s.SetPushConfig(ctx, "", "t", "final", []byte("{}"), "", 16); err != nil { // stored again without a filter
		t.Fatal(err)
	}
	want('c', "all", "final")
	if err := s.ReplacePushConfig(ctx, "t", "nochunks", []byte(`{"resealed":1}`)); err != nil { // a rewrite keeps the filter
		t.Fatal(err)
	}
	want('c', "all", "final")
	if err := s.DeletePushConfig(ctx, "t", "nochunks"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPushConfig(ctx, "", "t", "other", []byte("{}"), "f", 16); err != nil {
		t.Fatal(err)
	}
	if pf, _ := rdb.HGet(ctx, s.k.Task("t").Hash, "pf").Result(); pf != `{"other":"f"}` {
		t.Fatalf("filters kept %s, want only the stored configs'", pf)
	}
	if err := s.SetPushConfig(ctx, "", "t", "nochunks", []byte("{}"), "", 16); err != nil {
		t.Fatal(err)
	}
	want('c', "all", "final", "nochunks")
	for _, bad := range []string{"F", "f!", "0"} {
		if err := s.SetPushConfig(ctx, "", "t", "bad", []byte("{}"), bad, 16); err == nil {
			t.Fatalf("accept string %q was taken", bad)
		}
	}
}
