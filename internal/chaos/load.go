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
// Concurrency clients, round-robin over Targets, under the API key Key.
type LoadConfig struct {
	Targets     []string
	Hook        string
	Key         string
	Tasks       int
	Rate        float64
	Concurrency int
	// Steps and DelayMs are the demo agent's options for each task: it makes
	// the task event, Steps working updates and completed.
	Steps, DelayMs int
	// WorkerEvery sends every WorkerEvery-th task (0: none) to the skill
	// WorkSkill, whose backend is a worker queue, instead of the demo agent.
	WorkerEvery int
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
	// Worker: the task went to the worker queue (skill WorkSkill).
	Worker bool
}

// LoadResult is what the clients did.
type LoadResult struct {
	Sent []Sent
	// FailedSends counts sends that failed and were tried again (on
	// another instance); a failed send may have created a task anyway.
	FailedSends int64
	Elapsed     time.Duration
}

// client sends JSON-RPC requests to relay, with its API key.
type client struct {
	http *http.Client
	key  string
}

func newClient(key string, conns int) *client {
	return &client{key: key, http: &http.Client{Timeout: 10 * time.Second,
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

// taskSpec is the task a send asks for.
type taskSpec struct {
	text, hook string
	// steps and delayMs are the demo agent's options.
	steps, delayMs int
	// skill picks the task's backend ("": the default, the demo agent).
	skill string
	// contextID, if not empty, names the message's context.
	contextID string
}

// call sends one JSON-RPC request to target and decodes its result into out.
func (c *client) call(ctx context.Context, target, method string, params, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, truncate(string(b), 200))
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("answer is not JSON: %s", truncate(string(b), 200))
	}
	if r.Error != nil {
		return r.Error
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return &rpcError{Code: 0, Message: "unexpected result " + truncate(string(b), 200)}
	}
	return nil
}

// sendMessage creates a task on target and returns its id.
func (c *client) sendMessage(ctx context.Context, target, messageID string, spec taskSpec) (string, error) {
	var r struct {
		Task struct{ ID string } `json:"task"`
	}
	if err := c.call(ctx, target, "SendMessage", sendParams(messageID, spec), &r); err != nil {
		return "", err
	}
	if r.Task.ID == "" {
		return "", &rpcError{Code: 0, Message: "no task id in the answer"}
	}
	return r.Task.ID, nil
}

// sendParams are the params of a v1.0 send of one task.
func sendParams(messageID string, spec taskSpec) map[string]any {
	meta := map[string]any{"demo": map[string]any{"steps": spec.steps, "delayMs": spec.delayMs, "artifactChunks": 0}}
	if spec.skill != "" {
		meta = map[string]any{"skill": spec.skill}
	}
	msg := map[string]any{"role": "ROLE_USER", "messageId": messageID, "parts": []any{map[string]any{"text": spec.text}}, "metadata": meta}
	if spec.contextID != "" {
		msg["contextId"] = spec.contextID
	}
	return map[string]any{
		"message":       msg,
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": spec.hook}},
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
	c := newClient(cfg.Key, cfg.Concurrency)
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
		spec := taskSpec{text: "chaos task " + strconv.Itoa(i), hook: cfg.Hook, steps: cfg.Steps, delayMs: cfg.DelayMs}
		worker := cfg.WorkerEvery > 0 && i%cfg.WorkerEvery == 0
		if worker {
			spec.skill = WorkSkill
		}
		id, err := c.sendMessage(ctx, target, "chaos-"+strconv.Itoa(i)+"-"+strconv.Itoa(attempt), spec)
		if err == nil {
			return Sent{I: i, TaskID: id, Target: target, Attempts: attempt + 1, At: time.Now(), Worker: worker}, nil
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
