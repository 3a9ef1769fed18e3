package ingest

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/taskstore"
)

// Streams are built whole or not at all: a missing dependency or a
// negative bound is an error naming it; a zero Max takes its default.
func TestStreamsConfigIsChecked(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer rdb.Close()
	ok := StreamsDeps{Store: &taskstore.Store{}, RDB: rdb}
	for _, tc := range []struct {
		name string
		d    StreamsDeps
		cfg  StreamsConfig
		want string
	}{
		{"no store", StreamsDeps{RDB: rdb}, StreamsConfig{}, "Store and RDB are required"},
		{"no pool", StreamsDeps{Store: &taskstore.Store{}}, StreamsConfig{}, "Store and RDB are required"},
		{"negative max", ok, StreamsConfig{Max: -1}, "Max"},
		{"negative per owner", ok, StreamsConfig{PerOwner: -1}, "PerOwner"},
	} {
		if _, err := NewStreams(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	s, err := NewStreams(ok, StreamsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if cap(s.slots) != 256 || s.perOwner != 0 {
		t.Errorf("%d slots, %d per owner: want the default 256, and no limit per owner", cap(s.slots), s.perOwner)
	}
}
