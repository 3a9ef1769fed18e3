package layout

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A record's stored bytes are its header (codec, status, attempts, the
// created, updated and next times in ms, 0 for none, the event id and the
// lengths of the task and config ids), a newline, the ids, and a line per
// logged attempt: spelled here with fmt, for records of every shape.
func TestARecordsBytesAreItsSpelledFields(t *testing.T) {
	t.Parallel()
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMilli()
	}
	for _, r := range []DeliveryRecord{
		{TaskID: "t:1", ConfigID: "c", EventID: "5-1", Status: "delivered", Attempts: 1,
			Created: time.UnixMilli(1700000000000), Updated: time.UnixMilli(1700000000100), AttemptLog: [][]byte{[]byte(`{"n":1}`)}},
		{TaskID: "00dd7b97-a3eb-45df-9367-249195a088f2", ConfigID: "config-é", EventID: "1795000000000-12", Status: "pending",
			Attempts: 12345, Created: time.UnixMilli(1795000000000), Updated: time.UnixMilli(1795000000001), Next: time.UnixMilli(1795000060000),
			AttemptLog: [][]byte{[]byte(`{"a":1}`), []byte(`{"a":2}`), nil}},
		{Status: "dead"},
		{TaskID: "t", ConfigID: "c", EventID: "0-1", Status: "delivered", Attempts: 0, Created: time.UnixMilli(-5)},
	} {
		want := fmt.Sprintf("%s %s %d %d %d %d %s %d %d\n%s%s", recordCodec, r.Status, r.Attempts, ms(r.Created), ms(r.Updated),
			ms(r.Next), r.EventID, len(r.TaskID), len(r.ConfigID), r.TaskID, r.ConfigID)
		for _, a := range r.AttemptLog {
			want += "\n" + string(a)
		}
		if got := EncodeRecord(r); got != want {
			t.Errorf("record %+v encodes as\n%q, want\n%q", r, got, want)
		}
	}
	// One record's bytes are not in the next's.
	a := EncodeRecord(DeliveryRecord{TaskID: strings.Repeat("x", 300), Status: "delivered", Attempts: 1})
	b := EncodeRecord(DeliveryRecord{TaskID: "b", Status: "dead"})
	if strings.Contains(b, "x") || strings.Contains(a, "dead") {
		t.Errorf("records share bytes: %q, %q", a, b)
	}
}
