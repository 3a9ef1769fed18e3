package taskstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func hashOf(s string) string { return strings.Repeat(s, OnceHashLen)[:OnceHashLen] }

// A commit under an idempotency key the task has recorded writes nothing,
// whatever version it was computed from (a retry computed before or after
// the first commit landed), and gets back what the first recorded; on both
// delivery paths, so that no notification is made twice.
func TestCommitsUnderAnIdempotencyKeyApplyOnce(t *testing.T) {
	t.Parallel()
	for _, outbox := range []bool{false, true} {
		t.Run("outbox="+strconv.FormatBool(outbox), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb, prefix := redistest.New(t)
			s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 2, Config{Outbox: outbox})
			if _, err := s.Commit(ctx, Commit{TaskID: "t", Snapshot: []byte("v1"), UpdatedAt: time.Now(),
				PushConfigs: map[string][]byte{"c1": []byte(`{}`)}}); err != nil {
				t.Fatal(err)
			}
			c := Commit{TaskID: "t", Version: 1, Snapshot: []byte("v2"), UpdatedAt: time.Now(),
				Events: [][]byte{[]byte("e1"), []byte("e2")}, Deliver: []bool{true, true}}
			once := Once{Key: "k1", Hash: hashOf("a"), Answer: []byte(`{"first":true}`)}
			ids, first, err := s.CommitOnce(ctx, c, once)
			if err != nil || first != nil || len(ids) != 2 {
				t.Fatalf("first commit: ids %v, first %v, err %v", ids, first, err)
			}
			notes := notifications(t, s, "t")
			for _, version := range []int64{1, 2} { // the stale version, and the current one
				c.Version = version
				again := once
				again.Answer = []byte(`{"second":true}`)
				ids, first, err := s.CommitOnce(ctx, c, again)
				if err != nil || ids != nil || first == nil || first.Hash != once.Hash || string(first.Answer) != `{"first":true}` {
					t.Fatalf("replay from version %d: ids %v, first %+v, err %v; want the first answer", version, ids, first, err)
				}
			}
			// Another request under the same key gets the record too: its
			// caller tells them apart by the hash.
			other := Once{Key: "k1", Hash: hashOf("b"), Answer: []byte("x")}
			if _, first, err := s.CommitOnce(ctx, c, other); err != nil || first == nil || first.Hash != once.Hash {
				t.Fatalf("other request, same key: first %+v, err %v", first, err)
			}
			if n, _ := rdb.XLen(ctx, s.EventsKey("t")).Result(); n != 2 {
				t.Fatalf("%d events after the replays, want 2", n)
			}
			if rec, _ := s.Load(ctx, "t"); rec.Version != 2 {
				t.Fatalf("version %d after the replays, want 2", rec.Version)
			}
			if got := notifications(t, s, "t"); got != notes || notes != 2 {
				t.Fatalf("notifications: %d after the first commit, %d after the replays; want 2 and 2", notes, got)
			}
			if a, err := s.Applied(ctx, "t", "k1"); err != nil || a.Hash != once.Hash || string(a.Answer) != `{"first":true}` {
				t.Fatalf("Applied = %+v, %v", a, err)
			}
			if _, err := s.Applied(ctx, "t", "k2"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Applied of an unknown key: %v, want ErrNotFound", err)
			}
			// Without a key, a stale version is still a conflict.
			c.Version = 1
			if _, err := s.Commit(ctx, c); !errors.Is(err, ErrConflict) {
				t.Fatalf("stale commit without a key: %v, want ErrConflict", err)
			}
		})
	}
}

// notifications counts the notifications made for task: the configs its
// event stream's entries name.
func notifications(t *testing.T, s *Store, task string) int64 {
	t.Helper()
	es, err := s.rdb.XRange(context.Background(), s.k.Task(task).Events, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		n += int64(len(layout.DecodeEventEntry(e.Values).Configs))
	}
	return n
}

// A task's idempotency record is bounded: it holds the last OnceKeys keys,
// forgets older ones, and expires OnceWindow after the latest, or with the
// task when that is sooner.
func TestIdempotencyRecordIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	s := storeOn(rdb, strings.TrimSuffix(prefix, ":"), 2, Config{OnceKeys: 3, OnceWindow: time.Hour})
	create(t, s, "b", time.Now())
	for v := 1; v <= 5; v++ {
		c := Commit{TaskID: "b", Version: int64(v), Snapshot: []byte("s"), UpdatedAt: time.Now(), Events: [][]byte{[]byte("e")}}
		if _, first, err := s.CommitOnce(ctx, c, Once{Key: "k" + strconv.Itoa(v), Hash: hashOf("h"), Answer: []byte("a")}); err != nil || first != nil {
			t.Fatalf("commit %d: %v, %v", v, first, err)
		}
	}
	for v := 1; v <= 5; v++ {
		_, err := s.Applied(ctx, "b", "k"+strconv.Itoa(v))
		if held := err == nil; held != (v > 2) {
			t.Errorf("key k%d held: %v (err %v); want the last 3 keys only", v, held, err)
		}
	}
	key := s.k.Task("b").Idempotency
	if n, _ := rdb.HLen(ctx, key).Result(); n != 1+3+3 { // the count, 3 slots, 3 keys
		t.Errorf("record has %d fields, want 7", n)
	}
	if ttl, _ := rdb.PTTL(ctx, key).Result(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("record TTL %v, want the window (1h)", ttl)
	}
	// The task finishes (expires in a minute): its record goes with it.
	c := Commit{TaskID: "b", Version: 6, Snapshot: []byte("s"), UpdatedAt: time.Now(), Events: [][]byte{[]byte("e")}, ExpireAfter: time.Minute}
	if _, _, err := s.CommitOnce(ctx, c, Once{Key: "k6", Hash: hashOf("h")}); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := rdb.PTTL(ctx, key).Result(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("record TTL %v once the task expires in 1m, want at most 1m", ttl)
	}
	// What the store refuses to record: a commit that would apply (at the
	// task's version now) is refused before it is sent.
	c.Version = 7
	before, _ := rdb.XLen(ctx, s.k.Task("b").Events).Result()
	for _, once := range []Once{{Hash: hashOf("h")}, {Key: "k", Hash: "short"}, {Key: "k", Hash: hashOf("h"), Answer: make([]byte, OnceAnswerMax+1)}} {
		_, _, err := s.CommitOnce(ctx, c, once)
		if err == nil || errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "commit once:") {
			t.Errorf("CommitOnce(%q, %d-char hash, %d-byte answer) = %v, want its refusal", once.Key, len(once.Hash), len(once.Answer), err)
		}
	}
	if n, _ := rdb.XLen(ctx, s.k.Task("b").Events).Result(); n != before {
		t.Errorf("the task's stream has %d events after the refusals, want %d", n, before)
	}
}
