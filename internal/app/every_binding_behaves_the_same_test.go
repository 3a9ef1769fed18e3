package app

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// This file runs one table of behaviours over the three bindings
// (JSON-RPC, HTTP+JSON, gRPC), each seen through a small adapter that
// answers in binding-neutral terms: a task's id, state name and history
// length, a page's ids, total and whether a next token came, and an error
// as a neutral kind ("not_found", "not_cancelable", "invalid_params",
// "unsupported_operation", "extended_card_not_configured",
// "version_not_supported", "unauthenticated", "limited"). Each adapter
// (every_binding_seen_by_a_client_test.go) maps its binding's errors
// strictly as its section of the spec says (JSON-RPC code; HTTP status,
// google.rpc status name; gRPC code) and, on all three, only with the
// kind's ErrorInfo reason (every_error_carries_the_same_reason_on_every_
// binding_test.go), so a binding that answers differently from the
// others fails its row. The rows on streams and the remaining errors are in
// streams_and_errors_are_the_same_on_every_binding_test.go; "limited"
// needs a relay of its own (a_limited_client_is_refused_alike_...).
// Error kinds relay itself never raises to a client are not here: it
// always offers push (push not supported); content-type and extension
// refusals and invalid agent responses come only from an upstream agent
// behind the bridge. JSON-RPC's parse error, invalid request and method
// not found have no counterpart in the other bindings' requests.

// eqSendArgs is one message to the demo agent.
type eqSendArgs struct {
	contextID string
	taskID    string // a message continuing this task
	outcome   string // the demo's outcome; "": completed
	pushURL   string // a push config sent with the message (token eqPushToken)
	blocking  bool
	steps     int // demo steps; 0: completes at once
	delayMs   int
}

type eqTask struct {
	ID, State string
	History   int
}

type eqPage struct {
	IDs   []string
	Total int
	More  bool // a nextPageToken came
	Token string
}

type eqListArgs struct {
	contextID, status, pageToken string
	pageSize                     *int
}

// binding is one A2A binding as a client sees it. Every method returns an
// error kind, "" on success; an answer that is none of the neutral kinds
// comes back as a kind describing it, so it differs from every want.
type binding interface {
	send(key string, a eqSendArgs) (eqTask, string)
	get(key, id string, historyLength *int) (eqTask, string)
	list(key string, a eqListArgs) (eqPage, string)
	cancel(key, id string) (eqTask, string)
	createConfig(key, task, id, url string) (string, string) // the config id
	getConfig(key, task, id string) (string, string)
	listConfigs(key, task string) ([]string, string)
	deleteConfig(key, task, id string) string
	extendedCard(key string) string
	// withVersion is the binding sending A2A-Version v (gRPC: the
	// a2a-version metadata) instead of 1.0.
	withVersion(v string) binding
	streamBinding
}

var eqMessageSeq atomic.Int64

func eqMessageID() string { return fmt.Sprintf("eq-%d", eqMessageSeq.Add(1)) }

func eqDemo(a eqSendArgs) map[string]any {
	opts := map[string]any{"steps": a.steps}
	if a.delayMs > 0 {
		opts["delayMs"] = a.delayMs
	}
	if a.outcome != "" {
		opts["outcome"] = a.outcome
	}
	return opts
}

// ---- the table ----

// eqMust fails the test unless kind is "" (success).
func eqMust(t *testing.T, what, kind string) {
	t.Helper()
	if kind != "" {
		t.Fatalf("%s: %s", what, kind)
	}
}

func eqInt(n int) *int { return &n }

// eqCompleted sends a message the demo agent completes at once, blocking,
// and returns the task's id.
func eqCompleted(t *testing.T, b binding, key, contextID string) string {
	t.Helper()
	task, kind := b.send(key, eqSendArgs{contextID: contextID, blocking: true})
	eqMust(t, "blocking send", kind)
	if task.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("blocking send: %+v", task)
	}
	return task.ID
}

// eqLong sends a message the demo agent works on for a long while, not
// blocking, and returns the task's id.
func eqLong(t *testing.T, b binding, key string) string {
	t.Helper()
	task, kind := b.send(key, eqSendArgs{steps: 100, delayMs: 1000})
	eqMust(t, "non-blocking send", kind)
	return task.ID
}

// bindingCase is one behaviour: run drives a binding and returns its
// binding-neutral outcome, which must be want on every binding.
type bindingCase struct {
	name string
	want string
	run  func(t *testing.T, b binding) string
}

var bindingCases = []bindingCase{
	{"a blocking send answers with the completed task", "TASK_STATE_COMPLETED", func(t *testing.T, b binding) string {
		task, kind := b.send(aliceKey, eqSendArgs{blocking: true})
		eqMust(t, "send", kind)
		if task.ID == "" {
			return "no task id"
		}
		return task.State
	}},
	{"a non-blocking send answers before the task ends", "not terminal", func(t *testing.T, b binding) string {
		task, kind := b.send(aliceKey, eqSendArgs{steps: 100, delayMs: 1000})
		eqMust(t, "send", kind)
		defer b.cancel(aliceKey, task.ID)
		if task.ID == "" {
			return "no task id"
		}
		if task.State == "TASK_STATE_SUBMITTED" || task.State == "TASK_STATE_WORKING" {
			return "not terminal"
		}
		return task.State
	}},
	{"get limits the history to historyLength (the demo task holds the one user message)", "id ok; 0: 0; 1: 1; all: 1", func(t *testing.T, b binding) string {
		id := eqCompleted(t, b, aliceKey, "")
		none, kind := b.get(aliceKey, id, eqInt(0))
		eqMust(t, "get 0", kind)
		one, kind := b.get(aliceKey, id, eqInt(1))
		eqMust(t, "get 1", kind)
		all, kind := b.get(aliceKey, id, nil)
		eqMust(t, "get", kind)
		idOK := "id ok"
		if none.ID != id || one.ID != id || all.ID != id {
			idOK = "id differs"
		}
		return fmt.Sprintf("%s; 0: %d; 1: %d; all: %d", idOK, none.History, one.History, all.History)
	}},
	{"list pages a context's tasks with a total and a last page without a token",
		"page 1: 2 of 3, token; page 2: 1 of 3, no token; every task once", func(t *testing.T, b binding) string {
			var ids []string
			for range 3 {
				ids = append(ids, eqCompleted(t, b, aliceKey, "ctx-paging"))
			}
			first, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-paging", pageSize: eqInt(2)})
			eqMust(t, "list", kind)
			if !first.More {
				return fmt.Sprintf("page 1: %d of %d, no token", len(first.IDs), first.Total)
			}
			second, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-paging", pageSize: eqInt(2), pageToken: first.Token})
			eqMust(t, "list page 2", kind)
			seen := slices.Concat(first.IDs, second.IDs)
			slices.Sort(seen)
			slices.Sort(ids)
			once := "every task once"
			if !slices.Equal(seen, ids) {
				once = fmt.Sprintf("saw %v of %v", seen, ids)
			}
			token := func(p eqPage) string {
				if p.More {
					return "token"
				}
				return "no token"
			}
			return fmt.Sprintf("page 1: %d of %d, %s; page 2: %d of %d, %s; %s",
				len(first.IDs), first.Total, token(first), len(second.IDs), second.Total, token(second), once)
		}},
	{"list filters by state", "completed: 2; working: 1", func(t *testing.T, b binding) string {
		eqCompleted(t, b, aliceKey, "ctx-state")
		eqCompleted(t, b, aliceKey, "ctx-state")
		task, kind := b.send(aliceKey, eqSendArgs{contextID: "ctx-state", steps: 100, delayMs: 1000})
		eqMust(t, "send", kind)
		defer b.cancel(aliceKey, task.ID)
		// The long task is submitted, then working: wait for working.
		var working eqPage
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			working, kind = b.list(aliceKey, eqListArgs{contextID: "ctx-state", status: "TASK_STATE_WORKING"})
			eqMust(t, "list working", kind)
			if len(working.IDs) > 0 {
				break
			}
		}
		done, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-state", status: "TASK_STATE_COMPLETED"})
		eqMust(t, "list completed", kind)
		return fmt.Sprintf("completed: %d; working: %d", len(done.IDs), len(working.IDs))
	}},
	{"cancel cancels a working task, and then refuses it as not cancelable", "TASK_STATE_CANCELED; again: not_cancelable", func(t *testing.T, b binding) string {
		id := eqLong(t, b, aliceKey)
		task, kind := b.cancel(aliceKey, id)
		if kind != "" {
			return kind
		}
		_, again := b.cancel(aliceKey, id)
		return task.State + "; again: " + again
	}},
	{"cancel of a completed task is not cancelable", "not_cancelable", func(t *testing.T, b binding) string {
		_, kind := b.cancel(aliceKey, eqCompleted(t, b, aliceKey, ""))
		return kind
	}},
	{"get of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.get(aliceKey, "no-such-task", nil)
		return kind
	}},
	{"cancel of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.cancel(aliceKey, "no-such-task")
		return kind
	}},
	{"a negative historyLength is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.get(aliceKey, eqCompleted(t, b, aliceKey, ""), eqInt(-1))
		return kind
	}},
	{"pageSize 0 is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.list(aliceKey, eqListArgs{pageSize: eqInt(0)})
		return kind
	}},
	{"a pageSize over the maximum is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.list(aliceKey, eqListArgs{pageSize: eqInt(1_000_000)})
		return kind
	}},
	{"push configs are created, read, listed and deleted", "created c1; got c1; listed [c1]; deleted; then not_found, listed []",
		func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "")
			created, kind := b.createConfig(aliceKey, id, "c1", "http://127.0.0.1:9/hook")
			eqMust(t, "create", kind)
			got, kind := b.getConfig(aliceKey, id, "c1")
			eqMust(t, "get", kind)
			listed, kind := b.listConfigs(aliceKey, id)
			eqMust(t, "list", kind)
			eqMust(t, "delete", b.deleteConfig(aliceKey, id, "c1"))
			_, gone := b.getConfig(aliceKey, id, "c1")
			after, kind := b.listConfigs(aliceKey, id)
			eqMust(t, "list after delete", kind)
			return fmt.Sprintf("created %s; got %s; listed %v; deleted; then %s, listed %v", created, got, listed, gone, after)
		}},
	{"a push config with a URL that is not http(s) is invalid, the field named in a google.rpc.BadRequest", "invalid_params field url", func(t *testing.T, b binding) string {
		_, kind := b.createConfig(aliceKey, eqCompleted(t, b, aliceKey, ""), "", "ftp://127.0.0.1/hook")
		return kind
	}},
	{"a push config of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.createConfig(aliceKey, "no-such-task", "c1", "http://127.0.0.1:9/hook")
		return kind
	}},
	{"another client's task is not found by any method",
		"get not_found; cancel not_found; list 0; create config not_found; get config not_found; list configs not_found; delete config not_found; owner still gets it",
		func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "ctx-alice")
			_, kind := b.createConfig(aliceKey, id, "c1", "http://127.0.0.1:9/hook")
			eqMust(t, "create", kind)
			_, get := b.get(bobKey, id, nil)
			_, cancel := b.cancel(bobKey, id)
			list, kind := b.list(bobKey, eqListArgs{contextID: "ctx-alice"})
			eqMust(t, "bob lists", kind)
			_, create := b.createConfig(bobKey, id, "c2", "http://127.0.0.1:9/hook")
			_, getConfig := b.getConfig(bobKey, id, "c1")
			_, listConfigs := b.listConfigs(bobKey, id)
			deleteConfig := b.deleteConfig(bobKey, id, "c1")
			owner := "owner still gets it"
			if task, kind := b.get(aliceKey, id, nil); kind != "" || task.State != "TASK_STATE_COMPLETED" {
				owner = fmt.Sprintf("owner gets %+v, %s", task, kind)
			} else if _, kind := b.getConfig(aliceKey, id, "c1"); kind != "" {
				owner = "owner's config: " + kind
			}
			return fmt.Sprintf("get %s; cancel %s; list %d; create config %s; get config %s; list configs %s; delete config %s; %s",
				get, cancel, len(list.IDs), create, getConfig, listConfigs, deleteConfig, owner)
		}},
	{"a request without credentials is unauthenticated", "list unauthenticated; send unauthenticated; get unauthenticated", func(t *testing.T, b binding) string {
		id := eqCompleted(t, b, aliceKey, "")
		_, list := b.list("", eqListArgs{})
		_, send := b.send("", eqSendArgs{blocking: true})
		_, get := b.get(otherWrng, id, nil)
		return fmt.Sprintf("list %s; send %s; get %s", list, send, get)
	}},
}

// Every binding behaves the same: one table of behaviours, each with one
// binding-neutral outcome, runs over JSON-RPC, HTTP+JSON and gRPC.
func TestEveryBindingBehavesTheSame(t *testing.T) {
	t.Parallel()
	bindings := map[string]func(r *relay) binding{
		"JSON-RPC":  func(r *relay) binding { return jsonrpcBinding{url: r.url} },
		"HTTP+JSON": func(r *relay) binding { return restBinding{url: r.url} },
		"gRPC":      func(r *relay) binding { return grpcBinding{c: grpcClient(r.t, r)} },
	}
	for _, name := range []string{"JSON-RPC", "HTTP+JSON", "gRPC"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := startTenantRelay(t, withGRPC)
			b := bindings[name](r)
			var cases []streamCase
			for _, c := range bindingCases {
				cases = append(cases, streamCase{name: c.name, want: c.want, run: c.run})
			}
			cases = append(cases, streamCases...)
			for _, c := range cases {
				want := c.want
				if name == "gRPC" && c.wantGRPC != "" {
					want = c.wantGRPC
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					if got := c.run(t, b); got != want {
						t.Errorf("%s:\n got  %s\n want %s", name, got, want)
					}
				})
			}
		})
	}
}
