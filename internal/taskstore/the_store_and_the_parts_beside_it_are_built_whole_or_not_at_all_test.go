package taskstore

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// The Store and the parts beside it are built whole or not at all: a
// missing dependency (or one the part needs: Batch) or a config out of
// range is an error naming it.
func TestTheStoreAndThePartsBesideItAreBuiltWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // (never dialled)
	defer rdb.Close()
	ok := Deps{RDB: rdb, Keys: layout.New("p", 2), Batch: groupcommit.New(rdb)}
	noBatch := ok
	noBatch.Batch = nil
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"hosts, no rdb", second(NewHostValidations(Deps{Keys: ok.Keys})), "RDB is required"},
		{"hosts, no keys", second(NewHostValidations(Deps{RDB: rdb})), "Keys is required"},
		{"url index, no batch", second(NewURLIndex(noBatch, URLIndexConfig{})), "Batch is required"},
		{"url index, negative horizon", second(NewURLIndex(ok, URLIndexConfig{Horizon: -time.Hour})), "Horizon"},
		{"turns, no batch", second(NewTurns(noBatch)), "Batch is required"},
		{"turns, no keys", second(NewTurns(Deps{RDB: rdb, Batch: ok.Batch})), "Keys is required"},
		{"compaction, no rdb", second(NewCompaction(Deps{Keys: ok.Keys}, CompactionConfig{})), "RDB is required"},
		{"compaction, negative length", second(NewCompaction(ok, CompactionConfig{EventsMaxLen: -1})), "EventsMaxLen"},
		{"compaction, negative delivery retention", second(NewCompaction(ok, CompactionConfig{DeliveryRetention: -time.Second})), "DeliveryRetention"},
		{"store, no batch", second(New(noBatch, Config{})), "Batch is required"},
		{"store, no rdb", second(New(Deps{Keys: ok.Keys, Batch: ok.Batch}, Config{})), "RDB is required"},
		{"store, negative length", second(New(ok, Config{EventsMaxLen: -1})), "EventsMaxLen"},
		{"store, negative delivery retention", second(New(ok, Config{DeliveryRetention: -time.Second})), "DeliveryRetention"},
		{"store, negative task retention", second(New(ok, Config{TaskRetention: -time.Second})), "TaskRetention"},
		{"store, negative once keys", second(New(ok, Config{OnceKeys: -1})), "OnceKeys"},
		{"store, negative once window", second(New(ok, Config{OnceWindow: -time.Second})), "OnceWindow"},
		{"store, negative usage window", second(New(ok, Config{UsageWindow: -time.Second})), "UsageWindow"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, tc.err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"hosts without a batch", second(NewHostValidations(noBatch))},
		{"compaction without a batch", second(NewCompaction(noBatch, CompactionConfig{}))},
		{"store with defaults", second(New(ok, Config{}))},
	} {
		if tc.err != nil {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
}

// second is the error of a constructor's results.
func second[T any](_ T, err error) error { return err }
