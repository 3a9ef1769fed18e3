package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/taskstore"
)

// Unavailable tells an outage (retried by the agents) from a refused
// write (not retried), on errors as go-redis returns them from a real
// server, wrapped as the stores wrap them.
func TestRedisOutagesAreToldFromRefusedWrites(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	ctx := context.Background()
	reply := func(text string) error { // a server's error reply
		return rdb.Eval(ctx, "return redis.error_reply(ARGV[1])", []string{"{x}"}, text).Err()
	}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	refused := down.Ping(ctx).Err()
	_ = down.Close()
	closed := down.Ping(ctx).Err()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	wrap := func(err error) error { return fmt.Errorf("taskstore: commit: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", wrap(refused), true},
		{"loading", wrap(reply("LOADING Redis is loading the dataset in memory")), true},
		{"cluster down", wrap(reply("CLUSTERDOWN The cluster is down")), true},
		{"try again", wrap(reply("TRYAGAIN Multiple keys request during rehashing of slot")), true},
		{"read-only replica (failover)", wrap(reply("READONLY You can't write against a read only replica.")), true},
		{"pool timeout", wrap(redis.ErrPoolTimeout), true},
		{"script error", wrap(reply("ERR bad argument")), false},
		{"version conflict", wrap(taskstore.ErrConflict), false},
		{"transition", &a2a.TransitionError{From: a2a.StateCompleted, To: a2a.StateWorking}, false},
		{"lease lost", ErrLeaseLost, false},
		{"closed client", wrap(closed), false},
		{"canceled", wrap(rdb.Ping(canceled).Err()), false},
		{"no error", nil, false},
	} {
		if c.err == nil && c.want {
			t.Fatalf("%s: no error to classify", c.name)
		}
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
