package outbox

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The attempt log keeps a delivery's last AttemptsKept attempts, counts
// them all, and expires with the record; the record's status moves with
// each attempt.
func TestAttemptLogKeepsTheLatest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := laneFixtureWith(t, 2, storeConfig{AttemptsKept: 3})
	rdb := s.rdb
	attempt := func(n int) []byte { return []byte(fmt.Sprintf(`{"attempt":%d}`, n)) }

	// The first notification: five failed attempts, then a sixth that lands.
	tok := readOne(t, s, "w1")
	first := time.Now()
	var nid string
	for n := 1; n <= 6; n++ {
		h := begun(t, s, tok, "w1")
		nid = h.NotificationID
		f := Finish{Outcome: Retry, Attempt: attempt(n), Now: time.Now(), First: first, Due: time.Now(), Lease: time.Minute, Consumer: "w1"}
		if n == 6 {
			f.Outcome = Delivered
		}
		if _, err := s.FinishToken(ctx, tok, h, f); err != nil {
			t.Fatal(err)
		}
		if n < 6 {
			if moved, _, err := s.MoveDue(ctx, 0, time.Now().Add(time.Second), 10); err != nil || moved != 1 {
				t.Fatalf("MoveDue = %d, %v", moved, err)
			}
			tok = readOne(t, s, "w1")
			if tok.Attempt != n+1 {
				t.Fatalf("retry token for attempt %d, want %d", tok.Attempt, n+1)
			}
		}
	}
	r, err := s.Delivery(ctx, nid)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range r.AttemptLog {
		got = append(got, string(a))
	}
	if want := []string{`{"attempt":4}`, `{"attempt":5}`, `{"attempt":6}`}; r.Status != "delivered" || r.Attempts != 6 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("record: status %s, %d attempts, log %v; want delivered, 6, %v", r.Status, r.Attempts, got, want)
	}

	// The second: delivered at once, one attempt logged.
	tok = readOne(t, s, "w1")
	h := begun(t, s, tok, "w1")
	if _, err := s.FinishToken(ctx, tok, h, delivered(time.Now(), time.Minute, false)); err != nil {
		t.Fatal(err)
	}
	r, err = s.Delivery(ctx, h.NotificationID)
	if err != nil || r.Status != "delivered" || r.Attempts != 1 || len(r.AttemptLog) != 1 || string(r.AttemptLog[0]) != `{}` {
		t.Fatalf("record %+v, %v; want delivered after one logged attempt", r, err)
	}
	for _, id := range []string{nid, h.NotificationID} {
		if ttl, _ := rdb.PTTL(ctx, s.k.Record(0, id)).Result(); ttl <= 0 {
			t.Fatalf("the record of %s, with its attempts, has no expiry (%s)", id, ttl)
		}
	}
}
