// Package bench is relay's load tool: it starts a webhook sink on loopback,
// drives tasks through the A2A API with inline push configs, and reports
// delivered notifications per second, commit-to-receipt latency, and how
// many notifications were lost or duplicated; with a Redis, what Redis did
// per notification (INFO deltas), and this process's CPU per notification.
// Its ceiling mode posts the same notifications straight to the sink, for
// the machine's raw POST rate to compare relay's with.
package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
)

// Config is one load run.
type Config struct {
	// Target is the relay's A2A endpoint; with several relay instances,
	// Targets lists their endpoints and tasks go to them in turn.
	Target  string
	Targets []string
	// Tasks and Concurrency shape the load (defaults 2000 and 32).
	Tasks, Concurrency int
	// Steps is the number of working updates per task (default 4): each task
	// makes Steps+2 notifications (the task, the updates, completed).
	Steps int
	// Delay is the demo agent's pause between events (default 20ms).
	Delay time.Duration
	// Drain bounds the wait for the last notifications (default 60s).
	Drain time.Duration
	// Stream makes each client stream its task over SSE
	// (SendStreamingMessage) instead of registering a webhook: the figures
	// are then for SSE events.
	Stream bool
	// Closed makes each client wait until its task's final notification
	// reached the sink before it sends the next task (a closed loop: the
	// offered load follows what relay delivers).
	Closed bool
	// Rate, when positive, paces the clients to offer this many
	// notifications per second (open loop); zero sends as fast as they can.
	Rate int
	// Window, when positive, splits the run into windows of this width
	// (at least MinWindow) and reports the receipts and latency of each
	// (Result.Windows).
	Window time.Duration
	// Ceiling makes the clients POST each task's Steps+2 notifications
	// straight to the sink, shaped as relay delivers them to a v1.0 push
	// config (without the JWT), over keep-alive net/http, instead of sending
	// tasks to relay: the machine's raw POST ceiling, to divide relay's
	// figures by. Target, Delay and Closed play no part (each client waits
	// for every answer anyway); Rate paces tasks as it does for relay.
	Ceiling bool
	// Redis, when set, is the Redis the relay under test uses: Run reads
	// its INFO before and after the run and reports the difference
	// (Result.Redis).
	Redis redis.UniversalClient
}

// Result is what a run measured.
type Result struct {
	Tasks, Expected, Delivered, Duplicates, Lost int
	// WrongToken counts notifications that arrived without the push
	// config's token in X-A2A-Notification-Token and A2A-Notification-Token.
	WrongToken        int
	SendTime, Elapsed time.Duration
	PerSecond         float64
	P50, P99, Max     time.Duration
	// Windows is the run over time, when Config.Window is set.
	Windows []Window
	// CPU is this process's user+sys CPU time over the run: the load
	// clients' and the sink's, and relay's when it runs in-process. Zero
	// where the platform does not tell.
	CPU time.Duration
	// Redis is what Config.Redis did over the run (without the INFO calls
	// of its readings); nil without one.
	Redis *RedisStats
}

// MinWindow is the narrowest timeline window: a run of a minute then has
// 60,000 of them, not billions.
const MinWindow = time.Millisecond

// CheckWindow tells whether d is a timeline window width Run takes: zero
// (no timeline) or at least MinWindow.
func CheckWindow(d time.Duration) error {
	if d < 0 || d > 0 && d < MinWindow {
		return fmt.Errorf("a timeline window must be 0 or at least %s, not %s", MinWindow, d)
	}
	return nil
}

// Window is what arrived in one slice of the run, from Start (since the
// first task was sent) for the window's width: the notifications whose
// commit time is known (the status updates, not the task event that opens
// each task), and their commit-to-receipt latency.
type Window struct {
	Start         time.Duration
	Measured      int
	P50, P99, Max time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("tasks sent: %d in %s\nnotifications or events: %d of %d received in %s: %.0f/s\n"+
		"commit to receipt: p50 %s, p99 %s, max %s\nlost: %d, duplicates: %d, wrong token: %d",
		r.Tasks, r.SendTime.Round(time.Millisecond), r.Delivered, r.Expected, r.Elapsed.Round(time.Millisecond), r.PerSecond,
		r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), r.Max.Round(100*time.Microsecond), r.Lost, r.Duplicates, r.WrongToken) +
		r.timeline() + r.costs()
}

func (r Result) timeline() string {
	var b strings.Builder
	for _, w := range r.Windows {
		fmt.Fprintf(&b, "\n  %8s  %6d measured  p50 %-8s p99 %-8s max %s", w.Start.Round(time.Millisecond), w.Measured,
			w.P50.Round(100*time.Microsecond), w.P99.Round(100*time.Microsecond), w.Max.Round(100*time.Microsecond))
	}
	return b.String()
}

// sink receives notifications and records when each arrived.
type sink struct {
	token     []byte // the push configs' token, which every notification must carry
	wrong     atomic.Int64
	done      sync.Map // task id -> chan struct{}, closed when its final notification arrived
	mu        sync.Mutex
	seen      map[string]bool
	latencies []time.Duration
	arrivals  []time.Time // when each of latencies arrived
	dups      int
	last      time.Time
	count     atomic.Int64
}

// serve is the sink's handler. The sink runs on fasthttp, as lean a
// server as the machine has, so that the load tool takes as little of the
// CPU it measures relay on as it can.
func (s *sink) serve(c *fasthttp.RequestCtx) {
	now := time.Now()
	body := c.PostBody()
	var n struct {
		StatusUpdate *struct {
			TaskID   string                  `json:"taskId"`
			Status   struct{ State string }  `json:"status"`
			Metadata struct{ EmitNs string } `json:"metadata"`
		} `json:"statusUpdate"`
	}
	_ = json.Unmarshal(body, &n)
	var emit string
	if su := n.StatusUpdate; su != nil {
		emit = su.Metadata.EmitNs
		if su.Status.State == "TASK_STATE_COMPLETED" {
			ch, _ := s.done.LoadOrStore(su.TaskID, make(chan struct{}))
			select {
			case <-ch.(chan struct{}):
			default:
				close(ch.(chan struct{}))
			}
		}
	}
	h := &c.Request.Header
	if !bytes.Equal(h.Peek("X-A2A-Notification-Token"), s.token) || !bytes.Equal(h.Peek("A2A-Notification-Token"), s.token) {
		s.wrong.Add(1)
	}
	s.record(string(h.Peek("A2A-Notification-Id")), emit, now)
	c.SetStatusCode(fasthttp.StatusNoContent)
}

// record counts one received notification or event; emitNs (when set)
// gives its commit time.
func (s *sink) record(id, emitNs string, now time.Time) {
	s.mu.Lock()
	if s.seen[id] {
		s.dups++
	} else {
		s.seen[id] = true
		s.last = now
		if ns, err := strconv.ParseInt(emitNs, 10, 64); err == nil {
			s.latencies = append(s.latencies, now.Sub(time.Unix(0, ns)))
			s.arrivals = append(s.arrivals, now)
		}
	}
	s.mu.Unlock()
	s.count.Add(1)
}

// Run drives one load run against cfg.Target (or, with cfg.Ceiling,
// straight at its own sink).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := CheckWindow(cfg.Window); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	if cfg.Ceiling && cfg.Stream {
		return Result{}, errors.New("bench: a ceiling run posts webhooks: it cannot stream")
	}
	cfg.Tasks, cfg.Concurrency = cmp.Or(cfg.Tasks, 2000), cmp.Or(cfg.Concurrency, 32)
	cfg.Steps, cfg.Delay, cfg.Drain = cmp.Or(cfg.Steps, 4), cmp.Or(cfg.Delay, 20*time.Millisecond), cmp.Or(cfg.Drain, 60*time.Second)
	s, hook, stop, err := startSink()
	if err != nil {
		return Result{}, err
	}
	defer stop()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency}}
	defer client.CloseIdleConnections() // so that the relay under test stops at once
	before, err := readUsage(ctx, cfg.Redis)
	if err != nil {
		return Result{}, fmt.Errorf("%w (before the run)", err)
	}
	start := time.Now()
	if err := sendAll(ctx, client, cfg, hook, s); err != nil {
		return Result{}, err
	}
	res := Result{Tasks: cfg.Tasks, SendTime: time.Since(start), Expected: cfg.Tasks * (cfg.Steps + 2)}
	deadline := time.Now().Add(cfg.Drain)
	for int(s.count.Load()) < res.Expected && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let stragglers and duplicates arrive
	after, err := readUsage(ctx, cfg.Redis)
	s.tally(&res, start, cfg.Window)
	if err != nil {
		return res, fmt.Errorf("%w (after the run)", err)
	}
	res.setCosts(before, after)
	return res, nil
}

// startSink starts a sink on a free loopback port and returns it, the URL
// to post notifications to, and a function that stops it.
func startSink() (*sink, string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	s := &sink{seen: map[string]bool{}, token: []byte(fmt.Sprintf("bench-%d", time.Now().UnixNano()))}
	srv := &fasthttp.Server{Handler: s.serve, ReadTimeout: 30 * time.Second, IdleTimeout: 5 * time.Second,
		NoDefaultServerHeader: true, NoDefaultDate: true}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		// The relay under test keeps its connections to the sink open:
		// close the listener and stop waiting for them soon.
		sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_ = srv.ShutdownWithContext(sctx)
	}
	return s, "http://" + ln.Addr().String() + "/hook", stop, nil
}

// tally fills res with what the sink received since start.
func (s *sink) tally(res *Result, start time.Time, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Delivered, res.Duplicates, res.WrongToken = len(s.seen), s.dups, int(s.wrong.Load())
	res.Lost = max(res.Expected-res.Delivered, 0)
	res.Elapsed = s.last.Sub(start)
	if res.Elapsed > 0 {
		res.PerSecond = float64(res.Delivered) / res.Elapsed.Seconds()
	}
	// The windows first: quantiles sorts the latencies in place, which
	// would part them from their arrival times.
	if window > 0 {
		res.Windows = windows(start, window, s.arrivals, s.latencies)
	}
	res.P50, res.P99, res.Max = quantiles(s.latencies)
}

// quantiles sorts latencies and returns their p50, p99 and max.
func quantiles(latencies []time.Duration) (p50, p99, maxLatency time.Duration) {
	slices.Sort(latencies)
	n := len(latencies)
	if n == 0 {
		return 0, 0, 0
	}
	return latencies[n/2], latencies[min(n-1, n*99/100)], latencies[n-1]
}

// windows splits the latencies by the window of width their arrival fell
// in, counted from start.
func windows(start time.Time, width time.Duration, arrivals []time.Time, latencies []time.Duration) []Window {
	var byWindow [][]time.Duration
	for i, at := range arrivals {
		k := max(int(at.Sub(start)/width), 0)
		for len(byWindow) <= k {
			byWindow = append(byWindow, nil)
		}
		byWindow[k] = append(byWindow[k], latencies[i])
	}
	out := make([]Window, len(byWindow))
	for k, l := range byWindow {
		out[k] = Window{Start: time.Duration(k) * width, Measured: len(l)}
		out[k].P50, out[k].P99, out[k].Max = quantiles(l)
	}
	return out
}

// sendAll sends cfg.Tasks non-blocking v1.0 SendMessage requests from
// cfg.Concurrency clients, each task with an inline push config (or, with
// cfg.Ceiling, each task's notifications straight to the sink).
func sendAll(ctx context.Context, client *http.Client, cfg Config, hook string, s *sink) error {
	next := atomic.Int64{}
	errs := make(chan error, cfg.Concurrency)
	var pace <-chan time.Time
	if cfg.Rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) * float64(cfg.Steps+2) / float64(cfg.Rate)))
		defer t.Stop()
		pace = t.C
	}
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(cfg.Tasks) && ctx.Err() == nil; i = next.Add(1) {
				if pace != nil {
					<-pace
				}
				send := func() error { return send(ctx, client, cfg, hook, s, i) }
				switch {
				case cfg.Ceiling:
					send = func() error { return postTask(ctx, client, cfg, hook, s.token, i) }
				case cfg.Stream:
					send = func() error { return streamTask(ctx, client, cfg, s, i) }
				}
				if err := send(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func send(ctx context.Context, client *http.Client, cfg Config, hook string, s *sink, i int64) error {
	config := map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook, "token": string(s.token)}}
	resp, err := call(ctx, client, cfg, "SendMessage", i, config)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Result struct{ Task struct{ ID string } } `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Result.Task.ID == "" {
		return fmt.Errorf("bench: task %d refused: %s", i, b)
	}
	if !cfg.Closed {
		return nil
	}
	ch, _ := s.done.LoadOrStore(r.Result.Task.ID, make(chan struct{}))
	select {
	case <-ch.(chan struct{}):
		return nil
	case <-time.After(cfg.Drain):
		return fmt.Errorf("bench: task %d: no completed notification within %s", i, cfg.Drain)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call sends task i to relay with method, as v1.0, with the demo options
// of cfg and the given send configuration.
func call(ctx context.Context, client *http.Client, cfg Config, method string, i int64, configuration map[string]any) (*http.Response, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": method, "params": map[string]any{
		"message": map[string]any{"role": "ROLE_USER", "messageId": "bench-" + strconv.FormatInt(i, 10),
			"parts":    []any{map[string]any{"text": "load"}},
			"metadata": map[string]any{"demo": map[string]any{"steps": cfg.Steps, "delayMs": cfg.Delay.Milliseconds(), "artifactChunks": 0}}},
		"configuration": configuration,
	}})
	target := cfg.Target
	if len(cfg.Targets) > 0 {
		target = cfg.Targets[int(i)%len(cfg.Targets)]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: %s task %d: %w", method, i, err)
	}
	return resp, nil
}
