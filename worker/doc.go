// Package worker is a client for relay's worker API, for agents that pull
// relay's tasks from a queue over plain HTTP (docs/worker-api.md): claim a
// task, post its status updates and artifact chunks, heartbeat to keep the
// lease, and end it with a final state or release it.
//
// It uses the standard library only and speaks the v1.0 shapes of the API
// (A2A-Version: 1.0): states go on the wire as TASK_STATE_* names, roles as
// ROLE_*.
//
// Run is the whole loop: it claims tasks one at a time, calls the handler
// with a context that is kept alive by heartbeats and ends when the client
// cancels the task or the lease is lost, fails the task when the handler
// returns an error, and releases the task in hand when its own context ends:
//
//	c := &worker.Client{
//		BaseURL: "http://localhost:8080",
//		Token:   os.Getenv("RELAY_WORKER_TOKEN"),
//		Queue:   "default",
//	}
//	err := c.Run(ctx, func(ctx context.Context, j *worker.Job) error {
//		if err := j.Status(ctx, worker.StateWorking, "reading the input"); err != nil {
//			return err // e.g. the client canceled the task
//		}
//		out := strings.ToUpper(j.Message.Text())
//		if err := j.Artifact(ctx, "result", out, false, true); err != nil {
//			return err
//		}
//		return j.Complete(ctx, "done")
//	})
//
// Claim and the Job methods are the same operations one by one, for workers
// that want their own loop. Errors the API answers with are *APIError values;
// errors.Is(err, ErrCanceled), ErrLeaseLost and ErrFinished tell a worker to
// stop working on the task.
package worker
