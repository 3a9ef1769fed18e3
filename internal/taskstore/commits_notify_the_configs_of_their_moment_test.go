package taskstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// notified commits one delivered event to task at version v and returns
// the configs whose outbox entries the commit made, sorted.
func notified(t *testing.T, s *Store, rdb redis.UniversalClient, task string, v int64) []string {
	t.Helper()
	ctx := context.Background()
	ids, err := s.Commit(ctx, Commit{TaskID: task, Version: v, Snapshot: []byte("s"), UpdatedAt: time.Now(),
		Events: [][]byte{[]byte("e" + strconv.FormatInt(v, 10))}, Deliver: []bool{true}})
	if err != nil {
		t.Fatalf("commit at version %d: %v", v, err)
	}
	msgs, err := rdb.XRange(ctx, s.k.Outbox(s.k.Partition(task)), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []string
	for _, m := range msgs {
		if m.Values["t"] == task && m.Values["e"] == ids[0] {
			cfgs = append(cfgs, m.Values["c"].(string))
		}
	}
	slices.Sort(cfgs)
	return cfgs
}

// A commit knows its task's push configs from the task hash it reads
// anyway (no HKEYS), and every change of the configs between two commits
// (one set, one deleted, a task stored by a previous relay that kept no
// list) reaches the next commit.
func TestCommitsNotifyTheConfigsOfTheirMoment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	s.outbox = true
	cfg := func(u string) []byte { return []byte(`{"url":"` + u + `"}`) }
	if _, err := s.Commit(ctx, Commit{TaskID: "t", Snapshot: []byte("s"), UpdatedAt: time.Now(), Events: [][]byte{[]byte("c")},
		Deliver: []bool{true}, PushConfigs: map[string][]byte{"a": cfg("a")}}); err != nil {
		t.Fatal(err)
	}
	want := func(v int64, cfgs ...string) {
		t.Helper()
		if got := notified(t, s, rdb, "t", v); !slices.Equal(got, cfgs) {
			t.Fatalf("the commit at version %d notified %v, want %v", v, got, cfgs)
		}
	}
	want(1, "a")
	if err := s.SetPushConfig(ctx, "", "t", "b", cfg("b"), "", 8); err != nil {
		t.Fatal(err)
	}
	want(2, "a", "b")
	if err := s.ReplacePushConfig(ctx, "t", "b", cfg("b2")); err != nil {
		t.Fatal(err)
	}
	want(3, "a", "b")
	if err := s.DeletePushConfig(ctx, "t", "a"); err != nil {
		t.Fatal(err)
	}
	want(4, "b")
	// A task a previous relay stored has no list: the commit reads the
	// configs, and keeps the list from then on.
	if err := rdb.HSet(ctx, s.k.Task("t").Push, "c", cfg("c")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HDel(ctx, s.k.Task("t").Hash, "pc").Err(); err != nil {
		t.Fatal(err)
	}
	want(5, "b", "c")
	want(6, "b", "c")
	if r, err := s.Load(ctx, "t"); err != nil || len(r.Fields) != 0 {
		t.Fatalf("Load = %+v, %v: the list is no field of the task's", r, err)
	}
}

// The commits of a task read no HKEYS, its creation included: a command
// fewer per commit (INFO commandstats counts the commands scripts run).
func TestCommitsReadNoPushConfigHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client()
	s := must(New(Deps{RDB: rdb, Keys: layout.New("p", 4), Batch: groupcommit.New(rdb)}, Config{Outbox: true}))
	if _, err := s.Commit(ctx, Commit{TaskID: "t", Snapshot: []byte("s"), UpdatedAt: time.Now(), Events: [][]byte{[]byte("c")},
		Deliver: []bool{true}, PushConfigs: map[string][]byte{"a": []byte("x"), "b": []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 3; v++ {
		if got := notified(t, s, rdb, "t", v); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("the commit at version %d notified %v", v, got)
		}
	}
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(info, "cmdstat_hkeys:") {
		t.Fatalf("the commits ran HKEYS:\n%s", info)
	}
	if !strings.Contains(info, "cmdstat_hmget:") {
		t.Fatalf("no HMGET counted: is this INFO of the store's Redis?\n%s", info)
	}
}
