package outbox

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/groupcommit"
	"github.com/a2arelay/relay/internal/layout"
)

// The parts of the outbox are built whole or not at all: a missing
// dependency (or one the part needs: Batch) or a setting out of range is
// an error naming it.
func TestThePartsOfTheOutboxAreBuiltWholeOrNotAtAll(t *testing.T) {
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
		{"stats, no rdb", second(NewStats(Deps{Keys: ok.Keys})), "RDB is required"},
		{"stats, no keys", second(NewStats(Deps{RDB: rdb})), "Keys is required"},
		{"replay, no rdb", second(NewReplay(Deps{Keys: ok.Keys}, Config{})), "RDB is required"},
		{"lanes, no batch", second(NewLanes(noBatch, Config{})), "Batch is required"},
		{"lanes, negative retention", second(NewLanes(ok, Config{DeliveryRetention: -1})), "Config.DeliveryRetention"},
		{"outboxes, no batch", second(NewOutboxes(noBatch, Config{})), "Batch is required"},
		{"outboxes, negative attempts kept", second(NewOutboxes(ok, Config{AttemptsKept: -1})), "Config.AttemptsKept"},
		{"owners, no rdb", second(NewOwners(Deps{Keys: ok.Keys})), "RDB is required"},
		{"records, no keys", second(NewRecords(Deps{RDB: rdb}, Config{})), "Keys is required"},
		{"records, negative attempts kept", second(NewRecords(ok, Config{AttemptsKept: -1})), "Config.AttemptsKept"},
		{"replay, negative retention", second(NewReplay(ok, Config{DeliveryRetention: -1})), "Config.DeliveryRetention"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %q", tc.name, tc.err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"stats without a batch", second(NewStats(noBatch))},
		{"replay without a batch", second(NewReplay(noBatch, Config{}))},
		{"owners without a batch", second(NewOwners(noBatch))},
		{"records without a batch", second(NewRecords(noBatch, Config{}))},
	} {
		if tc.err != nil {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
}

// second is the error of a constructor's results.
func second[T any](_ T, err error) error { return err }
