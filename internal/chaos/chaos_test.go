package chaos

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/redistest"
)

// settings of a chaos run, from the environment.
type settings struct {
	// tasks (RELAY_CHAOS_TASKS, default 1500) are offered at rate per
	// second (RELAY_CHAOS_RATE, default 60), so the load lasts tasks/rate.
	tasks int
	rate  float64
	// followers (RELAY_CHAOS_FOLLOWERS, default 6) follow tasks over SSE.
	followers int
	// drain (RELAY_CHAOS_DRAIN, default 60s) bounds the wait for the last
	// notifications after the load.
	drain time.Duration
	// race (RELAY_CHAOS_RACE, default: as the test binary) builds the
	// relay binary with the race detector.
	race bool
	// seed (RELAY_CHAOS_SEED) seeds the sink's failures.
	seed uint64
	// dir (RELAY_CHAOS_DIR) keeps the relay logs there instead of a
	// temporary directory.
	dir string
	// freeze (RELAY_CHAOS_FREEZE, default 0: off) adds a fault to each
	// cycle: SIGSTOP a relay instance for this long, then SIGCONT.
	freeze time.Duration
	// redisDown (RELAY_CHAOS_REDIS_DOWN, default 3s) is how long Redis
	// stays down after its kill -9.
	redisDown time.Duration
	// workerEvery (RELAY_CHAOS_WORKER_EVERY, default 5: a fifth; 0 none)
	// sends every workerEvery-th load task to the worker queue.
	workerEvery int
	// workers (RELAY_CHAOS_WORKERS, default 8) Go workers claim them, half
	// of them through connections that cut the reply of a share cutRate
	// (RELAY_CHAOS_CUT_RATE, default 0.2) of their event posts.
	workers int
	cutRate float64
	// freshKeys (RELAY_CHAOS_FRESH_KEYS, default false) is a self-test of
	// the suite: the workers send each try of a post under a new
	// Idempotency-Key, so posts replayed after a cut are applied twice and
	// the run must report them.
	freshKeys bool
}

func loadSettings(t *testing.T) settings {
	s := settings{tasks: 1500, rate: 60, followers: 6, drain: 60 * time.Second, race: raceEnabled, seed: uint64(time.Now().UnixNano()),
		redisDown: 3 * time.Second, workerEvery: 5, workers: 8, cutRate: 0.2}
	num := func(name string, into *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				t.Fatalf("%s=%q: want a whole number", name, v)
			}
			*into = n
		}
	}
	num("RELAY_CHAOS_TASKS", &s.tasks)
	num("RELAY_CHAOS_FOLLOWERS", &s.followers)
	num("RELAY_CHAOS_WORKER_EVERY", &s.workerEvery)
	num("RELAY_CHAOS_WORKERS", &s.workers)
	if v := os.Getenv("RELAY_CHAOS_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			t.Fatalf("RELAY_CHAOS_RATE=%q: want tasks per second", v)
		}
		s.rate = f
	}
	if v := os.Getenv("RELAY_CHAOS_CUT_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			t.Fatalf("RELAY_CHAOS_CUT_RATE=%q: want a share from 0 to 1", v)
		}
		s.cutRate = f
	}
	dur := func(name string, into *time.Duration) {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			*into = d
		}
	}
	dur("RELAY_CHAOS_DRAIN", &s.drain)
	dur("RELAY_CHAOS_REDIS_DOWN", &s.redisDown)
	flag := func(name string, into *bool) {
		if v := os.Getenv(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			*into = b
		}
	}
	flag("RELAY_CHAOS_RACE", &s.race)
	flag("RELAY_CHAOS_FRESH_KEYS", &s.freshKeys)
	if v := os.Getenv("RELAY_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RELAY_CHAOS_SEED=%q: %v", v, err)
		}
		s.seed = n
	}
	dur("RELAY_CHAOS_FREEZE", &s.freeze)
	s.dir = os.Getenv("RELAY_CHAOS_DIR")
	return s
}

// Load shape: each load task is the task event, loadSteps working updates
// and completed (6 notifications), about loadDelayMs apart; each SSE task
// has sseSteps updates, so it spans more of the faults.
const (
	loadSteps, loadDelayMs = 4, 200
	sseSteps, sseDelayMs   = 20, 150
	instances              = 3
	// relayDown is how long a killed relay instance stays down.
	relayDown = 3 * time.Second
	// Each worker task is workerSteps working updates workerDelay apart,
	// then completed, each a post of its own.
	workerSteps, workerDelay = 3, 100 * time.Millisecond
	// sharerGap is the pause between the rounds of the two clients that
	// name the same contexts.
	sharerGap = time.Second
)

// The clients' API keys (one for the load, two that share contexts), the
// admin token (delivery log) and the worker token of the chaos relays.
const (
	loadKey     = "chaos-load-key-0123456789"
	adminToken  = "chaos-admin-token-0123456789"
	workerToken = "chaos-worker-token-0123456789"
	// secretKey encrypts push config secrets at rest (required with client
	// authentication): kid "chaos", 32 bytes of 'c' in base64.
	secretKey = "chaos:Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2M="
)

// sharerKeys are the API keys of the clients that name the same contexts.
var sharerKeys = map[string]string{"alice": "chaos-alice-key-0123456789", "bob": "chaos-bob-key-0123456789"}

// relayYAML routes the skill WorkSkill to the worker queue WorkQueue; the
// default backend, the demo agent, takes the rest.
var relayYAML = fmt.Sprintf("agent:\n  skills:\n    - {id: echo, name: Echo}\n    - {id: %s, name: Work, backend: 'worker:%s'}\n",
	WorkSkill, WorkQueue)

// TestChaos runs three relay processes over one Redis with AOF
// (appendfsync always: every write Redis acknowledged is on disk, so even
// kill -9 of Redis loses none; the suite relies on that for the Redis
// crash), sends RELAY_CHAOS_TASKS tasks round-robin to them (retrying a
// failed send on the next instance), follows some tasks over SSE, and makes
// the webhook sink fail 15% of POSTs at random (500), answer 503 with
// Retry-After: 1 to a tenth of the tasks for their first 2 seconds, take
// 300 ms to accept 3% of POSTs and 2.5 s (beyond relay's 2 s delivery
// timeout, so relay sends them again) to accept 0.2%. During the
// load it kills -9 a relay instance and restarts it 3 s later, restarts
// Redis gracefully (SIGTERM, AOF reload), then kills -9 Redis and restarts
// it from its AOF a second later; a longer load repeats that cycle about
// every 25 s. It then waits for delivery to drain and checks relay's
// guarantees against what Redis committed (see the package comment).
//
// Relay instances run with fast retries (100ms to 1s, 1000 attempts) and
// a 2 s delivery timeout, so notifications left unacknowledged by a killed
// instance are reclaimed after 7 s.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos suite: skipped with -short")
	}
	st := loadSettings(t)
	began := time.Now()
	srv := redistest.Start(t, redistest.WithAOF()) // skips without redis-server (fails with CI=true)
	rdb := srv.Client()

	dir := st.dir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bin, err := Build(ctx, dir, st.race)
	if err != nil {
		t.Fatal(err)
	}
	built := time.Since(began)

	sink, err := NewSink(SinkConfig{FailRate: 0.15, Unavailable: unavailable, UnavailableFor: 2 * time.Second, RetryAfter: 1,
		SlowRate: 0.03, SlowDelay: 300 * time.Millisecond, HangRate: 0.002, HangDelay: 2500 * time.Millisecond, Seed: st.seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Close)

	yamlPath := filepath.Join(dir, "relay.yaml")
	if err := os.WriteFile(yamlPath, []byte(relayYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	apiKeys := []string{"load:" + auth.HashAPIKey(loadKey)}
	for name, key := range sharerKeys {
		apiKeys = append(apiKeys, name+":"+auth.HashAPIKey(key))
	}
	relays := make([]*Relay, instances)
	addrs := make([]string, instances)
	for i := range relays {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = addr
		relays[i] = &Relay{Name: fmt.Sprintf("relay-%d", i), Bin: bin, Addr: addr, LogPath: filepath.Join(dir, fmt.Sprintf("relay-%d.log", i)),
			Env: []string{"RELAY_REDIS_URL=redis://" + srv.Addr(), "RELAY_AUTH=required", "RELAY_API_KEYS=" + strings.Join(apiKeys, ","),
				"RELAY_ADMIN_TOKENS=" + adminToken, "RELAY_WORKER_TOKENS=" + workerToken, "RELAY_CONFIG=" + yamlPath, "RELAY_SECRET_KEYS=" + secretKey,
				"RELAY_WORKER_REOFFER_AFTER=2s", "RELAY_RATE_LIMIT=0",
				"RELAY_CLIENT_MAX_STORAGE_BYTES=0", "RELAY_CLIENT_MAX_TASKS=0", // the load is one client's
				"RELAY_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8", "RELAY_RETRY_INITIAL=100ms", "RELAY_RETRY_MAX_INTERVAL=1s",
				"RELAY_RETRY_MAX_ATTEMPTS=1000", "RELAY_RETRY_MAX_ELAPSED=10m", "RELAY_DELIVERY_TIMEOUT=2s",
				"RELAY_DEMO_STEP_DELAY=20ms", "RELAY_SHUTDOWN_TIMEOUT=5s", "RELAY_STREAM_KEEPALIVE=2s", "RELAY_LOG_LEVEL=info",
				"RELAY_WORKER_LEASE=3s", // a killed instance's demo tasks move within seconds, and so do a lost worker's
				// The sink fails on purpose, and every notification must reach it:
				// no endpoint is disabled here (its notifications would be skipped).
				"RELAY_WEBHOOK_DISABLE_AFTER_FAILURES=0", "RELAY_WEBHOOK_DISABLE_AFTER=0"}}
	}
	t.Cleanup(func() {
		for _, r := range relays {
			r.Kill()
		}
		if t.Failed() {
			for _, r := range relays {
				t.Logf("last lines of %s (%s):\n%s", r.Name, r.LogPath, r.Tail(40))
			}
		}
	})
	for _, r := range relays {
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	targets := make([]string, len(relays))
	bases := make([]string, len(relays))
	for i, r := range relays {
		targets[i], bases[i] = r.URL(), r.Base()
	}
	t.Logf("chaos: %d tasks at %.0f/s over %d relays (race %v, built in %s), every %d to %d workers (%d cutting %.0f%% of post replies, fresh keys %v), %d SSE followers, sink seed %d, logs in %s",
		st.tasks, st.rate, instances, st.race, built.Round(100*time.Millisecond), st.workerEvery, st.workers, st.workers/2, 100*st.cutRate,
		st.freshKeys, st.followers, st.seed, dir)

	// The workers, until the tasks have drained.
	workerLog, err := os.Create(filepath.Join(dir, "workers.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = workerLog.Close() })
	fleet := NewFleet(FleetConfig{Addrs: addrs, Token: workerToken, Workers: st.workers, Cut: st.workers / 2, CutRate: st.cutRate,
		Steps: workerSteps, Delay: workerDelay, FreshKeys: st.freshKeys, Seed: st.seed, Log: slog.New(slog.NewTextHandler(workerLog, nil))})
	workCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	fleet.Start(workCtx)
	t.Cleanup(fleet.Wait)

	// SSE followers, until the load ends.
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	loadEnded := make(chan struct{})
	followers := make([]*Follower, st.followers)
	var following sync.WaitGroup
	for i := range followers {
		followers[i] = &Follower{Index: i, Targets: targets, Hook: sink.URL(), Key: loadKey, Steps: sseSteps, DelayMs: sseDelayMs, CutRate: 0.05}
		following.Go(func() { followers[i].Run(followCtx, loadEnded) })
	}

	// Two clients naming the same contexts, until the load ends.
	var sharers []*Sharer
	for _, name := range slices.Sorted(maps.Keys(sharerKeys)) {
		sharers = append(sharers, &Sharer{Name: name, Key: sharerKeys[name], Targets: targets, Hook: sink.URL()})
	}
	var shared []SharedTask
	sharing := make(chan struct{})
	go func() {
		defer close(sharing)
		shared = RunSharers(ctx, sharers, sharerGap, loadEnded)
	}()

	// The load, in the background.
	loadStart := time.Now()
	var load LoadResult
	var loadErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		load, loadErr = RunLoad(ctx, LoadConfig{Targets: targets, Hook: sink.URL(), Key: loadKey, Tasks: st.tasks, Rate: st.rate,
			Concurrency: 32, Steps: loadSteps, DelayMs: loadDelayMs, WorkerEvery: st.workerEvery, GiveUp: time.Minute})
	}()

	// The faults, from this goroutine (the redistest server wants it).
	report := &Report{}
	fault := func(format string, args ...any) {
		msg := fmt.Sprintf("%6.2fs ", time.Since(loadStart).Seconds()) + fmt.Sprintf(format, args...)
		report.Faults = append(report.Faults, msg)
		t.Log("chaos: " + msg)
	}
	for _, f := range schedule(float64(st.tasks)/st.rate, st.freeze, st.redisDown) {
		select {
		case <-time.After(time.Until(loadStart.Add(f.at))):
		case <-ctx.Done():
		}
		switch f.what {
		case killRelay:
			relays[f.relay].Kill()
			fault("kill -9 %s", relays[f.relay].Name)
		case startRelay:
			t0 := time.Now()
			if err := relays[f.relay].Start(ctx); err != nil {
				t.Fatal(err)
			}
			fault("restarted %s (up in %s)", relays[f.relay].Name, time.Since(t0).Round(time.Millisecond))
		case restartRedis:
			t0 := time.Now()
			srv.Restart() // SIGTERM, then start again from the AOF
			fault("restarted Redis gracefully (SIGTERM, AOF reload): down %s", time.Since(t0).Round(time.Millisecond))
		case killRedis:
			srv.Kill()
			fault("kill -9 Redis")
		case freezeRelay:
			relays[f.relay].Freeze()
			fault("SIGSTOP %s", relays[f.relay].Name)
		case thawRelay:
			relays[f.relay].Thaw()
			fault("SIGCONT %s", relays[f.relay].Name)
		case startRedis:
			t0 := time.Now()
			srv.Restart()
			fault("restarted Redis from its AOF (loaded in %s)", time.Since(t0).Round(time.Millisecond))
		}
	}
	<-loaded
	close(loadEnded)
	<-sharing
	if loadErr != nil {
		t.Fatalf("load: %v", loadErr)
	}
	t.Logf("chaos: load sent %d tasks in %s (%d failed sends retried); the two clients sharing contexts %d",
		len(load.Sent), load.Elapsed.Round(time.Millisecond), load.FailedSends, len(shared))
	// Every task a client got an id for: the load's, and the sharers'.
	sent := slices.Clone(load.Sent)
	for _, s := range shared {
		sent = append(sent, Sent{I: -1, TaskID: s.TaskID, Target: s.Client + " in " + s.ContextID, Worker: true})
	}

	drain(t, ctx, rdb, sink, followers, sent, st.drain)
	stopFollowing()
	following.Wait()
	stopWorkers()
	fleet.Wait()
	var followed []Followed
	for _, f := range followers {
		followed = append(followed, f.Tasks()...)
	}
	tr, err := ReadTruth(ctx, rdb, owners...)
	if err != nil {
		t.Fatalf("read Redis: %v", err)
	}

	report.FailedSends = load.FailedSends
	CheckTasks(report, tr, sent)
	report.Posts, report.CutReplies, report.WorkerRetries = fleet.posts.Load(), fleet.cuts.Load(), fleet.tries.Load()
	claims := fleet.Claims()
	CheckWorkers(report, tr, load.Sent, shared, claims, fleet.Acked())
	CheckContexts(ctx, report, tr, sharers, shared, claims, targets)
	receipts := sink.Receipts()
	CheckSink(report, tr, receipts)
	CheckRetryAfter(report, receipts, time.Second)
	CheckFollowers(report, tr, followed)
	CheckDeliveryLog(ctx, report, tr, bases, adminToken)
	if _, dead, err := Outstanding(ctx, rdb, 16); err != nil || dead > 0 {
		report.violate("dead letters: %d (%v)", dead, err)
	}
	for _, r := range relays {
		r.Stop(10 * time.Second) // a graceful shutdown, which also flushes race reports
		for _, c := range r.Crashes() {
			report.violate("%s", c)
		}
		for _, l := range r.Grep("panic", "DATA RACE", "fatal error") {
			report.violate("%s log: %s", r.Name, truncate(l, 300))
		}
	}
	report.Elapsed = time.Since(began)
	t.Logf("chaos report:\n%s", report)
	if len(report.Violations) > 0 {
		t.Errorf("chaos: %d violations:\n%s", len(report.Violations), strings.Join(report.Violations, "\n"))
	}
}

// owners are the principals of the chaos clients, whose task indexes
// Truth reads.
var owners = []string{"key:load", "key:alice", "key:bob"}

// unavailable picks the tasks the sink answers 503 for a while: a tenth.
func unavailable(taskID string) bool {
	h := fnv.New32a()
	h.Write([]byte(taskID))
	return h.Sum32()%10 == 0
}

type faultKind int

const (
	killRelay faultKind = iota
	startRelay
	restartRedis
	killRedis
	startRedis
	freezeRelay
	thawRelay
)

type plannedFault struct {
	at    time.Duration
	what  faultKind
	relay int
}

// schedule plans the faults over a load of loadSeconds: one cycle (kill
// and restart a relay instance, restart Redis, kill Redis and restart it
// redisDown later, and with freeze > 0 pause another instance that long)
// per 25 s of load, at least one, each cycle at least 14 s long.
func schedule(loadSeconds float64, freeze, redisDown time.Duration) []plannedFault {
	rounds := max(1, int(loadSeconds/25))
	window := max(loadSeconds/float64(rounds), 14)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	var out []plannedFault
	for r := range rounds {
		base := float64(r) * window
		victim := (instances - 1 + r) % instances
		out = append(out,
			plannedFault{at: sec(base + 0.15*window), what: killRelay, relay: victim},
			plannedFault{at: sec(base+0.15*window) + relayDown, what: startRelay, relay: victim},
			plannedFault{at: sec(base + 0.45*window), what: restartRedis},
			plannedFault{at: sec(base + 0.75*window), what: killRedis},
			plannedFault{at: sec(base+0.75*window) + redisDown, what: startRedis},
		)
		if freeze > 0 {
			other := (victim + 1) % instances
			out = append(out,
				plannedFault{at: sec(base + 0.3*window), what: freezeRelay, relay: other},
				plannedFault{at: sec(base+0.3*window) + freeze, what: thawRelay, relay: other})
		}
	}
	slices.SortStableFunc(out, func(a, b plannedFault) int { return cmp.Compare(a.at, b.at) })
	return out
}

// drain waits until every notification owed for what Redis holds was
// accepted by the sink, none is pending or awaiting a retry, every SSE
// follower has caught up with its task, every acknowledged task has ended
// (or waits for input), and no task has changed for 1.5 s;
// or until timeout (the checks then say what is missing).
func drain(t *testing.T, ctx context.Context, rdb redis.UniversalClient, sink *Sink, followers []*Follower, sent []Sent, timeout time.Duration) {
	t0 := time.Now()
	deadline := t0.Add(timeout)
	lastEvents, quietSince := -1, time.Now()
	for {
		tr, err := ReadTruth(ctx, rdb, owners...)
		if err != nil {
			t.Fatalf("drain: read Redis: %v", err)
		}
		var ids []string
		for _, n := range tr.Notifications() {
			ids = append(ids, n.ID)
		}
		missing := sink.Missing(ids)
		open, _, err := Outstanding(ctx, rdb, 16)
		if err != nil {
			t.Fatalf("drain: read Redis: %v", err)
		}
		lagging := 0
		for _, f := range followers {
			for _, fl := range f.Tasks() {
				task := tr.Tasks[fl.TaskID]
				if !fl.Final && fl.NotFollowed == "" && (task == nil || fl.Last() != task.LastEventID()) {
					lagging++
				}
			}
		}
		unfinished := 0 // acknowledged tasks still under way (e.g. waiting for a takeover)
		for _, s := range sent {
			if task := tr.Tasks[s.TaskID]; task != nil && !task.State.Terminal() && !task.State.Interrupted() {
				unfinished++
			}
		}
		if n := tr.Events(); n != lastEvents {
			lastEvents, quietSince = n, time.Now()
		}
		quiet := time.Since(quietSince)
		if len(missing) == 0 && open == 0 && lagging == 0 && unfinished == 0 && quiet >= 1500*time.Millisecond {
			t.Logf("chaos: drained in %s", time.Since(t0).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Logf("chaos: not drained after %s: %d notifications not delivered, %d pending or retrying, %d SSE followers behind, %d tasks under way, quiet for %s",
				timeout, len(missing), open, lagging, unfinished, quiet.Round(time.Millisecond))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
