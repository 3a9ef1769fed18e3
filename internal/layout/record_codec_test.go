package layout

import (
	"reflect"
	"testing"
	"time"
)

// DecodeRecord refuses what is not a record of its codec, and never panics.
func TestDecodeRecordRefusesMalformed(t *testing.T) {
	t.Parallel()
	good := "d1 failed 2 1700000000000 1700000000500 1700000001000 17-0 3 2\ntskc1\n{\"a\":1}\n{\"a\":2}"
	r, err := DecodeRecord(good)
	if err != nil || r.TaskID != "tsk" || r.ConfigID != "c1" || r.Attempts != 2 || len(r.AttemptLog) != 2 || r.Next.UnixMilli() != 1700000001000 {
		t.Fatalf("DecodeRecord(good) = %+v, %v", r, err)
	}
	for _, bad := range []string{"", "d1", "d2 failed 2 1 1 0 17-0 3 2\ntskc1", "d1 failed 2 1 1 0 17-0 9 2\ntskc1",
		"d1 failed x 1 1 0 17-0 3 2\ntskc1", "d1 failed 2 1 1 0 17-0 3 2\ntskc1garbage", "d1 failed 2 1 1 0 17-0 -3 2\ntskc1"} {
		if _, err := DecodeRecord(bad); err == nil {
			t.Errorf("DecodeRecord(%q) accepted", bad)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add("d1 failed 2 1700000000000 1700000000500 0 17-0 3 2\ntskc1\n{}")
	f.Add("d1 pending 0 1 1 0 1-0 0 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := DecodeRecord(s)
		if err == nil && len(r.TaskID)+len(r.ConfigID) > len(s) {
			t.Fatalf("decoded more than it was given: %+v", r)
		}
	})
}

// A record encoded in Go decodes to what was encoded (the Lua side writes
// the same bytes: the outbox's tests compare them).
func TestEncodedRecordDecodesToItself(t *testing.T) {
	t.Parallel()
	in := DeliveryRecord{TaskID: "t:1", ConfigID: "c", EventID: "5-1", Status: "delivered", Attempts: 1,
		Created: time.UnixMilli(1700000000000), Updated: time.UnixMilli(1700000000100),
		AttemptLog: [][]byte{[]byte(`{"n":1}`)}}
	out, err := DecodeRecord(EncodeRecord(in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("decoded %+v, %v; want %+v", out, err, in)
	}
}
