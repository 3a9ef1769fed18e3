package taskstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// newStore returns a Store on the test's own key prefix of the shared Redis.
func newStore(t *testing.T, partitions int) (*Store, redis.UniversalClient, string) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	prefix = strings.TrimSuffix(prefix, ":") // the store adds its own ":"
	return storeOn(rdb, prefix, partitions, Config{}), rdb, prefix
}

// storeOn returns a Store with prefix and partitions on rdb.
func storeOn(rdb redis.UniversalClient, prefix string, partitions int, cfg Config) *Store {
	return must(New(Deps{RDB: rdb, Keys: layout.New(prefix, partitions), Batch: groupcommit.New(rdb)}, cfg))
}

// urlIndexOn returns a URL index with prefix and partitions on rdb.
func urlIndexOn(rdb redis.UniversalClient, prefix string, partitions int, cfg URLIndexConfig) *URLIndex {
	return must(NewURLIndex(Deps{RDB: rdb, Keys: layout.New(prefix, partitions), Batch: groupcommit.New(rdb)}, cfg))
}

// partsOf are the dependencies of the parts beside s: s's own, as the app
// passes them.
func partsOf(s *Store) Deps { return Deps{RDB: s.rdb, Keys: s.k, Batch: s.batch} }

// must is v, for a constructor's arguments the test knows are valid.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func create(t *testing.T, s *Store, id string, at time.Time) {
	t.Helper()
	if _, err := s.Commit(context.Background(), Commit{TaskID: id, Snapshot: []byte("snap-" + id),
		Events: [][]byte{[]byte("created")}, UpdatedAt: at}); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

func TestCommitVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	tk := s.k.Task("task-1")

	if _, err := s.Load(ctx, "task-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load of a missing task: %v", err)
	}
	ids, err := s.Commit(ctx, Commit{TaskID: "task-1", Version: 0, Snapshot: []byte(`{"v":1}`),
		Events: [][]byte{[]byte("e1"), []byte("e2"), []byte("e3")}, UpdatedAt: t0,
		Fields: map[string]string{"dialect": "0.3", "context": "ctx-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("ids = %v, want 3", ids)
	}
	r, err := s.Load(ctx, "task-1")
	if err != nil || r.Version != 1 || string(r.Snapshot) != `{"v":1}` ||
		r.Fields["dialect"] != "0.3" || r.Fields["context"] != "ctx-1" || len(r.Fields) != 2 {
		t.Fatalf("Load = %+v, %v", r, err)
	}
	if ok, err := s.Exists(ctx, "task-1"); !ok || err != nil {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	if ok, err := s.Exists(ctx, "task-2"); ok || err != nil {
		t.Fatalf("Exists(missing) = %v, %v", ok, err)
	}

	// Stale versions (a second create, and version 2 of a version-1 task) write nothing.
	for _, stale := range []int64{0, 2} {
		_, err := s.Commit(ctx, Commit{TaskID: "task-1", Version: stale, Snapshot: []byte("stale"),
			Events: [][]byte{[]byte("lost")}, Fields: map[string]string{"dialect": "1.0"},
			PushConfigs: map[string][]byte{"p": []byte("x")}, UpdatedAt: t0.Add(time.Hour)})
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("commit at stale version %d: %v, want ErrConflict", stale, err)
		}
	}
	r, _ = s.Load(ctx, "task-1")
	if r.Version != 1 || string(r.Snapshot) != `{"v":1}` || r.Fields["dialect"] != "0.3" {
		t.Errorf("after conflicts: %+v", r)
	}
	if n := rdb.XLen(ctx, tk.Events).Val(); n != 3 {
		t.Errorf("stream has %d entries after conflicts, want 3", n)
	}
	if m, _ := s.PushConfigs(ctx, "task-1"); len(m) != 0 {
		t.Errorf("conflicting commit wrote push configs %v", m)
	}
	if score := rdb.ZScore(ctx, tk.Index, "task-1").Val(); score != float64(t0.UnixMilli()) {
		t.Errorf("index score %v after conflicts, want %d", score, t0.UnixMilli())
	}

	// The next version appends after the first events, in order.
	ids2, err := s.Commit(ctx, Commit{TaskID: "task-1", Version: 1, Snapshot: []byte(`{"v":2}`),
		Events: [][]byte{[]byte("e4"), []byte("e5")}, UpdatedAt: t0.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	all := append(ids, ids2...)
	entries := rdb.XRange(ctx, tk.Events, "-", "+").Val()
	if len(entries) != 5 {
		t.Fatalf("stream = %v", entries)
	}
	for i, e := range entries {
		wantVer := "1"
		if i >= 3 {
			wantVer = "2"
		}
		if e.ID != all[i] || e.Values["e"] != fmt.Sprintf("e%d", i+1) || e.Values["v"] != wantVer {
			t.Errorf("entry %d = %+v, want id %s, e%d, v%s", i, e, all[i], i+1, wantVer)
		}
		if i > 0 && !layout.IDBefore(entries[i-1].ID, e.ID) {
			t.Errorf("stream ids not increasing: %s then %s", entries[i-1].ID, e.ID)
		}
	}
	if r, _ := s.Load(ctx, "task-1"); r.Version != 2 || string(r.Snapshot) != `{"v":2}` || r.Fields["context"] != "ctx-1" {
		t.Errorf("after second commit: %+v", r)
	}
	if score := rdb.ZScore(ctx, tk.Index, "task-1").Val(); score != float64(t0.Add(time.Second).UnixMilli()) {
		t.Errorf("index score %v, want the new update time", score)
	}
	if ttl := rdb.PTTL(ctx, tk.Hash).Val(); ttl != -1 {
		t.Errorf("a task without ExpireAfter has TTL %v", ttl)
	}
}

func TestCommitPushConfigsAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	tk := s.k.Task("t")
	_, err := s.Commit(ctx, Commit{TaskID: "t", Snapshot: []byte("s1"), Events: [][]byte{[]byte("e")},
		PushConfigs: map[string][]byte{"a": []byte(`{"url":"a"}`), "b": []byte(`{"url":"b"}`)}, UpdatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.PushConfigs(ctx, "t")
	if err != nil || len(m) != 2 || m["a"] != `{"url":"a"}` || m["b"] != `{"url":"b"}` {
		t.Fatalf("PushConfigs = %v, %v", m, err)
	}
	if b, err := s.PushConfig(ctx, "t", "b"); err != nil || string(b) != `{"url":"b"}` {
		t.Fatalf("PushConfig(b) = %s, %v", b, err)
	}

	// The finishing commit expires the hash, the stream and the push configs.
	const keep = time.Hour
	if _, err := s.Commit(ctx, Commit{TaskID: "t", Version: 1, Snapshot: []byte("s2"),
		Events: [][]byte{[]byte("done")}, UpdatedAt: t0, ExpireAfter: keep}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{tk.Hash, tk.Events, tk.Push} {
		if ttl := rdb.PTTL(ctx, key).Val(); ttl <= keep-time.Minute || ttl > keep {
			t.Errorf("TTL of %s = %v, want about %v", key, ttl, keep)
		}
	}
	if ttl := rdb.PTTL(ctx, tk.Index).Val(); ttl != -1 {
		t.Errorf("the partition index must not expire: TTL %v", ttl)
	}
}

func TestCheckPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s4, rdb, prefix := newStore(t, 4)
	if err := s4.CheckPartitions(ctx); err != nil {
		t.Fatal(err)
	}
	if err := storeOn(rdb, prefix, 4, Config{}).CheckPartitions(ctx); err != nil {
		t.Fatalf("same count again: %v", err)
	}
	err := storeOn(rdb, prefix, 8, Config{}).CheckPartitions(ctx)
	if err == nil || !strings.Contains(err.Error(), "4 partitions") || !strings.Contains(err.Error(), "8") {
		t.Fatalf("different count: %v, want an error naming 4 and 8", err)
	}
	if s := storeOn(rdb, "", 0, Config{}); s.Partitions() != 16 {
		t.Errorf("default partitions = %d", s.Partitions())
	}
}

func TestSetPushConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	if err := s.SetPushConfig(ctx, "", "missing", "a", []byte("x"), "", 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing task: %v, want ErrNotFound", err)
	}
	if ok, _ := s.Exists(ctx, "missing"); ok {
		t.Fatal("SetPushConfig created the task")
	}
	create(t, s, "t", t0)
	for _, id := range []string{"a", "b"} {
		if err := s.SetPushConfig(ctx, "", "t", id, []byte("v-"+id), "", 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetPushConfig(ctx, "", "t", "c", []byte("v-c"), "", 2); !errors.Is(err, ErrFull) {
		t.Fatalf("third config: %v, want ErrFull", err)
	}
	if err := s.SetPushConfig(ctx, "", "t", "a", []byte("v-a2"), "", 2); err != nil {
		t.Fatalf("replacing a config when full: %v", err)
	}
	m, _ := s.PushConfigs(ctx, "t")
	if len(m) != 2 || m["a"] != "v-a2" || m["b"] != "v-b" {
		t.Fatalf("configs = %v", m)
	}
	if ttl := rdb.PTTL(ctx, s.k.Task("t").Push).Val(); ttl != -1 {
		t.Errorf("push hash of a live task has TTL %v", ttl)
	}

	// Delete is idempotent, and frees a slot.
	for range 2 {
		if err := s.DeletePushConfig(ctx, "t", "b"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PushConfig(ctx, "t", "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PushConfig after delete: %v", err)
	}
	if err := s.DeletePushConfig(ctx, "nobody", "x"); err != nil {
		t.Fatalf("delete on a missing task: %v", err)
	}
	if err := s.SetPushConfig(ctx, "", "t", "c", []byte("v-c"), "", 2); err != nil {
		t.Fatalf("after delete: %v", err)
	}

	// A finished task's TTL is copied to configs added later.
	if _, err := s.Commit(ctx, Commit{TaskID: "fin", Snapshot: []byte("s"), UpdatedAt: t0, ExpireAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPushConfig(ctx, "", "fin", "a", []byte("v"), "", 2); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, s.k.Task("fin").Push).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("push hash TTL = %v, want the task's", ttl)
	}
}

func TestScanIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ partitions, limit int }{{4, 7}, {1, 3}, {4, 1}, {3, 30}} {
		t.Run(fmt.Sprintf("P%d_limit%d", tc.partitions, tc.limit), func(t *testing.T) {
			t.Parallel()
			testScanIndex(t, tc.partitions, tc.limit)
		})
	}
}

// testScanIndex pages through 30 tasks whose scores repeat: ten share one
// score (more than a page), the rest come in pairs.
func testScanIndex(t *testing.T, partitions, limit int) {
	ctx := context.Background()
	s, _, _ := newStore(t, partitions)
	want := map[string]int64{}
	parts := map[int]bool{}
	for i := range 30 {
		id := fmt.Sprintf("task-%02d", i)
		at := t0.Add(time.Duration(i/2) * time.Millisecond)
		if i < 10 {
			at = t0.Add(-time.Second)
		}
		create(t, s, id, at)
		want[id] = at.UnixMilli()
		parts[s.k.Partition(id)] = true
	}
	if len(parts) < min(partitions, 3) {
		t.Fatalf("tasks landed in only %d partitions", len(parts))
	}
	if n, err := s.IndexSize(ctx, ""); err != nil || n != 30 {
		t.Fatalf("IndexSize = %d, %v", n, err)
	}

	seen := map[string]bool{}
	var cursor, prev *IndexEntry
	for pages := 0; ; pages++ {
		if pages > 30/limit+2 {
			t.Fatal("paging does not end")
		}
		page, err := s.ScanIndex(ctx, "", cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > limit || (len(page) < limit && len(seen)+len(page) < 30) {
			t.Fatalf("page of %d entries (limit %d) after %d seen", len(page), limit, len(seen))
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if seen[e.TaskID] {
				t.Errorf("%s visited twice", e.TaskID)
			}
			seen[e.TaskID] = true
			if e.Score != want[e.TaskID] {
				t.Errorf("%s score %d, want %d", e.TaskID, e.Score, want[e.TaskID])
			}
			if prev != nil && (e.Score > prev.Score || (e.Score == prev.Score && e.TaskID >= prev.TaskID)) {
				t.Errorf("order: %+v came after %+v", e, *prev)
			}
			p := e
			prev = &p
		}
		last := page[len(page)-1]
		cursor = &last
	}
	if len(seen) != 30 {
		t.Errorf("visited %d tasks, want 30", len(seen))
	}
	// The newest comes first.
	first, err := s.ScanIndex(ctx, "", nil, 1)
	if err != nil || len(first) != 1 || first[0].TaskID != "task-29" {
		t.Errorf("first = %+v, %v", first, err)
	}
}

func TestLoadMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	for _, id := range []string{"a", "b", "c"} {
		create(t, s, id, t0)
	}
	// "b" expires: its hash goes, its index entry stays until LoadMany sees it.
	if err := rdb.Del(ctx, s.k.Task("b").Hash).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.IndexSize(ctx, ""); n != 3 {
		t.Fatalf("IndexSize = %d before LoadMany", n)
	}
	got, err := s.LoadMany(ctx, "", []string{"a", "b", "c", "never"})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a", "c"}) || string(got["a"].Snapshot) != "snap-a" || got["c"].Version != 1 {
		t.Fatalf("LoadMany = %+v", got)
	}
	if n, _ := s.IndexSize(ctx, ""); n != 2 {
		t.Errorf("IndexSize = %d after LoadMany, want 2", n)
	}
	page, _ := s.ScanIndex(ctx, "", nil, 10)
	for _, e := range page {
		if e.TaskID == "b" {
			t.Errorf("expired task still indexed: %+v", page)
		}
	}
	if got, err := s.LoadMany(ctx, "", nil); err != nil || len(got) != 0 {
		t.Errorf("LoadMany(nil) = %v, %v", got, err)
	}
}

// TestConcurrentCommits has 16 writers race on one task with optimistic
// retries: every commit lands exactly once.
func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t, 4)
	create(t, s, "hot", t0)
	const writers, each = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				r, err := s.Load(ctx, "hot")
				if err != nil {
					errs <- err
					return
				}
				ev := fmt.Sprintf("w%d-%d", w, i)
				_, err = s.Commit(ctx, Commit{TaskID: "hot", Version: r.Version, Snapshot: []byte(ev),
					Events: [][]byte{[]byte(ev)}, UpdatedAt: t0})
				switch {
				case errors.Is(err, ErrConflict):
					continue
				case err != nil:
					errs <- err
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, "hot")
	if err != nil || r.Version != 1+writers*each {
		t.Fatalf("version = %d, %v; want %d", r.Version, err, 1+writers*each)
	}
	entries := rdb.XRange(ctx, s.k.Task("hot").Events, "-", "+").Val()
	if len(entries) != 1+writers*each {
		t.Fatalf("stream has %d entries, want %d", len(entries), 1+writers*each)
	}
	seen := map[any]bool{}
	for i, e := range entries {
		if e.Values["v"] != strconv.Itoa(i+1) || seen[e.Values["e"]] {
			t.Errorf("entry %d = %+v", i, e.Values)
		}
		seen[e.Values["e"]] = true
	}
}
