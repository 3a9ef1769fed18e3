package taskstore

import (
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// BenchmarkCommitArguments builds what one commit of the default bench's
// kind sends besides its events: the script's KEYS and named arguments
// (no Redis: the store is never run).
func BenchmarkCommitArguments(b *testing.B) {
	s := must(New(Deps{RDB: nil, Keys: layout.New("relay", 16), Batch: groupcommit.New(nil)}, Config{}))
	s.outbox = true
	c := Commit{TaskID: "0f8fad5b-d9cb-469f-a165-70867728950e", Version: 3, Snapshot: []byte(`{"id":"x"}`),
		UpdatedAt: time.Now(), Owner: "tenant-a", Fields: map[string]string{"s": "working", "ctx": "c-1"},
		Events: [][]byte{[]byte(`{"kind":"status-update"}`)}, Deliver: []bool{true}}
	b.ReportAllocs()
	for b.Loop() {
		keys := s.commitKeys(c)
		args, err := s.commitArgs(c, "8e03978e-40d5-43e8-bc93-0f8fad5bd9cb", nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = commitScript.Args(&args)
		_ = keys
	}
}
