package queue

import (
	"errors"
	"strconv"
	"strings"
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
// decodeRecord reads them. A record a previous relay wrote (a hash, and a
// list of its attempts) is still read, and replaced by this form at its
// next write.
const recordCodec = "d1"

var errBadRecord = errors.New("malformed delivery record")

// decodeRecord reads a stored record (without its ID, which names its key).
func decodeRecord(s string) (DeliveryRecord, error) {
	head, body, ok := strings.Cut(s, "\n")
	f := strings.Fields(head)
	if !ok || len(f) != 9 || f[0] != recordCodec {
		return DeliveryRecord{}, errBadRecord
	}
	var n [5]int64
	for i, v := range []string{f[2], f[3], f[4], f[5], f[7]} {
		var err error
		if n[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return DeliveryRecord{}, errBadRecord
		}
	}
	lc, err := strconv.Atoi(f[8])
	lt := int(n[4])
	if err != nil || lt < 0 || lc < 0 || lt+lc > len(body) {
		return DeliveryRecord{}, errBadRecord
	}
	r := DeliveryRecord{Status: f[1], Attempts: int(n[0]), EventID: f[6], TaskID: body[:lt], ConfigID: body[lt : lt+lc]}
	r.Created, r.Updated, r.Next = msTime(f[3]), msTime(f[4]), msTime(f[5])
	if log := body[lt+lc:]; log != "" {
		if log[0] != '\n' {
			return DeliveryRecord{}, errBadRecord
		}
		for a := range strings.SplitSeq(log[1:], "\n") {
			r.AttemptLog = append(r.AttemptLog, []byte(a))
		}
	}
	return r, nil
}
