package taskstore

import (
	"context"
	"encoding/json"
	"slices"
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
// their number, and the task hash keeps them as it always did (cids: a
// JSON array, or {} for none, as cjson writes an empty table).
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
		if err != nil || len(first) != len(events) {
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
		want := "{}"
		if len(first) > 0 {
			b, _ := json.Marshal(first)
			want = string(b)
		}
		if stored != want {
			t.Fatalf("%d events: cids = %s, want %s", len(events), stored, want)
		}
	}
}
