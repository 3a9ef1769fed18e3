package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, redistest.CheckLeaks()) }

// TestPrefixIsolation runs a writer and a reader in parallel: the reader
// finds nothing under its own prefix, and the writer's keys are gone once
// the writer has finished.
func TestPrefixIsolation(t *testing.T) {
	var writer string              // the writer's prefix, set before written is closed
	written := make(chan struct{}) // closed when the writer has written (or failed)
	read := make(chan struct{})    // closed when the reader has looked
	const key = "{7}:task:1"

	t.Run("group", func(t *testing.T) {
		t.Run("writer", func(t *testing.T) {
			t.Parallel()
			defer func() { <-read }() // keep the key alive while the reader looks
			defer close(written)
			c, prefix := redistest.New(t)
			writer = prefix
			if err := c.Set(t.Context(), prefix+key, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("reader", func(t *testing.T) {
			t.Parallel()
			defer close(read)
			c, prefix := redistest.New(t)
			<-written
			if prefix == writer {
				t.Fatalf("both tests got prefix %q", prefix)
			}
			if n := countKeys(t, c, prefix); n != 0 {
				t.Errorf("reader sees %d keys under its prefix %q, want 0", n, prefix)
			}
			if err := c.Get(t.Context(), prefix+key).Err(); !errors.Is(err, redis.Nil) {
				t.Errorf("GET %s: err = %v, want redis.Nil", prefix+key, err)
			}
			if n, err := c.Exists(t.Context(), writer+key).Result(); err != nil || n != 1 {
				t.Errorf("EXISTS %s = %d, %v; want the writer's key to exist meanwhile", writer+key, n, err)
			}
		})
	})

	c, _ := redistest.New(t)
	if n := countKeys(t, c, writer); n != 0 {
		t.Errorf("%d keys left under %q after the writer ended, want 0", n, writer)
	}
}

// TestCleanupDeletesOnlyThePrefix writes more keys than one SCAN batch and
// checks that cleanup removes all of them and nothing else.
func TestCleanupDeletesOnlyThePrefix(t *testing.T) {
	t.Parallel()
	c, outer := redistest.New(t)
	ctx := t.Context()
	if err := c.Set(ctx, outer+"keep", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}

	var inner string
	t.Run("many", func(t *testing.T) {
		var c redis.UniversalClient
		c, inner = redistest.New(t)
		pipe := c.Pipeline()
		for i := range 2500 {
			pipe.Set(ctx, fmt.Sprintf("%sk%d", inner, i), i, 0)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: inner + "{1}:events", Values: []any{"f", "v"}})
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	})

	if n := countKeys(t, c, inner); n != 0 {
		t.Errorf("%d keys left under %q, want 0", n, inner)
	}
	if n, err := c.Exists(ctx, outer+"keep").Result(); err != nil || n != 1 {
		t.Errorf("EXISTS %skeep = %d, %v; want 1", outer, n, err)
	}
}

// TestPrefixShape checks that prefixes are distinct per call, start with
// t<N>: and hold no characters that are special in SCAN patterns or hash tags.
func TestPrefixShape(t *testing.T) {
	t.Parallel()
	names := []string{"plain", "with space/and*glob?[x]\\", "hash{tag}", strings.Repeat("long", 40)}
	seen := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			_, p1 := redistest.New(t)
			_, p2 := redistest.New(t)
			for _, p := range []string{p1, p2} {
				if !strings.HasPrefix(p, "t") || !strings.HasSuffix(p, ":") || len(p) > 90 {
					t.Errorf("prefix %q: want t<N>:<name>: and at most 90 bytes", p)
				}
				if strings.ContainsAny(p, " /*?[]\\{}") {
					t.Errorf("prefix %q holds a special character", p)
				}
				if seen[p] {
					t.Errorf("prefix %q handed out twice", p)
				}
				seen[p] = true
			}
		})
	}
}

// TestStartAOFRestart writes to a dedicated server with AOF on, restarts it
// gracefully and after a crash, and reads the data back each time.
func TestStartAOFRestart(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithAOF())
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s.URL(), err)
	}
	if opt.Addr != s.Addr() {
		t.Fatalf("URL %q names %q, Addr is %q", s.URL(), opt.Addr, s.Addr())
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })

	mustSet(t, c, "a", "1")
	addr := s.Addr()
	s.Restart()
	if s.Addr() != addr {
		t.Fatalf("Addr after Restart = %q, want %q", s.Addr(), addr)
	}
	mustGet(t, c, "a", "1")

	mustSet(t, c, "b", "2")
	s.Kill()
	if conn, err := net.Dial("tcp", s.Addr()); err == nil {
		conn.Close()
		t.Fatal("the server still accepts connections after Kill")
	}
	s.Restart()
	mustGet(t, c, "a", "1")
	mustGet(t, c, "b", "2")

	s.Stop()
	s.Stop() // a second Stop does nothing
	s.Restart()
	mustGet(t, c, "b", "2")
}

// TestStartWithoutAOFForgets checks that a default dedicated server keeps
// no data across a restart (no RDB, no AOF).
func TestStartWithoutAOFForgets(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { c.Close() })

	mustSet(t, c, "a", "1")
	s.Restart()
	if err := c.Get(t.Context(), "a").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET a after restart: err = %v, want redis.Nil", err)
	}
}

// TestUnavailable runs this test binary again with no redis-server on PATH:
// tests that ask for Redis skip, or fail when CI=true.
func TestUnavailable(t *testing.T) {
	if os.Getenv("REDISTEST_PROBE") != "" {
		t.Skip("already in the probe")
	}
	t.Parallel()
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{ci: "", wantFail: false, want: "--- SKIP: TestProbe/new"},
		{ci: "false", wantFail: false, want: "--- SKIP: TestProbe/start"},
		{ci: "true", wantFail: true, want: "Redis is required when CI=true"},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestProbe$", "-test.v", "-test.count=1")
			cmd.Env = append(envWithout("PATH", "CI", "REDISTEST_PROBE", redistest.ClusterEnv),
				"PATH="+t.TempDir(), "CI="+tc.ci, "REDISTEST_PROBE=1",
				"GORACE=atexit_sleep_ms=0") // a -race binary otherwise waits 1 s at exit
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("run probe: %v", err)
			}
			if failed := err != nil; failed != tc.wantFail {
				t.Errorf("probe failed = %v, want %v", failed, tc.wantFail)
			}
			for _, want := range []string{tc.want, `"redis-server": executable file not found`} {
				if !strings.Contains(string(out), want) {
					t.Errorf("probe output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestProbe is what TestUnavailable runs; on its own it does nothing.
func TestProbe(t *testing.T) {
	if os.Getenv("REDISTEST_PROBE") == "" {
		t.Skip("run by TestUnavailable")
	}
	t.Run("new", func(t *testing.T) {
		redistest.New(t)
		t.Error("New returned without a server")
	})
	t.Run("start", func(t *testing.T) {
		redistest.Start(t)
		t.Error("Start returned without a server")
	})
}

func envWithout(names ...string) []string {
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}

// countKeys counts the keys under prefix, on every master of a cluster.
func countKeys(t *testing.T, c redis.UniversalClient, prefix string) int {
	t.Helper()
	count := func(ctx context.Context, c *redis.Client) (int, error) {
		keys, err := c.Keys(ctx, prefix+"*").Result()
		return len(keys), err
	}
	ctx := context.Background()
	n, err := 0, error(nil)
	switch c := c.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			k, err := count(ctx, node)
			mu.Lock()
			n += k
			mu.Unlock()
			return err
		})
	case *redis.Client:
		n, err = count(ctx, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustSet(t *testing.T, c *redis.Client, key, val string) {
	t.Helper()
	if err := c.Set(t.Context(), key, val, 0).Err(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
}

func mustGet(t *testing.T, c *redis.Client, key, want string) {
	t.Helper()
	got, err := c.Get(t.Context(), key).Result()
	if err != nil || got != want {
		t.Fatalf("GET %s = %q, %v; want %q", key, got, err, want)
	}
}

// TestURL checks that URL names what New's client talks to, in the form
// relay's RELAY_REDIS_URL takes.
func TestURL(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	u := redistest.URL(rdb)
	if _, err := config.Load(nil, func(k string) string { return map[string]string{"RELAY_REDIS_URL": u}[k] }); err != nil {
		t.Fatalf("URL %q: %v", u, err)
	}
	var c redis.UniversalClient
	if config.IsRedisClusterURL(u) {
		opt, err := config.RedisClusterOptions(u)
		if err != nil {
			t.Fatal(err)
		}
		c = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		c = redis.NewClient(opt)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Set(t.Context(), prefix+"k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(t.Context(), prefix+"k").Result(); err != nil || got != "v" {
		t.Fatalf("GET through New's client = %q, %v; want v", got, err)
	}
}
