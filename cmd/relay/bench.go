package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/a2arelay/relay/internal/app"
	"github.com/a2arelay/relay/internal/bench"
	"github.com/a2arelay/relay/internal/config"
)

// benchCmd runs the load tool against an in-process relay (embedded store,
// or --redis-url), or against a running one (--target; it must allow
// webhooks to 127.0.0.0/8).
func benchCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bc bench.Config
	fs.IntVar(&bc.Tasks, "tasks", 2000, "tasks to send")
	fs.IntVar(&bc.Concurrency, "concurrency", 32, "concurrent clients")
	fs.IntVar(&bc.Steps, "steps", 4, "working updates per task (notifications per task = steps + 2)")
	fs.DurationVar(&bc.Delay, "delay", 20*time.Millisecond, "demo agent pause between events")
	fs.IntVar(&bc.Rate, "rate", 0, "offered notifications per second (0: as fast as the clients can send)")
	fs.BoolVar(&bc.Closed, "closed", false, "closed loop: each client waits for its task's completed notification before sending the next")
	fs.DurationVar(&bc.Window, "timeline", 0, "also print, for each window of this width (e.g. 100ms), the status updates received and their latency")
	mode := fs.String("mode", "push", "push: webhooks; stream: every client streams its task over SSE")
	fs.StringVar(&bc.Target, "target", "", "A2A endpoint of a running relay, or several comma-separated (default: start relay in-process)")
	redisURL := fs.String("redis-url", "", "Redis of the in-process relay (default: the embedded store)")
	workers := fs.Int("workers", 0, "delivery workers of each in-process relay (0: RELAY_DELIVERY_WORKERS, default 256)")
	instances := fs.Int("instances", 1, "in-process relay instances over the same Redis (needs --redis-url for more than 1); tasks go to them in turn")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the run to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *mode != "push" && *mode != "stream" {
		fmt.Fprintf(stderr, "relay bench: --mode must be push or stream, not %q\n", *mode)
		return 2
	}
	if err := bench.CheckWindow(bc.Window); err != nil {
		fmt.Fprintf(stderr, "relay bench: --timeline: %v\n", err)
		return 2
	}
	bc.Stream = *mode == "stream"
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "relay bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "relay bench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		defer writeAllocs(*memProfile, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *instances > 1 && *redisURL == "" {
		fmt.Fprintln(stderr, "relay bench: --instances above 1 needs --redis-url (instances share one Redis)")
		return 2
	}
	if bc.Target == "" {
		prefix := fmt.Sprintf("bench%d", time.Now().UnixNano())
		for range max(*instances, 1) {
			a, err := startInProcess(ctx, *redisURL, prefix, *workers)
			if err != nil {
				fmt.Fprintf(stderr, "relay bench: %v\n", err)
				return 1
			}
			defer a.Shutdown(context.Background())
			bc.Targets = append(bc.Targets, "http://"+a.Addr()+"/")
		}
		bc.Target = bc.Targets[0]
	} else {
		bc.Targets = strings.Split(bc.Target, ",")
		bc.Target = bc.Targets[0]
	}
	fmt.Fprintf(stdout, "relay bench: %d tasks x %d notifications, %d clients, targets %s\n", bc.Tasks, bc.Steps+2, bc.Concurrency, strings.Join(bc.Targets, ","))
	res, err := bench.Run(ctx, bc)
	if err != nil {
		fmt.Fprintf(stderr, "relay bench: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, res)
	if res.Lost > 0 || res.WrongToken > 0 {
		return 1
	}
	return 0
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
	cfg.Auth, cfg.Security.RateLimit = "none", 0 // a local load run: no client credentials, no limit
	cfg.RedisPrefix = prefix
	cfg.WebhookAllowCIDRs = []string{"127.0.0.0/8"}
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
