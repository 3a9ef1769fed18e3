package health

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A push config's health that the previous relay stored (a hash), which a
// flush replaces by this relay's form between a read's look at its type
// and its read of the hash, is read all the same (in its new form): the
// read does not fail on the key's new type.
func TestConfigHealthReplacedWhileItIsReadIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, Config{ConfigKeep: 3 * time.Hour})
	storePreviousRelaysHealth(t, s, "t1", "c")
	// Another relay's flush, just before the hash is read.
	flush := &beforeHGetAll{run: func() {
		if err := s.RecordConfigs(ctx, []ConfigOutcomes{cfgFail("t1", "c", "a", 1, t0.Add(time.Minute))}); err != nil {
			t.Error(err)
		}
	}}
	s.rdb.AddHook(flush)
	c, err := s.Config(ctx, "t1", "c")
	if err != nil {
		t.Fatalf("reading a config's health replaced meanwhile: %v", err)
	}
	if !flush.ran {
		t.Fatal("the test's flush did not run between the reads")
	}
	if c.Succeeded != 3 || c.Failed != 3 || c.ConsecutiveFailures != 3 {
		t.Fatalf("health %+v; want the hash's counts and the flush's outcome", c)
	}
}

// beforeHGetAll runs run once, before the first pipeline that reads a
// hash whole.
type beforeHGetAll struct {
	once sync.Once
	run  func()
	ran  bool
}

func (b *beforeHGetAll) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (b *beforeHGetAll) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (b *beforeHGetAll) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() == "hgetall" {
				b.once.Do(func() { b.run(); b.ran = true })
			}
		}
		return next(ctx, cmds)
	}
}
