package groupcommit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// BenchmarkEval is one caller's script run through the Batcher, alone:
// its allocations are the Batcher's, go-redis's command and pipeline.
func BenchmarkEval(b *testing.B) {
	rdb, _ := redistest.New(b)
	bt := New(rdb)
	ctx := context.Background()
	if err := echoScript.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := bt.Eval(ctx, echoScript, nil, "x").Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDo is one caller's command run through the Batcher, alone.
func BenchmarkDo(b *testing.B) {
	rdb, _ := redistest.New(b)
	bt := New(rdb)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var cmd *redis.StringCmd
		bt.Do(func(p redis.Pipeliner) { cmd = p.Echo(ctx, "x") })
		if err := cmd.Err(); err != nil {
			b.Fatal(err)
		}
	}
}
