package taskstore

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/redistest"
)

// commit.lua reads the config ids it keeps (pc) without decoding the JSON
// when it holds no escape, and writes the ids a replay returns (cids)
// without encoding it: config ids that JSON escapes, and ids that it does
// not (non-ASCII among them), reach every commit's notifications exactly.
func TestACommitReadsConfigIDsThatJSONEscapesOrNot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	s.outbox = true
	for task, ids := range map[string][]string{
		"plain":   {"a", "b-1", "é:x y"},
		"escaped": {"plain", `q"uote`, `back\slash`, "sl/ash", "tab\tid", "é"},
	} {
		pc := map[string][]byte{}
		for _, id := range ids {
			pc[id] = []byte(`{"url":"https://example.test/"}`)
		}
		if _, err := s.Commit(ctx, Commit{TaskID: task, Snapshot: []byte("s"), UpdatedAt: time.Now(), PushConfigs: pc}); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(ids))
		for v := int64(1); v <= 2; v++ {
			if got := notified(t, s, rdb, task, v); !slices.Equal(got, want) {
				t.Fatalf("task %s: the commit at version %d notified %q, want %q", task, v, got, want)
			}
		}
	}
}

// A commit sent again gets back the ids the first run made, whatever
// their number, and what it added to its owner's usage (the reply's last
// element), as the task hash keeps them (cids: a JSON array, as cjson
// writes it).
func TestACommitSentAgainGetsItsIDsBackWhateverTheirNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 2, Config{})
	for n, events := range [][][]byte{nil, {[]byte("1")}, {[]byte("1"), []byte("2"), []byte("3")}} {
		c := Commit{TaskID: "t" + string(rune('a'+n)), Snapshot: []byte(`{}`), Events: events, UpdatedAt: time.Now()}
		args, err := s.commitArgs(c, "commit-1", nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := s.commitKeys(c)
		first, err := commitScript.Run(ctx, rdb, keys, commitScript.Args(&args)...).StringSlice()
		if err != nil || len(first) != len(events)+1 {
			t.Fatalf("%d events: first run = %v, %v", len(events), first, err)
		}
		again, err := commitScript.Run(ctx, rdb, keys, commitScript.Args(&args)...).StringSlice()
		if err != nil || !slices.Equal(again, first) {
			t.Fatalf("%d events: replay = %v, %v; want the first run's %v", len(events), again, err, first)
		}
		stored, err := rdb.HGet(ctx, s.k.Task(c.TaskID).Hash, "cids").Result()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(first)
		if want := string(b); stored != want {
			t.Fatalf("%d events: cids = %s, want %s", len(events), stored, b)
		}
	}
}

// The numbers commit.lua hands Redis as strings it makes once are stored as
// Redis wrote them from Lua numbers: the version in the task hash, in the
// event's stream entry and in the outbox entry that carries the event, and
// field i of every outbox entry.
func TestACommitStoresItsNumbersAsBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	s.outbox = true
	pc := map[string][]byte{"a": []byte(`{"url":"https://a.test/"}`), "b": []byte(`{"url":"https://b.test/"}`)}
	if _, err := s.Commit(ctx, Commit{TaskID: "n", Snapshot: []byte("s"), UpdatedAt: time.Now(), PushConfigs: pc}); err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 11; v++ {
		notified(t, s, rdb, "n", v)
	}
	tk := s.k.Task("n")
	if ver, _ := rdb.HGet(ctx, tk.Hash, "ver").Result(); ver != "12" {
		t.Fatalf("ver = %q, want 12", ver)
	}
	last, err := rdb.XRevRangeN(ctx, tk.Events, "+", "-", 1).Result()
	if err != nil || len(last) != 1 || last[0].Values["v"] != "12" {
		t.Fatalf("the last event's entry = %v, %v; want v 12", last, err)
	}
	entries, err := rdb.XRange(ctx, s.k.Outbox(s.k.Partition("n")), "-", "+").Result()
	if err != nil || len(entries) != 22 {
		t.Fatalf("outbox: %d entries, %v; want 22", len(entries), err)
	}
	var carried, want []string
	for _, e := range entries {
		if e.Values["i"] != "s" {
			t.Fatalf("outbox entry %v: i is not s (named by its event's entry)", e.Values)
		}
		if _, ok := e.Values["b"]; ok {
			carried = append(carried, e.Values["v"].(string))
		}
	}
	for v := 2; v <= 12; v++ {
		want = append(want, strconv.Itoa(v))
	}
	if !slices.Equal(carried, want) {
		t.Fatalf("the outbox entries that carry their event have versions %v, want %v", carried, want)
	}
}
