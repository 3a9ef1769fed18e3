package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LoadConfig is the task load: Tasks non-blocking v1.0 SendMessage requests,
// each with an inline push config to Hook, offered at Rate per second by
// Concurrency clients, round-robin over Targets.
type LoadConfig struct {
	Targets     []string
	Hook        string
	Tasks       int
	Rate        float64
	Concurrency int
	// Steps and DelayMs are the demo agent's options for each task: it makes
	// the task event, Steps working updates and completed.
	Steps, DelayMs int
	// GiveUp fails a send that found no instance to take it for this long.
	GiveUp time.Duration
}

// Sent is one task a client created: SendMessage returned its id.
type Sent struct {
	I      int
	TaskID string
	// Target is the instance that created it; Attempts counts the tries.
	Target   string
	Attempts int
	At       time.Time
}

// LoadResult is what the clients did.
type LoadResult struct {
	Sent []Sent
	// FailedSends counts sends that failed and were tried again (on
	// another instance); a failed send may have created a task anyway.
	FailedSends int64
	Elapsed     time.Duration
}

// client sends JSON-RPC requests to relay.
type client struct {
	http *http.Client
}

func newClient(conns int) *client {
	return &client{http: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxIdleConns: 4 * conns, IdleConnTimeout: 30 * time.Second}}}
}

// rpcError is a JSON-RPC error relay answered.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// retryable reports whether a failed request may succeed on another try
// (an instance or Redis is down) rather than being a mistake of the test.
func retryable(err error) bool {
	var re *rpcError
	if errors.As(err, &re) {
		return re.Code == -32603 || re.Code == -32029 // internal (Redis down), rate limited
	}
	return true // transport errors, HTTP 5xx
}

// sendMessage creates a task on target and returns its id.
func (c *client) sendMessage(ctx context.Context, target, messageID, text, hook string, steps, delayMs int) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": sendParams(messageID, text, hook, steps, delayMs)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, truncate(string(b), 200))
	}
	var r struct {
		Result *struct {
			Task struct{ ID string } `json:"task"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("answer is not JSON: %s", truncate(string(b), 200))
	}
	if r.Error != nil {
		return "", r.Error
	}
	if r.Result == nil || r.Result.Task.ID == "" {
		return "", &rpcError{Code: 0, Message: "no task id in " + truncate(string(b), 200)}
	}
	return r.Result.Task.ID, nil
}

// sendParams are the params of a v1.0 send of one demo task.
func sendParams(messageID, text, hook string, steps, delayMs int) map[string]any {
	return map[string]any{
		"message": map[string]any{"role": "ROLE_USER", "messageId": messageID, "parts": []any{map[string]any{"text": text}},
			"metadata": map[string]any{"demo": map[string]any{"steps": steps, "delayMs": delayMs, "artifactChunks": 0}}},
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook}},
	}
}

// backoff is the pause before try n (1-based) of a failed request.
func backoff(n int) time.Duration {
	return min(50*time.Millisecond<<min(n, 5), time.Second)
}

// RunLoad sends the load and returns once every task was sent (or ctx
// ended). A send that fails is tried again on the next instance until one
// takes it; the task is counted once an instance returned its id.
func RunLoad(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	c := newClient(cfg.Concurrency)
	jobs := make(chan int, cfg.Tasks)
	start := time.Now()
	go func() {
		defer close(jobs)
		interval := time.Duration(float64(time.Second) / cfg.Rate)
		for i := range cfg.Tasks {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return
				}
			}
			jobs <- i
		}
	}()
	var (
		mu     sync.Mutex
		res    LoadResult
		failed atomic.Int64
		first  error
		wg     sync.WaitGroup
	)
	for range cfg.Concurrency {
		wg.Go(func() {
			for i := range jobs {
				s, err := sendOne(ctx, c, cfg, i, &failed)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil {
					res.Sent = append(res.Sent, s)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.FailedSends, res.Elapsed = failed.Load(), time.Since(start)
	if first == nil {
		first = ctx.Err()
	}
	return res, first
}

func sendOne(ctx context.Context, c *client, cfg LoadConfig, i int, failed *atomic.Int64) (Sent, error) {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		target := cfg.Targets[(i+attempt)%len(cfg.Targets)]
		// A fresh message id per try: a send is not idempotent, and a try
		// that failed may have created a task all the same.
		id, err := c.sendMessage(ctx, target, "chaos-"+strconv.Itoa(i)+"-"+strconv.Itoa(attempt),
			"chaos task "+strconv.Itoa(i), cfg.Hook, cfg.Steps, cfg.DelayMs)
		if err == nil {
			return Sent{I: i, TaskID: id, Target: target, Attempts: attempt + 1, At: time.Now()}, nil
		}
		if ctx.Err() != nil {
			return Sent{}, ctx.Err()
		}
		if !retryable(err) {
			return Sent{}, fmt.Errorf("task %d: %s refused it: %w", i, target, err)
		}
		if time.Since(began) > cfg.GiveUp {
			return Sent{}, fmt.Errorf("task %d: no instance took it within %s; last error from %s: %w", i, cfg.GiveUp, target, err)
		}
		failed.Add(1)
		select {
		case <-time.After(backoff(attempt + 1)):
		case <-ctx.Done():
			return Sent{}, ctx.Err()
		}
	}
}
