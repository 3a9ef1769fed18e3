package a2a

import (
	"encoding/json"
	"testing"
)

// Go's decoder matches member names under Unicode simple case folding
// (ſ is s, the Kelvin sign is k), not only ASCII case: two names it reads
// as one field are refused as a field given twice, whatever letters tell
// them apart.
func TestNamesGoReadsAsOneAreRefusedTwice(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"taskId":"a","taſkId":"b"}`,
		`{"task_id":"a","taſk_id":"b"}`,
		`{"message":{"kind":"x","\u212aind":"y"}}`,
	} {
		if _, err := normalizeNames(json.RawMessage(in)); !IsKind(err, KindInvalidParams) {
			t.Errorf("%s: %v; want invalid params (a field given twice)", in, err)
		}
	}
}
