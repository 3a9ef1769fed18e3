package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

var echoScript = redis.NewScript("return ARGV[1]")

// Requests are pooled: many callers at once, over shared round trips and
// runners, each get their own reply, by Do and by Eval, never another's
// nor one a request carried for an earlier caller.
func TestAPooledRequestCarriesOnlyItsCallersReply(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	b := New(rdb)
	ctx := context.Background()
	if err := echoScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	const callers, calls = 32, 100
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				want := fmt.Sprintf("%d/%d", c, i)
				var got string
				var err error
				if i%2 == 0 {
					var cmd *redis.StringCmd
					b.Do(func(p redis.Pipeliner) { cmd = p.Echo(ctx, want) })
					got, err = cmd.Result()
				} else {
					got, err = b.Eval(ctx, echoScript, nil, want).Text()
				}
				if err != nil || got != want {
					errs <- fmt.Errorf("caller %d call %d got %q, %v; want %q", c, i, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A script run through the Batcher allocates no more than the same script
// in a pipeline of its own: the request and its done signal are pooled.
func TestAGroupedEvalAllocatesWhatItsPipelineDoes(t *testing.T) {
	rdb, _ := redistest.New(t)
	b := New(rdb)
	ctx := context.Background()
	if err := echoScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	args := []any{"x"} // (the caller's)
	alone := testing.AllocsPerRun(200, func() {
		p := rdb.Pipeline()
		cmd := echoScript.EvalSha(ctx, p, nil, args...)
		_, _ = p.Exec(context.Background())
		if cmd.Err() != nil {
			t.Fatal(cmd.Err())
		}
	})
	grouped := testing.AllocsPerRun(200, func() {
		if err := b.Eval(ctx, echoScript, nil, args...).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if grouped > alone {
		t.Fatalf("a grouped Eval allocates %v times, its pipeline alone %v", grouped, alone)
	}
}
