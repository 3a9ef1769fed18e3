package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/bench"
	"github.com/a2arelay/relay/internal/config"
)

// benchFlags are relay bench's settings beyond bench.Config.
type benchFlags struct {
	mode, redisURL, redisInfoURL, cpuProfile, memProfile string
	workers, instances                                   int
}

// benchCmd runs the load tool against an in-process relay (embedded store,
// or --redis-url), or against a running one (--target; it must allow
// webhooks to 127.0.0.0/8), or, with --ceiling, against no relay at all.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	bc, f, ok := parseBench(args, stderr)
	if !ok {
		return 2
	}
	stopProfiles, err := startProfiles(f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "relay bench: %v\n", err)
		return 1
	}
	defer stopProfiles()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if bc.Ceiling {
		fmt.Fprintf(stdout, "relay bench --ceiling: the raw POST ceiling, no relay: %d clients POST %d tasks x %d notifications straight to the sink\n",
			bc.Concurrency, bc.Tasks, bc.Steps+2)
	} else {
		shutdown, err := startTargets(ctx, &bc, f)
		defer shutdown()
		if err != nil {
			fmt.Fprintf(stderr, "relay bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "relay bench: %d tasks x %d notifications, %d clients, targets %s\n", bc.Tasks, bc.Steps+2, bc.Concurrency, strings.Join(bc.Targets, ","))
	}
	res, err := bench.Run(ctx, bc)
	if res.Tasks > 0 {
		fmt.Fprintln(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "relay bench: %v\n", err)
		return 1
	}
	if res.Lost > 0 || res.WrongToken > 0 {
		return 1
	}
	return 0
}

// parseBench parses relay bench's flags; it reports bad usage on stderr
// and returns false.
func parseBench(args []string, stderr io.Writer) (bench.Config, benchFlags, bool) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bc bench.Config
	var f benchFlags
	fs.IntVar(&bc.Tasks, "tasks", 2000, "tasks to send")
	fs.IntVar(&bc.Concurrency, "concurrency", 32, "concurrent clients")
	fs.IntVar(&bc.Steps, "steps", 4, "working updates per task (notifications per task = steps + 2)")
	fs.DurationVar(&bc.Delay, "delay", 20*time.Millisecond, "demo agent pause between events")
	fs.IntVar(&bc.Rate, "rate", 0, "offered notifications per second (0: as fast as the clients can send)")
	fs.BoolVar(&bc.Closed, "closed", false, "closed loop: each client waits for its task's completed notification before sending the next")
	fs.DurationVar(&bc.Window, "timeline", 0, "also print, for each window of this width (e.g. 100ms), the status updates received and their latency")
	fs.BoolVar(&bc.Ceiling, "ceiling", false, "start no relay: the clients POST each task's notifications straight to the sink (the raw POST ceiling to compare relay's rate with); relay-only flags are ignored")
	fs.StringVar(&f.mode, "mode", "push", "push: webhooks; stream: every client streams its task over SSE")
	fs.StringVar(&bc.Target, "target", "", "A2A endpoint of a running relay, or several comma-separated (default: start relay in-process)")
	fs.StringVar(&f.redisURL, "redis-url", "", "Redis of the in-process relay (default: the embedded store)")
	fs.StringVar(&f.redisInfoURL, "redis-info-url", "", "Redis whose INFO deltas (commands, CPU, memory per notification) to report, e.g. that of the --target relay (default: --redis-url)")
	fs.IntVar(&f.workers, "workers", 0, "delivery workers of each in-process relay (0: RELAY_DELIVERY_WORKERS, default 256)")
	fs.IntVar(&f.instances, "instances", 1, "in-process relay instances over the same Redis (needs --redis-url for more than 1); tasks go to them in turn")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&f.memProfile, "memprofile", "", "write an allocation profile of the run to this file")
	if err := fs.Parse(args); err != nil {
		return bc, f, false
	}
	usage := func(msg string, a ...any) (bench.Config, benchFlags, bool) {
		fmt.Fprintf(stderr, "relay bench: "+msg+"\n", a...)
		return bc, f, false
	}
	switch {
	case f.mode != "push" && f.mode != "stream":
		return usage("--mode must be push or stream, not %q", f.mode)
	case bc.Ceiling && f.mode == "stream":
		return usage("--ceiling posts webhooks: it takes no --mode stream")
	case !bc.Ceiling && f.instances > 1 && f.redisURL == "":
		return usage("--instances above 1 needs --redis-url (instances share one Redis)")
	}
	if err := bench.CheckWindow(bc.Window); err != nil {
		return usage("--timeline: %v", err)
	}
	bc.Stream = f.mode == "stream"
	return bc, f, true
}

// startProfiles starts the profiles f asks for and returns what writes
// them at the end of the run.
func startProfiles(f benchFlags, stderr io.Writer) (func(), error) {
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	if f.cpuProfile != "" {
		file, err := os.Create(f.cpuProfile)
		if err != nil {
			return stopAll, err
		}
		if err := pprof.StartCPUProfile(file); err != nil {
			file.Close()
			return stopAll, err
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); file.Close() })
	}
	if f.memProfile != "" {
		stops = append(stops, func() { writeAllocs(f.memProfile, stderr) })
	}
	return stopAll, nil
}

// startTargets starts the in-process relays when bc has no target, sets
// bc.Targets, and connects bc.Redis to the Redis whose INFO to read (if
// any). The function it returns closes and stops what it started, also
// after an error.
func startTargets(ctx context.Context, bc *bench.Config, f benchFlags) (func(), error) {
	var stops []func()
	stopAll := func() {
		for _, stop := range slices.Backward(stops) {
			stop()
		}
	}
	if bc.Target == "" {
		prefix := fmt.Sprintf("bench%d", time.Now().UnixNano())
		for range max(f.instances, 1) {
			a, err := startInProcess(ctx, f.redisURL, prefix, f.workers)
			if err != nil {
				return stopAll, err
			}
			stops = append(stops, func() { a.Shutdown(context.Background()) })
			bc.Targets = append(bc.Targets, "http://"+a.Addr()+"/")
		}
	} else {
		bc.Targets = strings.Split(bc.Target, ",")
	}
	bc.Target = bc.Targets[0]
	if url := cmp.Or(f.redisInfoURL, f.redisURL); url != "" {
		rdb, err := redisInfoClient(url)
		if err != nil {
			return stopAll, fmt.Errorf("--redis-info-url: %w", err)
		}
		stops = append(stops, func() { rdb.Close() })
		bc.Redis = rdb
	}
	return stopAll, nil
}

// redisInfoClient connects to the Redis (or Redis Cluster) that url names,
// as relay's RELAY_REDIS_URL would.
func redisInfoClient(url string) (redis.UniversalClient, error) {
	off := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if config.IsRedisClusterURL(url) {
		opt, err := config.RedisClusterOptions(url)
		if err != nil {
			return nil, err
		}
		opt.MaintNotificationsConfig = off
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opt.MaintNotificationsConfig = off
	return redis.NewClient(opt), nil
}
func startInProcess(ctx context.Context, redisURL, prefix string, workers int) (*app.App, error) {
	cfg, err := config.Load(nil, os.Getenv) // RELAY_* settings apply to the in-process relay
	if err != nil {
		return nil, err
	}
	cfg.Addr, cfg.RedisURL = "127.0.0.1:0", redisURL
	if workers > 0 {
		cfg.DeliveryWorkers = workers
	}
	cfg.Auth, cfg.Security.RateLimit = "none", 0 // a local load run: no client credentials, no limit,
	// and no storage budget: every task is the one anonymous client's
	cfg.Security.ClientMaxStorageBytes, cfg.Security.ClientMaxTasks = 0, 0
	cfg.RedisPrefix = prefix
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	a, err := app.New(app.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, cfg)
	if err != nil {
		return nil, err
	}
	return a, a.Start(ctx)
}

// writeAllocs writes the allocation profile (every allocation since the
// start, by where it was made) to path.
func writeAllocs(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "relay bench: %v\n", err)
	}
}
