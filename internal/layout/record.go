package layout

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// The stored form of a delivery record (codec "d1"). One string, so that a
// delivery costs one read and one write of it, and its attempt log lives
// and expires with it:
//
//	d1 <status> <attempts> <created ms> <updated ms> <next ms or 0> <event id> <len task> <len config>
//	"\n" <task id><config id>
//	"\n" <attempt JSON>, for each logged attempt, oldest first
//
// The ids are raw bytes counted by the header; attempt records are JSON
// (json.Marshal escapes every newline in them). The scripts write records
// with the functions of lua/lib.lua (recNew, recRead, recLog, recWrite);
// DecodeRecord reads them. A record a previous relay wrote (a hash, and a
// list of its attempts) is still read, and replaced by this form at its
// next write.
const recordCodec = "d1"

// ErrBadRecord: a stored string is not a delivery record of this codec.
var ErrBadRecord = errors.New("malformed delivery record")

// DeliveryRecord is the record of one notification to one push config.
type DeliveryRecord struct {
	ID       string
	TaskID   string
	ConfigID string
	EventID  string
	Status   string
	Attempts int
	Created  time.Time
	Updated  time.Time
	// Next is when the next attempt is due (zero when none is scheduled).
	Next time.Time
	// AttemptLog holds the logged attempts (JSON), oldest first: the last
	// AttemptsKept of them.
	AttemptLog [][]byte
}

// EncodeRecord is the stored form of r (without its ID, which names its
// key), as lua/lib.lua's recWrite writes it. Relay writes records from Go
// only where no script is needed: a delivered first attempt (the outbox).
func EncodeRecord(r DeliveryRecord) string {
	var b strings.Builder
	n := len(recordCodec) + len(r.Status) + len(r.TaskID) + len(r.ConfigID) + len(r.EventID) + 5*20 + 10
	for _, a := range r.AttemptLog {
		n += len(a) + 1
	}
	b.Grow(n)
	var num [20]byte // each number is written through it, not made a string of its own
	number := func(v int64) { b.Write(strconv.AppendInt(num[:0], v, 10)) }
	ms := func(t time.Time) {
		if t.IsZero() {
			b.WriteByte('0')
			return
		}
		number(t.UnixMilli())
	}
	b.WriteString(recordCodec)
	b.WriteByte(' ')
	b.WriteString(r.Status)
	b.WriteByte(' ')
	number(int64(r.Attempts))
	b.WriteByte(' ')
	ms(r.Created)
	b.WriteByte(' ')
	ms(r.Updated)
	b.WriteByte(' ')
	ms(r.Next)
	b.WriteByte(' ')
	b.WriteString(r.EventID)
	b.WriteByte(' ')
	number(int64(len(r.TaskID)))
	b.WriteByte(' ')
	number(int64(len(r.ConfigID)))
	b.WriteByte('\n')
	b.WriteString(r.TaskID)
	b.WriteString(r.ConfigID)
	for _, a := range r.AttemptLog {
		b.WriteByte('\n')
		b.Write(a)
	}
	return b.String()
}

// DecodeRecord reads a stored record (without its ID, which names its key).
func DecodeRecord(s string) (DeliveryRecord, error) {
	head, body, ok := strings.Cut(s, "\n")
	f := strings.Fields(head)
	if !ok || len(f) != 9 || f[0] != recordCodec {
		return DeliveryRecord{}, ErrBadRecord
	}
	var n [5]int64
	for i, v := range []string{f[2], f[3], f[4], f[5], f[7]} {
		var err error
		if n[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return DeliveryRecord{}, ErrBadRecord
		}
	}
	lc, err := strconv.Atoi(f[8])
	lt := int(n[4])
	if err != nil || lt < 0 || lc < 0 || lt+lc > len(body) {
		return DeliveryRecord{}, ErrBadRecord
	}
	r := DeliveryRecord{Status: f[1], Attempts: int(n[0]), EventID: f[6], TaskID: body[:lt], ConfigID: body[lt : lt+lc]}
	r.Created, r.Updated, r.Next = MsTime(f[3]), MsTime(f[4]), MsTime(f[5])
	if log := body[lt+lc:]; log != "" {
		if log[0] != '\n' {
			return DeliveryRecord{}, ErrBadRecord
		}
		for a := range strings.SplitSeq(log[1:], "\n") {
			r.AttemptLog = append(r.AttemptLog, []byte(a))
		}
	}
	return r, nil
}

// MsTime reads a time stored as unix ms; "0", "" or garbage is the zero time.
func MsTime(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
