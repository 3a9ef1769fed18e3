package outbox

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// asLegacy rewrites notification nid's record as the previous relay stored
// it: a hash, and its attempts in a list of their own, both expiring.
func (s *fixture) asLegacy(t *testing.T, nid string, r DeliveryRecord, attempts ...string) {
	t.Helper()
	ctx := context.Background()
	key, list := s.k.Record(0, nid), s.k.LegacyAttempts(0, nid)
	pipe := s.rdb.TxPipeline()
	pipe.Del(ctx, key)
	pipe.HSet(ctx, key, "task", r.TaskID, "config", r.ConfigID, "event", r.EventID, "status", r.Status,
		"created", r.Created.UnixMilli(), "updated", r.Updated.UnixMilli(), "attempts", len(attempts))
	pipe.PExpire(ctx, key, time.Hour)
	for _, a := range attempts {
		pipe.RPush(ctx, list, a)
	}
	pipe.PExpire(ctx, list, time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// A record the previous relay wrote (a hash and an attempt list) is read,
// and at its next attempt becomes one record in the current form, with its
// earlier attempts, its expiry, and no attempt list left behind.
func TestPreviousRelaysRecordIsReadAndCarriedOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixture(t, 1)
	tok := readOne(t, s, "w1")
	h := begun(t, s, tok, "w1")
	r, err := s.Delivery(ctx, h.NotificationID)
	if err != nil || r.Status != "pending" || r.Attempts != 0 || r.TaskID != "run" || r.ConfigID != "c1" || r.EventID != h.EventID {
		t.Fatalf("new record = %+v, %v", r, err)
	}
	r.Status = "failed"
	s.asLegacy(t, h.NotificationID, r, `{"attempt":1}`)
	old, err := s.Delivery(ctx, h.NotificationID)
	if err != nil || old.Status != "failed" || old.Attempts != 1 || len(old.AttemptLog) != 1 || old.EventID != h.EventID {
		t.Fatalf("legacy record read as %+v, %v", old, err)
	}

	f := delivered(time.Now(), time.Minute, false)
	f.Attempt = []byte(`{"attempt":2}`)
	if done, err := s.FinishToken(ctx, tok, h, f); err != nil || !done.Applied {
		t.Fatalf("FinishToken = %+v, %v", done, err)
	}
	got, err := s.Delivery(ctx, h.NotificationID)
	if err != nil {
		t.Fatal(err)
	}
	if log := fmt.Sprintf("%s", got.AttemptLog); got.Status != "delivered" || got.Attempts != 2 || log != `[{"attempt":1} {"attempt":2}]` ||
		got.TaskID != "run" || got.ConfigID != "c1" || !got.Created.Equal(old.Created.Truncate(time.Millisecond)) {
		t.Fatalf("carried-over record = %+v (log %s)", got, log)
	}
	if typ, _ := s.rdb.Type(ctx, s.k.Record(0, h.NotificationID)).Result(); typ != "string" {
		t.Fatalf("record stored as %s, want the current form (a string)", typ)
	}
	if n, _ := s.rdb.Exists(ctx, s.k.LegacyAttempts(0, h.NotificationID)).Result(); n != 0 {
		t.Fatal("the previous relay's attempt list is left behind")
	}
	if ttl, _ := s.rdb.PTTL(ctx, s.k.Record(0, h.NotificationID)).Result(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("carried-over record expires in %s, want the hour it had left", ttl)
	}
}

// A delivered record of the previous relay can be redelivered: it goes
// back to pending, in the current form, and its lane gets the
// notification again.
func TestPreviousRelaysRecordRedelivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixture(t, 1)
	tok := readOne(t, s, "w1")
	h := begun(t, s, tok, "w1")
	if _, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, false)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Delivery(ctx, h.NotificationID)
	if err != nil || r.Status != "delivered" {
		t.Fatalf("record = %+v, %v", r, err)
	}
	s.asLegacy(t, h.NotificationID, r, `{"attempt":1}`)
	if err := s.Redeliver(ctx, h.NotificationID, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Delivery(ctx, h.NotificationID)
	if err != nil || got.Status != "pending" || got.Attempts != 1 || len(got.AttemptLog) != 1 {
		t.Fatalf("redelivered record = %+v, %v", got, err)
	}
	again := begun(t, s, readOne(t, s, "w1"), "w1")
	if again.NotificationID != h.NotificationID {
		t.Fatalf("lane head after redelivery = %s, want %s", again.NotificationID, h.NotificationID)
	}
}
