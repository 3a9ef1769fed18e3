package app

import (
	"fmt"
	"testing"
)

// The rows of the table on streams, and on the errors the first rows do
// not reach; see every_binding_streams_the_same_test.go.

// streamCase is a row whose outcome may differ on gRPC, where the
// binding documents a behaviour of its own (wantGRPC; "": want).
type streamCase struct {
	name, want, wantGRPC string
	run                  func(t *testing.T, b binding) string
}

// eqPending starts a task the demo agent waits a minute on before its
// first step, and returns its id: until it is canceled, it stays
// submitted, and nothing happens to it.
func eqPending(t *testing.T, b binding, key string) string {
	t.Helper()
	task, kind := b.send(key, eqSendArgs{steps: 100, delayMs: 60_000})
	eqMust(t, "non-blocking send", kind)
	t.Cleanup(func() { b.cancel(key, task.ID) })
	if task.State != "TASK_STATE_SUBMITTED" {
		t.Fatalf("the task is %s, not submitted", task.State)
	}
	return task.ID
}

// eqCancelDuring cancels task id once the stream s has its first item,
// and returns the stream's items.
func eqCancelDuring(t *testing.T, b binding, s eqStream, id string) []eqItem {
	t.Helper()
	first, ok := s.next(t)
	if !ok {
		return nil
	}
	if _, kind := b.cancel(aliceKey, id); kind != "" {
		return []eqItem{first, {kind: "cancel: " + kind}}
	}
	return append([]eqItem{first}, s.rest(t)...)
}

// eqFinished streams a demo task to its end and returns its items.
func eqFinished(t *testing.T, b binding) []eqItem {
	t.Helper()
	items := b.streamSend(aliceKey, eqSendArgs{steps: 2}).rest(t)
	if len(items) < 3 || items[len(items)-1].kind != "" {
		t.Fatalf("stream: %s", eqJoin(items))
	}
	return items
}

const (
	eqPendingTask   = "task TASK_STATE_SUBMITTED (history 1, artifacts 0)"
	eqCanceledEvent = "status TASK_STATE_CANCELED"
)

var streamCases = []streamCase{
	{name: "a streaming send streams the task, then every update in order, to the end",
		want: `task TASK_STATE_SUBMITTED (history 1, artifacts 0) | status TASK_STATE_WORKING "working: step 1 of 2" | ` +
			`status TASK_STATE_WORKING "working: step 2 of 2" | artifact echo append=false last=true "hello" | status TASK_STATE_COMPLETED`,
		run: func(t *testing.T, b binding) string {
			return eqJoin(b.streamSend(aliceKey, eqSendArgs{steps: 2}).rest(t))
		}},
	{name: "a subscription to an unfinished task starts with the task and follows it to its end",
		want: eqPendingTask + " | " + eqCanceledEvent, run: func(t *testing.T, b binding) string {
			id := eqPending(t, b, aliceKey)
			return eqJoin(eqCancelDuring(t, b, b.subscribe(aliceKey, id, ""), id))
		}},
	{name: "two subscriptions to one task see the same events",
		want: "the same: " + eqPendingTask + " | " + eqCanceledEvent, run: func(t *testing.T, b binding) string {
			id := eqPending(t, b, aliceKey)
			one, two := b.subscribe(aliceKey, id, ""), b.subscribe(aliceKey, id, "")
			head, _ := two.next(t)
			a, z := eqJoin(eqCancelDuring(t, b, one, id)), eqJoin(append([]eqItem{head}, two.rest(t)...))
			if a != z {
				return fmt.Sprintf("one: %s; two: %s", a, z)
			}
			return "the same: " + a
		}},
	{name: "a client that reconnects to an unfinished task gets what it missed (gRPC: subscribe again: the task as it stands, then the rest)",
		want: eqCanceledEvent, wantGRPC: eqPendingTask + " | " + eqCanceledEvent, run: func(t *testing.T, b binding) string {
			id := eqPending(t, b, aliceKey)
			s := b.subscribe(aliceKey, id, "")
			first, _ := s.next(t)
			s.stop()
			again := b.subscribe(aliceKey, id, first.id)
			var head []eqItem
			if !b.resumes() { // the subscription is on once its first event came
				it, _ := again.next(t)
				head = append(head, it)
			}
			if _, kind := b.cancel(aliceKey, id); kind != "" {
				return "cancel: " + kind
			}
			return eqJoin(append(head, again.rest(t)...))
		}},
	{name: "resuming a finished task's stream after an event sends the events after it, under the same ids (gRPC: no resume)",
		want: "the events after it, under the same ids", wantGRPC: "unsupported_operation", run: func(t *testing.T, b binding) string {
			all := eqFinished(t, b)
			if !b.resumes() {
				return eqJoin(b.subscribe(aliceKey, all[0].task, "").rest(t))
			}
			rest := b.subscribe(aliceKey, all[0].task, all[1].id).rest(t)
			if fmt.Sprint(rest) != fmt.Sprint(all[2:]) {
				return fmt.Sprintf("resumed %v, want %v", rest, all[2:])
			}
			return "the events after it, under the same ids"
		}},
	{name: "subscribing to or resuming an unknown task is not found", want: "subscribe not_found; resume not_found",
		run: func(t *testing.T, b binding) string {
			return fmt.Sprintf("subscribe %s; resume %s", eqJoin(b.subscribe(aliceKey, "no-such-task", "").rest(t)),
				eqJoin(b.subscribe(aliceKey, "no-such-task", "1-0").rest(t)))
		}},
	{name: "subscribing to a finished task is an unsupported operation", want: "unsupported_operation",
		run: func(t *testing.T, b binding) string {
			return eqJoin(b.subscribe(aliceKey, eqCompleted(t, b, aliceKey, ""), "").rest(t))
		}},
	{name: "a message to a finished task is an unsupported operation, sent or streamed", want: "send unsupported_operation; stream unsupported_operation",
		run: func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "")
			_, send := b.send(aliceKey, eqSendArgs{taskID: id, blocking: true})
			return fmt.Sprintf("send %s; stream %s", send, eqJoin(b.streamSend(aliceKey, eqSendArgs{taskID: id}).rest(t)))
		}},
	{name: "another client's task cannot be subscribed to, resumed or streamed to",
		want: "subscribe not_found; resume not_found; stream not_found; owner: " + eqPendingTask + " | " + eqCanceledEvent,
		run: func(t *testing.T, b binding) string {
			id := eqPending(t, b, aliceKey)
			sub := eqJoin(b.subscribe(bobKey, id, "").rest(t))
			resume := eqJoin(b.subscribe(bobKey, id, "1-0").rest(t))
			stream := eqJoin(b.streamSend(bobKey, eqSendArgs{taskID: id}).rest(t))
			owner := eqJoin(eqCancelDuring(t, b, b.subscribe(aliceKey, id, ""), id))
			return fmt.Sprintf("subscribe %s; resume %s; stream %s; owner: %s", sub, resume, stream, owner)
		}},
	{name: "a stream without credentials is unauthenticated", want: "stream unauthenticated; subscribe unauthenticated",
		run: func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "")
			return fmt.Sprintf("stream %s; subscribe %s", eqJoin(b.streamSend("", eqSendArgs{}).rest(t)),
				eqJoin(b.subscribe(otherWrng, id, "").rest(t)))
		}},
	// The card declares no extended card: v1.0 §3.3.4 makes asking for
	// one an unsupported operation (v0.3's own answer, -32007, is not in
	// this table, which speaks v1.0).
	{name: "the extended card, none being declared, is an unsupported operation", want: "unsupported_operation",
		run: func(t *testing.T, b binding) string { return b.extendedCard(aliceKey) }},
	{name: "an A2A version relay does not speak is refused", want: "get version_not_supported; send version_not_supported; stream version_not_supported",
		run: func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "")
			v := b.withVersion("9.9")
			_, get := v.get(aliceKey, id, nil)
			_, send := v.send(aliceKey, eqSendArgs{blocking: true})
			return fmt.Sprintf("get %s; send %s; stream %s", get, send, eqJoin(v.streamSend(aliceKey, eqSendArgs{}).rest(t)))
		}},
}
