package delivery

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// The logged attempt record is the bytes json.Marshal writes for the
// attempt: every field set or empty, strings that need escapes (a webhook's
// answer quoted), latencies of every size, times in any zone, and a time
// json.Marshal refuses (the same error).
func TestAttemptRecordJSONIsWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 2))
	plain := []string{"", "x", "https://hook.example/a?b=1", "http", "connection refused", "delivered"}
	escaped := []string{`{"ok":true}`, "<html>&", "line\nbreak", "héllo", "bad \xff", "\u2028"}
	pick := func() string { // mostly plain: the way without reflection is the one under test
		if r.IntN(20) == 0 {
			return escaped[r.IntN(len(escaped))]
		}
		return plain[r.IntN(len(plain))]
	}
	lat := []float64{0, 1.234, 0.0000004, 1e-7, 12345678.5, 1e21, 3e22, 0.001, 42}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600)}
	for range 3000 {
		a := Attempt{Time: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zones[r.IntN(len(zones))]),
			NotificationID: pick(), TaskID: pick(), ConfigID: pick(), URL: pick(), Attempt: r.IntN(30),
			Status: []int{0, 200, 503}[r.IntN(3)], ErrorClass: pick(), Error: pick(), LatencyMs: lat[r.IntN(len(lat))],
			Response: pick(), Outcome: pick(), TraceID: []string{"", "4bf92f3577b34da6a3ce929d0e0e4736"}[r.IntN(2)]}
		if r.IntN(2) == 0 {
			next := a.Time.Add(time.Duration(r.Int64N(1e12)))
			a.NextAttempt = &next
		}
		want, werr := json.Marshal(a)
		got, err := a.appendJSON([]byte("p"))
		if (err != nil) != (werr != nil) || (err == nil && (!bytes.Equal(got[1:], want) || got[0] != 'p')) {
			t.Fatalf("appendJSON = %s, %v\njson.Marshal = %s, %v", got, err, want, werr)
		}
	}
	bad := Attempt{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), LatencyMs: 1}
	if _, err := bad.appendJSON(nil); err == nil {
		t.Fatal("a time past year 9999 encoded")
	}
}
