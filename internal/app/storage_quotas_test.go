package app

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/auth"
	"github.com/a2arelay/relay/internal/config"
	"github.com/a2arelay/relay/internal/redistest"
)

// noSuchHost resolves no name: webhooks on it fail as an unresolvable host
// would, without a DNS query leaving the machine.
type noSuchHost struct{}

func (noSuchHost) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// usedMemory is Redis's INFO memory used_memory.
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("INFO memory has no used_memory")
	return 0
}

// storedBytes is what Redis's keys take (MEMORY USAGE summed over every
// key): the data relay holds, without the connections' buffers and the Lua
// heap, which INFO's used_memory counts too and which come and go.
func storedBytes(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	ctx := context.Background()
	var n int64
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		u, err := rdb.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		n += u
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// quotaData is error.data of a refusal by a storage budget in v0.x.
type quotaData struct {
	Limit     string
	Max, Used int64
}

// startBudgetRelay starts relay for alice and bob on a Redis of its own (so
// that its memory is this test's alone), with webhooks resolving nowhere.
func startBudgetRelay(t *testing.T, mut func(*config.Config)) (*relay, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	cfg := testConfig(t)
	cfg.RedisURL, cfg.RedisPrefix = srv.URL(), "relay"
	cfg.Auth = config.AuthAuto
	cfg.Security.APIKeys = []string{"alice:" + auth.HashAPIKey(aliceKey), "bob:" + auth.HashAPIKey(bobKey)}
	cfg.Security.SecretKeys = []string{"k1:" + strings.Repeat("A", 43) + "="}
	cfg.RetryInitial = time.Hour // one attempt per notification
	cfg.DemoMaxEventsPerSecond = 1000
	if mut != nil {
		mut(&cfg)
	}
	a, err := New(Deps{Log: testLogger()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.resolver = noSuchHost{}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := &relay{t: t, app: a, url: "http://" + a.Addr()}
	t.Cleanup(r.stop)
	rdb := srv.Client()
	return r, rdb
}

// reproSend is issue #16's repro: a 1 MiB v0.3 message/send asking the demo
// for 50 steps without delay, with one webhook on a host that does not
// resolve; blocking, so that the demo's work is stored when it returns.
func reproSend(n int) map[string]any {
	msg := v03Message("big", map[string]any{"messageId": "m-big-" + strconv.Itoa(n),
		"metadata": demo(map[string]any{"steps": 50, "delayMs": 0})})
	msg["parts"] = []any{map[string]any{"kind": "text", "text": strings.Repeat("x", 1<<20)}}
	return map[string]any{"message": msg, "configuration": map[string]any{"blocking": true,
		"pushNotificationConfig": map[string]any{"url": "https://hooks.relay-test.invalid/h", "token": "t"}}}
}

// The repro, repeated: one client's sends are refused once its storage
// budget is spent, with -32029, HTTP 429 and data naming the budget; Redis
// then holds about the budget, not what the client asked for; the refused
// send stores nothing; and another client still sends.
func TestStorageBudgetBoundsWhatOneClientStores(t *testing.T) {
	t.Parallel()
	const budget = 16 << 20
	r, rdb := startBudgetRelay(t, func(c *config.Config) { c.Security.ClientMaxStorageBytes = budget })
	base, baseUsed := storedBytes(t, rdb), usedMemory(t, rdb)
	var refused rpcResult
	accepted := 0
	for i := range 40 {
		res := as(r, aliceKey, "message/send", reproSend(i))
		if res.Error != nil {
			refused = res
			break
		}
		accepted++
	}
	if refused.Error == nil {
		t.Fatalf("40 sends of 1 MiB (%d MB in Redis) were all accepted under a budget of %d bytes", (storedBytes(t, rdb)-base)>>20, budget)
	}
	if refused.Status != 429 || refused.Error.Code != -32029 || len(refused.Error.Data) != 1 {
		t.Fatalf("refusal: status %d, error %+v; want 429, -32029 with data", refused.Status, refused.Error)
	}
	var d quotaData
	if err := json.Unmarshal(refused.Error.Data[0], &d); err != nil || d.Limit != "storage_bytes" || d.Max != budget || d.Used <= 0 {
		t.Fatalf("refusal data %s: want limit storage_bytes, max %d and what is used", refused.Error.Data[0], budget)
	}
	stored := storedBytes(t, rdb) - base
	t.Logf("%d sends accepted; Redis's keys grew %.1f MiB (used_memory %.1f MiB) under a budget of %d MiB; refusal: %s", accepted,
		float64(stored)/(1<<20), float64(usedMemory(t, rdb)-baseUsed)/(1<<20), budget>>20, refused.Error.Data[0])
	// The budget counts the data; Redis holds it in allocations of up to a
	// quarter more, and one send may pass the budget by its agent's work.
	if accepted < 2 || stored > 3*budget/2 {
		t.Fatalf("Redis's keys grew by %d bytes after %d sends; want at least 2 sends and at most 1.5 budgets (%d)", stored, accepted, 3*budget/2)
	}

	// A refused send stores nothing: no task, no byte to speak of (a
	// stored send holds 2 MiB at least).
	before, tasks := storedBytes(t, rdb), taskCount(t, r, aliceKey)
	if res := as(r, aliceKey, "message/send", reproSend(100)); res.Error == nil || res.Error.Code != -32029 {
		t.Fatalf("send over the budget: %+v, want -32029", res.Error)
	}
	if n := taskCount(t, r, aliceKey); n != tasks {
		t.Fatalf("a refused send made a task: %d tasks, then %d", tasks, n)
	}
	if grew := storedBytes(t, rdb) - before; grew > 16<<10 {
		t.Fatalf("a refused send grew Redis by %d bytes", grew)
	}

	// Another client has a budget of its own.
	if res := as(r, bobKey, "message/send", reproSend(0)); res.Error != nil {
		t.Fatalf("bob's send: %d %s", res.Error.Code, res.Error.Message)
	}
}

// taskCount is how many tasks the client of key has (v1.0 ListTasks).
func taskCount(t *testing.T, r *relay, key string) int {
	t.Helper()
	res := as(r, key, "ListTasks", map[string]any{})
	if res.Error != nil {
		t.Fatalf("ListTasks: %s", res.Error.Message)
	}
	var l struct{ TotalSize int }
	if err := json.Unmarshal(res.Result, &l); err != nil {
		t.Fatal(err)
	}
	return l.TotalSize
}

// quotaRefusal checks that res is a refusal by budget limit, in the shape
// of its dialect: HTTP 429, -32029, and data {limit, max, used} in v0.x, a
// google.rpc.ErrorInfo (reason QUOTA_EXCEEDED, metadata limit, max, used)
// and a google.rpc.QuotaFailure in v1.0.
func quotaRefusal(t *testing.T, res rpcResult, v10 bool, limit string, max int64) {
	t.Helper()
	if res.Error == nil || res.Status != 429 || res.Error.Code != -32029 {
		t.Fatalf("status %d, error %+v: want 429 and -32029", res.Status, res.Error)
	}
	if !v10 {
		var d quotaData
		if len(res.Error.Data) != 1 || json.Unmarshal(res.Error.Data[0], &d) != nil || d.Limit != limit || d.Max != max {
			t.Fatalf("data %s: want limit %s, max %d", res.Error.Data, limit, max)
		}
		return
	}
	var info struct {
		Type     string `json:"@type"`
		Reason   string
		Metadata map[string]string
	}
	var failure struct {
		Type       string `json:"@type"`
		Violations []struct{ Subject, Description string }
	}
	if len(res.Error.Data) != 2 || json.Unmarshal(res.Error.Data[0], &info) != nil || json.Unmarshal(res.Error.Data[1], &failure) != nil {
		t.Fatalf("v1.0 data %s: want an ErrorInfo and a QuotaFailure", res.Error.Data)
	}
	if info.Type != "type.googleapis.com/google.rpc.ErrorInfo" || info.Reason != "QUOTA_EXCEEDED" || info.Metadata["limit"] != limit || info.Metadata["max"] != strconv.FormatInt(max, 10) ||
		failure.Type != "type.googleapis.com/google.rpc.QuotaFailure" || len(failure.Violations) != 1 || failure.Violations[0].Subject != "client:"+limit {
		t.Fatalf("v1.0 data %s: want ErrorInfo metadata limit %s, max %d, and its QuotaFailure", res.Error.Data, limit, max)
	}
}

// Each client may hold client_max_tasks tasks at once, in every dialect:
// one more is refused (and stores nothing), a message to a task it holds
// is not; once tasks expire, their places are free again.
func TestTasksBudgetCountsTasksAliveInEveryDialect(t *testing.T) {
	t.Parallel()
	const max = 3
	r, _ := startBudgetRelay(t, func(c *config.Config) {
		c.Security.ClientMaxTasks = max
		c.TaskRetention = 300 * time.Millisecond
	})
	waiting := demo(map[string]any{"outcome": "input-required"})
	sends := []struct {
		name, method string
		params       func(i int) map[string]any
	}{
		{"v0.1", "tasks/send", func(i int) map[string]any {
			return map[string]any{"id": "budget-v01-" + strconv.Itoa(i), "message": v01Message("x", waiting)}
		}},
		{"v0.3", "message/send", func(i int) map[string]any {
			return map[string]any{"message": v03Message("x"+strconv.Itoa(i), map[string]any{"metadata": waiting})}
		}},
		{"v1.0", "SendMessage", func(i int) map[string]any {
			return map[string]any{"message": v10Message("x"+strconv.Itoa(i), map[string]any{"metadata": waiting})}
		}},
	}
	var first map[string]any
	for i := range max {
		res := as(r, aliceKey, "message/send", sends[1].params(i))
		if res.Error != nil {
			t.Fatalf("task %d: %s", i, res.Error.Message)
		}
		if i == 0 {
			_ = json.Unmarshal(res.Result, &first)
		}
	}
	for _, s := range sends {
		quotaRefusal(t, as(r, aliceKey, s.method, s.params(100)), s.name == "v1.0", "tasks", max)
	}
	if n := taskCount(t, r, aliceKey); n != max {
		t.Fatalf("%d tasks after refusals, want %d", n, max)
	}
	// A task alice holds still takes messages.
	cont := v03Message("more", map[string]any{"taskId": first["id"], "metadata": waiting})
	if res := as(r, aliceKey, "message/send", map[string]any{"message": cont}); res.Error != nil {
		t.Fatalf("message to a task alice holds: %s", res.Error.Message)
	}
	// Finished tasks expire after the retention, and free their places.
	list := as(r, aliceKey, "ListTasks", map[string]any{})
	var l struct{ Tasks []struct{ ID string } }
	_ = json.Unmarshal(list.Result, &l)
	for _, task := range l.Tasks {
		if res := as(r, aliceKey, "CancelTask", map[string]any{"id": task.ID}); res.Error != nil {
			t.Fatalf("cancel: %s", res.Error.Message)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := as(r, aliceKey, "SendMessage", sends[2].params(200))
		if res.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a new task is still refused after every task expired: %s", res.Error.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
