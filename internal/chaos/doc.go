// Package chaos is relay's chaos suite: it runs several relay processes
// over one Redis, drives thousands of tasks through them while a webhook
// sink fails on purpose, kills and restarts relay instances and Redis in
// the middle of it, and then checks relay's delivery guarantees against
// what Redis committed:
//
//   - every committed event reaches every push config of its task at least
//     once (duplicates only under the same A2A-Notification-Id);
//   - per (task, webhook) the notifications arrive in commit order: none is
//     sent before the one before it was accepted;
//   - an SSE subscriber that reconnects with Last-Event-ID sees every event
//     of its task exactly once, in order;
//   - the delivery log lists every notification as delivered, with its
//     attempts;
//   - a task whose id a client received survives every restart, and ends
//     (completed, failed, or waiting for input): the demo agent's work moves
//     to another instance when its instance is killed, and waits for Redis
//     through an outage; so does a worker task, whose Go workers (package
//     worker) reconnect to any live instance;
//   - a worker post whose reply was cut (after relay received it) and
//     that the worker sent again under its Idempotency-Key is committed
//     once, and every post relay acknowledged is committed;
//   - two clients naming the same contextId each see only their own tasks
//     there (ListTasks), and the claims of their tasks carry their owners.
//
// The test is TestChaos (chaos_test.go); the helpers here start the relay
// processes (Relay), receive the notifications (Sink), drive the load
// (Load, Follower, Fleet of workers, Sharer) and read what Redis
// committed (Truth). scripts/chaos.sh
// runs a bigger load.
package chaos
