package outbox

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// An event is stored once: its stream entry holds the event and its task
// version, never the task, and each lane holds a reference to the entry.
func TestEventStoredOnceLanesReferToIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t, 1)
	snap := strings.Repeat("s", 4096)
	ids, err := s.Commit(ctx, taskstore.Commit{TaskID: "once", Snapshot: []byte(snap), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte(`{"e":1}`)}, Deliver: []bool{true},
		PushConfigs: map[string][]byte{"a": []byte(`{}`), "b": []byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.rdb.XRange(ctx, s.EventsKey("once"), "-", "+").Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("event stream %v, %v", entries, err)
	}
	if v := entries[0].Values; len(v) != 3 || v["e"] != `{"e":1}` || v["v"] != "1" || (v["d"] != "a\nb" && v["d"] != "b\na") {
		t.Fatalf("stream entry %v: want the event, its version and the configs it was queued for alone", v)
	}
	for _, c := range []string{"a", "b"} {
		lane, err := s.rdb.LRange(ctx, s.k.Lane("once", c), 0, -1).Result()
		if err != nil || len(lane) != 1 || lane[0] != ids[0]+" "+s.notificationIDFor("once", ids[0], c) {
			t.Fatalf("lane %s = %q, %v: want one reference", c, lane, err)
		}
	}
}

// notificationIDFor is the id commit.lua gives the notification of event
// id to config c of task.
func (s *fixture) notificationIDFor(task, id, c string) string {
	lane, _ := s.rdb.LIndex(context.Background(), s.k.Lane(task, c), 0).Result()
	_, nid, _ := strings.Cut(lane, " ")
	return nid
}

// commitN commits events one at a time (a snapshot "v<version>" and an
// event "e<version>" each), delivered to the task's configs.
func commitN(t *testing.T, s *fixture, task string, from, n int, configs map[string][]byte) []string {
	t.Helper()
	var ids []string
	for v := from; v < from+n; v++ {
		c := taskstore.Commit{TaskID: task, Version: int64(v - 1), Snapshot: []byte("v" + strconv.Itoa(v)), UpdatedAt: time.Now(),
			Events: [][]byte{[]byte("e" + strconv.Itoa(v))}, Deliver: []bool{true}}
		if v == 1 {
			c.PushConfigs = configs
		}
		got, err := s.Commit(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

// fakeFold folds the test's stored values: snapshots "v<n>", events "e<n>".
func fakeFold(at taskstore.TaskAt) ([]byte, error) {
	if at.Snapshot != nil {
		return at.Snapshot, nil
	}
	if len(at.Events) == 0 {
		if at.Base == nil {
			return nil, fmt.Errorf("%w: nothing to fold", taskstore.ErrNoOrigin)
		}
		return at.Base, nil
	}
	last := string(at.Events[len(at.Events)-1])
	if at.Base == nil && string(at.Events[0]) != "e1" {
		return nil, fmt.Errorf("%w: no creation and no base: %q", taskstore.ErrNoOrigin, at.Events[0])
	}
	return []byte("v" + strings.TrimPrefix(last, "e")), nil
}

// compact runs the compaction of task's stream, as the compactor does.
func compact(t *testing.T, s *fixture, task string) bool {
	t.Helper()
	cut, err := s.Compact(context.Background(), task, time.Now(), fakeFold)
	if err != nil {
		t.Fatal(err)
	}
	return cut
}

// A stream a quarter over its length is listed for compaction, which cuts
// it back to its length and keeps, as the checkpoint, the task as it was
// before its first entry: every entry left folds exactly.
func TestCompactionKeepsWindowAndCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 40})
	ids := commitN(t, s, "long", 1, 200, nil)
	listed, err := s.candidates(ctx, 0, 10, time.Now())
	if err != nil || len(listed) != 1 || listed[0] != "long" {
		t.Fatalf("listed for compaction %v, %v", listed, err)
	}
	if !compact(t, s, "long") {
		t.Fatal("nothing cut")
	}
	n, err := rdb.XLen(ctx, s.EventsKey("long")).Result()
	if err != nil || n != 40 {
		t.Fatalf("stream length %d, %v: want 40", n, err)
	}
	base, err := rdb.HGetAll(ctx, s.k.Task("long").Base).Result()
	if err != nil || base["snap"] != "v160" || base["ver"] != "160" || base["id"] != ids[159] {
		t.Fatalf("checkpoint %v, %v: want the task after version 160", base, err)
	}
	if listed, _ := s.candidates(ctx, 0, 10, time.Now()); len(listed) != 0 {
		t.Fatalf("still listed after compaction: %v", listed)
	}
	// Every version left folds from the checkpoint.
	for _, v := range []int{161, 170, 199} {
		at, err := s.TaskAt(ctx, "long", ids[v-1], int64(v))
		if err != nil || string(at.Base) != "v160" || len(at.Events) != v-160 || string(at.Events[len(at.Events)-1]) != "e"+strconv.Itoa(v) {
			t.Fatalf("TaskAt(%d) = base %q, %d events, %v", v, at.Base, len(at.Events), err)
		}
	}
	if at, err := s.TaskAt(ctx, "long", ids[199], 200); err != nil || string(at.Snapshot) != "v200" {
		t.Fatalf("TaskAt(current) = %q, %v", at.Snapshot, err)
	}
	if _, err := s.TaskAt(ctx, "long", ids[100], 101); err != taskstore.ErrNotFound {
		t.Fatalf("TaskAt of a cut event: %v, want ErrNotFound", err)
	}
}

// Compaction never cuts an entry a lane still refers to.
func TestCompactionKeepsWhatALaneRefersTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 20})
	ids := commitN(t, s, "behind", 1, 40, nil)
	if err := s.SetPushConfig(ctx, "", "behind", "slow", []byte(`{}`), "", 16); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, commitN(t, s, "behind", 41, 100, nil)...) // the lane never moves
	compact(t, s, "behind")
	first, err := rdb.XRangeN(ctx, s.EventsKey("behind"), "-", "+", 1).Result()
	if err != nil || len(first) != 1 || first[0].ID != ids[40] {
		t.Fatalf("stream starts at %v, %v; want the lane's oldest entry %s", first, err, ids[40])
	}
	if bver, _ := rdb.HGet(ctx, s.k.Task("behind").Base, "ver").Int(); bver != 40 {
		t.Fatalf("checkpoint at version %d, want 40 (the last version before the lane's)", bver)
	}
	for _, v := range []int{41, 97} {
		at, err := s.TaskAt(ctx, "behind", ids[v-1], int64(v))
		if err != nil || string(at.Base) != "v40" || string(at.Events[len(at.Events)-1]) != "e"+strconv.Itoa(v) {
			t.Fatalf("TaskAt(%d) = %+v, %v", v, at, err)
		}
	}
}

// A commit of several events makes one version: its fold includes all of
// them, whichever of them is asked for.
func TestTaskAtTakesTheWholeVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t, 1)
	ids := commitN(t, s, "multi", 1, 1, nil)
	more, err := s.Commit(ctx, taskstore.Commit{TaskID: "multi", Version: 1, Snapshot: []byte("v2"), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte("e2a"), []byte("e2b"), []byte("e2c")}})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, more...)
	commitN(t, s, "multi", 3, 1, nil)
	at, err := s.TaskAt(ctx, "multi", ids[1], 2)
	if got := fmt.Sprintf("%q", at.Events); err != nil || at.Base != nil || got != `["e1" "e2a" "e2b" "e2c"]` {
		t.Fatalf("TaskAt(2) = base %q, events %s, %v", at.Base, got, err)
	}
	if _, err := s.TaskAt(ctx, "gone", ids[0], 1); err != taskstore.ErrNotFound {
		t.Fatalf("TaskAt of a missing task: %v, want ErrNotFound", err)
	}
}

//go:embed testdata/commit_v1.lua
var commitV1Lua string

// commitArgsV1 lays out c as the previous relay's commit script
// (commit_v1.lua) takes it: positional, with counts of fields and configs.
func commitArgsV1(s *fixture, c taskstore.Commit, commitID string) []any {
	args := []any{c.Version, c.Snapshot, c.UpdatedAt.UnixMilli(), c.TaskID, s.maxLen, c.ExpireAfter.Milliseconds(), len(c.Fields)}
	for f, v := range c.Fields {
		args = append(args, f, v)
	}
	args = append(args, len(c.PushConfigs))
	for id, v := range c.PushConfigs {
		args = append(args, id, v)
	}
	p := s.k.Partition(c.TaskID)
	flags := make([]byte, len(c.Events)) // "1" for each event delivered, "0" for the others
	for i := range flags {
		flags[i] = '0'
		if i < len(c.Deliver) && c.Deliver[i] {
			flags[i] = '1'
		}
	}
	args = append(args, string(flags), s.k.Tag(p), p, s.keep.Milliseconds(), commitID)
	for _, e := range c.Events {
		args = append(args, e)
	}
	return args
}

// commitV1 commits versions 1 to n of task as the previous relay did
// (commit_v1.lua: snapshot "v<n>", event "e<n>", delivered), with configs
// registered at the creation.
func commitV1(t *testing.T, s *fixture, task string, n int, configs map[string][]byte) {
	t.Helper()
	old := redis.NewScript(commitV1Lua)
	tk := s.k.Task(task)
	keys := []string{tk.Hash, tk.Events, s.k.Index(s.k.Partition(task), ""), tk.Push}
	for v := 1; v <= n; v++ {
		c := taskstore.Commit{TaskID: task, Version: int64(v - 1), Snapshot: []byte("v" + strconv.Itoa(v)), UpdatedAt: time.Now(),
			Events: [][]byte{[]byte("e" + strconv.Itoa(v))}, Deliver: []bool{true}}
		if v == 1 {
			c.PushConfigs = configs
		}
		if err := old.Run(context.Background(), s.rdb, keys, commitArgsV1(s, c, "old-"+task+"-"+strconv.Itoa(v))...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A Redis written by the previous relay (lanes and stream entries holding
// copies of event and task) is served by this one: its heads come with
// their copies, finish pops them, and the task after such an event is the
// copy.
func TestPreviousLayoutIsDelivered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixture(t, 0)
	old := redis.NewScript(commitV1Lua)
	c := taskstore.Commit{TaskID: "legacy", Snapshot: []byte(`{"old":1}`), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}, Deliver: []bool{true, true},
		PushConfigs: map[string][]byte{"c1": []byte(`{"url":"x"}`)}}
	tk := s.k.Task("legacy")
	keys := []string{tk.Hash, tk.Events, s.k.Index(0, ""), tk.Push}
	raw, err := old.Run(ctx, s.rdb, keys, commitArgsV1(s, c, "legacy-commit")...).StringSlice()
	if err != nil || len(raw) != 2 {
		t.Fatalf("previous commit script: %v, %v", raw, err)
	}
	// Then a commit of this relay adds a new-style head behind them.
	newer, err := s.Commit(ctx, taskstore.Commit{TaskID: "legacy", Version: 1, Snapshot: []byte(`{"new":2}`), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte(`{"n":3}`)}, Deliver: []bool{true}})
	if err != nil {
		t.Fatal(err)
	}
	tok := readOne(t, s, "w1")
	h, st, err := s.Begin(ctx, tok, "w1", time.Minute)
	if err != nil || st != Go || h.EventID != raw[0] || string(h.Event) != `{"n":1}` || string(h.Snapshot) != `{"old":1}` {
		t.Fatalf("legacy head %+v, %d, %v", h, st, err)
	}
	at, err := s.TaskAt(ctx, "legacy", raw[1], 1)
	if err != nil || string(at.Snapshot) != `{"old":1}` {
		t.Fatalf("TaskAt of a legacy entry = %+v, %v", at, err)
	}
	want := []string{raw[1], newer[0]}
	for i := 0; ; i++ {
		done, err := s.FinishToken(ctx, tok, h, Finish{Outcome: Delivered, Now: time.Now(), First: time.Now(), Run: true,
			Lease: time.Minute, Consumer: "w1"})
		if err != nil || !done.Applied {
			t.Fatalf("finish %d: %+v, %v", i, done, err)
		}
		if !done.Run {
			if i != len(want) {
				t.Fatalf("the run ended after %d heads, want %d", i+1, len(want)+1)
			}
			break
		}
		if done.Next.EventID != want[i] {
			t.Fatalf("head %d is %s, want %s", i+2, done.Next.EventID, want[i])
		}
		h = done.Next
	}
	if string(h.Event) != `{"n":3}` || h.Snapshot != nil || h.Version != 2 {
		t.Fatalf("the new head %+v: want the event read from the stream, version 2", h)
	}
	if n, _ := s.rdb.LLen(ctx, s.k.Lane("legacy", "c1")).Result(); n != 0 {
		t.Fatalf("%d heads left in the lane", n)
	}
}

// A finished task's checkpoint expires with it.
func TestCheckpointExpiresWithTheTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10})
	commitN(t, s, "ends", 1, 40, nil)
	compact(t, s, "ends")
	if _, err := s.Commit(ctx, taskstore.Commit{TaskID: "ends", Version: 40, Snapshot: []byte("v41"), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte("e41")}, ExpireAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	tk := s.k.Task("ends")
	for _, k := range []string{tk.Hash, tk.Events, tk.Base} { // (it has no push configs)
		if ttl, err := rdb.PTTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
			t.Fatalf("%s: TTL %s, %v; want at most an hour", k, ttl, err)
		}
	}
}

// A stream that a lagging lane keeps from being cut is looked at again
// later, not every second.
func TestCompactionWaitsForALaggingLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := newFixture(rdb, storeConfig{Prefix: strings.TrimSuffix(prefix, ":"), Partitions: 1, EventsMaxLen: 10})
	commitN(t, s, "lag", 1, 40, map[string][]byte{"hook": []byte(`{}`)}) // the lane holds every entry
	now := time.Now()
	if cut, err := s.Compact(ctx, "lag", now, fakeFold); err != nil || cut {
		t.Fatalf("Compact = %v, %v; want nothing cut", cut, err)
	}
	if ids, _ := s.candidates(ctx, 0, 10, now.Add(time.Second)); len(ids) != 0 {
		t.Fatalf("listed again a second later: %v", ids)
	}
	if ids, _ := s.candidates(ctx, 0, 10, now.Add(compactRetry)); len(ids) != 1 {
		t.Fatalf("not listed again after %s: %v", compactRetry, ids)
	}
}
