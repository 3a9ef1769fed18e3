package taskstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// A relay sets a URL index's expiry (a horizon and a slack) with its first
// write and then once a slack: the writes between are one ZADD each, and
// the key still expires at least a horizon after each. Readers that drop
// every config the index lists (all stale) leave the key, expiry and all,
// so the next write, which sets no expiry, does not make a key that never
// expires. A relay that never set it sets it.
func TestAURLIndexSetsItsExpiryOnceASlack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	prefix = strings.TrimSuffix(prefix, ":")
	cfg := URLIndexConfig{Horizon: 8*time.Hour + 8*time.Hour} // (a usage window and a delivery retention)
	s := urlIndexOn(rdb, prefix, 4, cfg)
	horizon, slack := 16*time.Hour, time.Hour
	if s.urlHorizon != horizon || urlSlack(horizon) != slack {
		t.Fatalf("horizon %v, slack %v; the test assumes %v and %v", s.urlHorizon, urlSlack(horizon), horizon, slack)
	}
	rdb.Ping(ctx)
	log := &sentLog{}
	rdb.AddHook(log)
	const url = "http://hooks.example/a"
	h, _ := urlHash(url)
	key := s.k.URLConfigs(h)
	expiresAt := func() time.Time {
		t.Helper()
		ms, err := rdb.Do(ctx, "PEXPIRETIME", key).Int64()
		log.take() // (the test's own read)
		if err != nil || ms < 0 {
			t.Fatalf("the index of %s expires at %d (%v)", url, ms, err)
		}
		return time.UnixMilli(ms)
	}
	index := func(s *URLIndex, config string, at time.Time, want ...string) {
		t.Helper()
		if err := s.IndexPushURL(ctx, url, "task-"+config, config, at); err != nil {
			t.Fatal(err)
		}
		if got := log.take(); !slices.Equal(got, want) {
			t.Fatalf("indexing config %s sent %q, want %q", config, got, want)
		}
	}
	now := time.Now()
	index(s, "a", now, "zadd", "pexpire")
	if at := expiresAt(); at.Before(now.Add(horizon + slack - time.Minute)) {
		t.Fatalf("the first write has the index expire at %v, want a horizon and a slack after %v", at, now)
	}
	index(s, "b", now.Add(20*time.Minute), "zadd")
	index(s, "c", now.Add(59*time.Minute), "zadd")
	if at := expiresAt(); at.Before(now.Add(59*time.Minute + horizon)) {
		t.Fatalf("the index expires at %v, less than a horizon after its last write at %v", at, now.Add(59*time.Minute))
	}
	// A replay by URL finds every config listed stale, and drops them all.
	listed, err := s.URLConfigs(ctx, url, now.Add(24*time.Hour), 10)
	if err != nil || len(listed) != 3 {
		t.Fatalf("the index lists %+v, %v; want the 3 configs (and nothing else)", listed, err)
	}
	if err := s.ForgetURLConfigs(ctx, url, listed); err != nil {
		t.Fatal(err)
	}
	log.take()
	index(s, "d", now.Add(59*time.Minute), "zadd")
	expiresAt() // the key still expires
	if listed, err := s.URLConfigs(ctx, url, now.Add(24*time.Hour), 10); err != nil || len(listed) != 1 || listed[0].ConfigID != "d" {
		t.Fatalf("the index lists %+v, %v; want config d alone", listed, err)
	}
	log.take()
	// A slack on, the relay sets it again; another relay sets it with its
	// first write.
	index(s, "e", now.Add(61*time.Minute), "zadd", "pexpire")
	index(urlIndexOn(rdb, prefix, 4, cfg), "f", now.Add(62*time.Minute), "zadd", "pexpire")
}

// sentLog records the names of the commands a client sends, without the
// handshakes of new connections.
type sentLog struct {
	mu    sync.Mutex
	names []string
}

func (l *sentLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *sentLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *sentLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			l.add(c)
		}
		return next(ctx, cmds)
	}
}

func (l *sentLog) add(c redis.Cmder) {
	if n := c.Name(); n != "hello" && n != "client" {
		l.mu.Lock()
		l.names = append(l.names, n)
		l.mu.Unlock()
	}
}

func (l *sentLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.names
	l.names = nil
	return n
}
