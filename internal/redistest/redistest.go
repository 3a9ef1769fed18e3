// Package redistest runs real redis-server processes for tests.
//
// A package whose tests need Redis calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// Main starts one redis-server on a free 127.0.0.1 port for the whole test
// binary. Each test then calls New, which returns a client to that server and
// a key prefix of its own ("t<N>:<TestName>:"), so tests run in parallel
// without seeing each other's keys; the prefix's keys are deleted when the
// test ends. Tests that must stop, kill or restart Redis call Start, which
// gives them a dedicated server (optionally with AOF on); Start does not
// need Main.
//
// When the environment variable RELAY_TEST_REDIS_CLUSTER holds a
// comma-separated list of seed addresses of a Redis Cluster, Main starts no
// server: New then returns a cluster client to it (with a key prefix per
// test as usual), and URL names it as relay's redis+cluster:// URL.
// scripts/redis-cluster-test.sh runs the whole suite that way. Start still
// starts a single dedicated server.
//
// When redis-server cannot be found or started, tests that ask for Redis are
// skipped with the reason, unless the environment variable CI is true: then
// they fail, so a CI machine without Redis cannot pass by skipping everything.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"go.uber.org/goleak"
)

// ClusterEnv names the environment variable that points the tests at a
// Redis Cluster: a comma-separated list of seed addresses (host:port).
const ClusterEnv = "RELAY_TEST_REDIS_CLUSTER"

// sharedServer is the redis-server Main starts for the whole test binary,
// or the Redis Cluster ClusterEnv names.
type sharedServer struct {
	proc    *process // nil when err is set or in cluster mode
	cluster []string // the cluster's seed addresses (cluster mode)
	err     error    // why there is no server
	seq     atomic.Uint64
}

// shared is the package's only mutable state. It exists because TestMain
// (which starts the server) and the tests (which call New) have no other
// way to share it: Main sets it before m.Run and clears it after.
var (
	sharedMu sync.Mutex
	shared   *sharedServer
)

// Main starts the test binary's redis-server, runs the tests, stops the server
// and removes its directory. Call it from TestMain and return: the testing
// package then exits with m.Run's code (Main calls os.Exit itself only when
// CheckLeaks finds goroutines left running, after the server is gone).
//
// If redis-server cannot be started, the tests still run, and New reports
// the reason when it is called (skip, or fail when CI is true).
func Main(m *testing.M, opts ...MainOption) {
	var o mainOptions
	for _, opt := range opts {
		opt(&o)
	}
	s := &sharedServer{}
	var dir string
	var err error
	if seeds := os.Getenv(ClusterEnv); seeds != "" {
		s.cluster = strings.Split(seeds, ",")
		err = clusterReady(s.cluster)
	} else if dir, err = os.MkdirTemp("", "redistest-"); err == nil {
		s.proc, err = startFreePort(dir, baseArgs())
	}
	if err != nil {
		s.err = err
		fmt.Fprintf(os.Stderr, "redistest: no Redis for these tests: %v\n", err)
	}

	sharedMu.Lock()
	shared = s
	sharedMu.Unlock()

	var leaked error
	defer func() { // last, once the server is gone and its directory removed
		if leaked != nil {
			fmt.Fprintf(os.Stderr, "redistest: %v\n", leaked)
			os.Exit(1)
		}
	}()
	defer func() {
		sharedMu.Lock()
		shared = nil
		sharedMu.Unlock()
		if s.proc != nil {
			s.proc.kill()
		}
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}()
	before := goleak.IgnoreCurrent() // the shared server's own goroutines
	if code := m.Run(); code == 0 && o.leaks {
		leaked = findLeaks(before)
	}
}

// CheckLeaksMain is TestMain for a package whose tests start goroutines but
// use no shared server (no New; Start works without Main): it runs the
// tests and, when they pass, fails the test binary like Main with
// CheckLeaks if goroutines are left running.
func CheckLeaksMain(m *testing.M) {
	before := goleak.IgnoreCurrent()
	if code := m.Run(); code == 0 {
		if err := findLeaks(before); err != nil {
			fmt.Fprintf(os.Stderr, "redistest: %v\n", err)
			os.Exit(1)
		}
	}
}

// leakWait bounds the wait for the goroutines of what the tests stopped to
// end. fasthttp's servers clean their idle workers in a goroutine that
// sleeps MaxIdleWorkerDuration (10 s by default, which fiber does not set)
// between rounds and sees Stop only when it wakes: a server shut down just
// before the tests ended keeps that goroutine up to 10 s longer.
const leakWait = 12 * time.Second

// findLeaks returns an error naming the goroutines, other than those of
// before, that are still running after leakWait.
func findLeaks(before goleak.Option) error {
	// The goroutines the package's tests started must be gone once they
	// have ended (shutdowns wait for what they started, or for what ends by
	// itself soon after). fasthttp's clients clean their idle connections
	// in goroutines of their own, which end by themselves once a client is
	// idle; its servers share one clock goroutine that never ends.
	opts := []goleak.Option{before,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1")}
	deadline := time.Now().Add(leakWait)
	for {
		err := goleak.Find(opts...) // retries for a moment itself
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutines leaked by the tests (still running %v after the tests ended): %w", leakWait, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// MainOption adjusts Main.
type MainOption func(*mainOptions)

type mainOptions struct{ leaks bool }

// CheckLeaks makes Main fail the test binary when goroutines are left
// running after every test passed (goleak): for the packages that start
// goroutines.
func CheckLeaks() MainOption { return func(o *mainOptions) { o.leaks = true } }

// New returns a client to the server Main started (a *redis.Client, or a
// *redis.ClusterClient in cluster mode) and a key prefix that no other test
// in the binary uses. Prefix every key the test writes with it. When the
// test ends, the prefix's keys are deleted and the client closed.
//
// New fails the test if Main was not called from TestMain.
func New(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	sharedMu.Lock()
	s := shared
	sharedMu.Unlock()
	if s == nil {
		t.Fatal("redistest.New: no server; call redistest.Main(m) from the package's TestMain")
	}
	if s.err != nil {
		unavailable(t, s.err)
	}

	prefix := fmt.Sprintf("t%d:%s:", s.seq.Add(1), sanitize(t.Name()))
	client := s.client()
	t.Cleanup(func() {
		_ = client.Close() // the test may have closed it already
		if err := s.deletePrefix(prefix); err != nil {
			t.Errorf("redistest: delete keys %s*: %v", prefix, err)
		}
	})
	return client, prefix
}

// URL returns the RELAY_REDIS_URL that names what a client from New talks
// to: redis://host:port, or redis+cluster://host:port,... for a cluster.
func URL(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return "redis://" + c.Options().Addr
	case *redis.ClusterClient:
		return "redis+cluster://" + strings.Join(c.Options().Addrs, ",")
	}
	panic(fmt.Sprintf("redistest.URL: a %T is not a client from New", rdb))
}

// client returns a new client to the shared server or cluster.
func (s *sharedServer) client() redis.UniversalClient {
	if s.cluster != nil {
		return newClusterClient(s.cluster)
	}
	return newClient(s.proc.addr)
}

// unavailable skips t because Redis cannot be used, or fails it when CI is true.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if inCI() {
		t.Fatalf("redistest: Redis is required when CI=true: %v", err)
	}
	hint := ""
	if errors.Is(err, exec.ErrNotFound) {
		hint = " (install redis-server, e.g. apt-get install redis-server)"
	}
	t.Skipf("redistest: skipping, no Redis%s; with CI=true this fails: %v", hint, err)
}

// inCI reports whether the environment variable CI is true (true, 1, ...).
func inCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// newClient returns a go-redis client to addr. Maintenance notifications (a
// Redis Enterprise feature) are off so the client does not probe for them.
func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: addr,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
}

// newClusterClient returns a go-redis cluster client to the cluster of seeds.
func newClusterClient(seeds []string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: seeds,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
}

// clusterReady checks that the cluster of seeds answers and serves every
// hash slot.
func clusterReady(seeds []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := newClusterClient(seeds)
	defer c.Close()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("%s=%s: %w", ClusterEnv, strings.Join(seeds, ","), err)
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return fmt.Errorf("%s=%s: cluster_state is not ok", ClusterEnv, strings.Join(seeds, ","))
	}
	return nil
}

// deletePrefix unlinks every key that starts with prefix, on every master
// of a cluster, using a client of its own so that it works even if the test
// closed its client.
func (s *sharedServer) deletePrefix(prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.cluster == nil {
		c := newClient(s.proc.addr)
		defer c.Close()
		return deleteOn(ctx, c, prefix)
	}
	c := newClusterClient(s.cluster)
	defer c.Close()
	return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		return deleteOn(ctx, node, prefix)
	})
}

// deleteOn unlinks the keys under prefix that one server holds. Each key is
// unlinked on its own, since the keys of a cluster node span many slots.
func deleteOn(ctx context.Context, c *redis.Client, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if len(keys) > 0 {
			pipe := c.Pipeline()
			for _, k := range keys {
				pipe.Unlink(ctx, k)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("unlink: %w", err)
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// maxNameLen bounds the test-name part of a prefix, so deep subtests do not
// make every key long.
const maxNameLen = 64

// sanitize turns a test name into a piece of a key prefix: letters, digits,
// '_', '-' and '.' are kept, everything else (including '/', the glob
// characters *?[]\ and the hash-tag braces {}) becomes '_'.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '_', c == '-', c == '.':
		default:
			b[i] = '_'
		}
	}
	if len(b) > maxNameLen {
		b = b[:maxNameLen]
	}
	return string(b)
}

// Server is a dedicated redis-server that a test can stop and restart.
// Its methods fail the test on error, so call them from the test's goroutine.
type Server struct {
	t    testing.TB
	dir  string
	args []string

	mu   sync.Mutex
	proc *process // the running process; nil after Stop or Kill
	addr string
}

// Option configures a Server started by Start.
type Option func(*options)

type options struct {
	aof   bool
	extra []string
}

// WithAOF turns on the append-only file with appendfsync always, so that
// every acknowledged write survives Stop, Kill and Restart.
func WithAOF() Option {
	return func(o *options) { o.aof = true }
}

// WithArgs adds redis-server command-line arguments, e.g.
// WithArgs("--maxmemory", "10mb"). They come last, so they override the
// defaults.
func WithArgs(args ...string) Option {
	return func(o *options) { o.extra = append(o.extra, args...) }
}

// Start starts a redis-server for t alone, on a free 127.0.0.1 port, in a
// directory of its own, and waits until it answers PING. The server is
// killed when the test ends. It skips or fails t like New when redis-server
// is not available; if it fails to start with arguments from WithArgs, t
// fails.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	args := baseArgs()
	if o.aof {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	args = append(args, o.extra...)

	s := &Server{t: t, dir: t.TempDir(), args: args}
	// Registered after TempDir, so it runs before the directory is removed.
	t.Cleanup(s.Kill)

	p, err := startFreePort(s.dir, args)
	if err != nil {
		if len(o.extra) > 0 && !errors.Is(err, exec.ErrNotFound) {
			// Most likely the test's own arguments: a bug to report, not a reason to skip.
			t.Fatalf("redistest: start with WithArgs%q: %v", o.extra, err)
		}
		unavailable(t, err)
	}
	s.proc, s.addr = p, p.addr
	return s
}

// Addr returns the server's host:port. It stays the same across Restart.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL returns the server's address as a redis:// URL.
func (s *Server) URL() string {
	return "redis://" + s.Addr()
}

// Client returns a client of the server, closed when the test ends: for a
// test that reads the whole server (INFO commandstats, CommandCalls) or
// stops and starts it.
func (s *Server) Client() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Stop shuts the server down with SIGTERM (with AOF on, Redis flushes it)
// and waits for it to exit. It does nothing if the server is not running.
func (s *Server) Stop() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	if err := s.proc.stop(); err != nil {
		s.t.Errorf("redistest: stop %s: %v", s.addr, err)
	}
	s.proc = nil
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it to
// exit. It does nothing if the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	s.proc.kill()
	s.proc = nil
}

// Restart stops the server if it is running (SIGTERM), then starts it again
// on the same port, in the same directory, with the same arguments, so data
// in its AOF comes back. It returns once the server answers PING (that is,
// once the data is loaded).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := startProcess(s.dir, s.addr, s.args)
	if err != nil {
		s.t.Fatalf("redistest: restart %s: %v", s.addr, err)
	}
	s.proc = p
}

// baseArgs are the arguments every server gets: no RDB snapshots, no AOF,
// stay in the foreground (so it can be waited for and killed).
func baseArgs() []string {
	return []string{"--save", "", "--appendonly", "no", "--daemonize", "no"}
}

// joinArgs renders args for messages, quoting empty ones.
func joinArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" {
			a = `""`
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// lookPath finds redis-server on PATH.
func lookPath() (string, error) {
	return exec.LookPath("redis-server")
}
