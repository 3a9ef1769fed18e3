// Command example is a relay worker: it claims tasks from a queue, reports
// three "working" updates, streams the upper-cased input text as an artifact
// in two chunks, and completes the task. Ctrl-C releases the task in hand
// and exits.
//
//	RELAY_WORKER_TOKEN=secret go run ./worker/example -queue default
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/a2arelay/relay/worker"
)

func main() {
	url := flag.String("url", cmp.Or(os.Getenv("RELAY_URL"), "http://localhost:8080"), "relay address (RELAY_URL)")
	token := flag.String("token", os.Getenv("RELAY_WORKER_TOKEN"), "worker token (RELAY_WORKER_TOKEN)")
	queue := flag.String("queue", cmp.Or(os.Getenv("RELAY_QUEUE"), "default"), "queue to work on (RELAY_QUEUE)")
	pause := flag.Duration("pause", 500*time.Millisecond, "pause between the working updates")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(log)
	if *token == "" {
		log.Error("no worker token: set RELAY_WORKER_TOKEN or -token")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &worker.Client{BaseURL: *url, Token: *token, Queue: *queue}
	log.Info("waiting for tasks", "url", *url, "queue", *queue)
	err := c.Run(ctx, func(ctx context.Context, j *worker.Job) error {
		return handle(ctx, j, *pause)
	})
	if err != nil {
		log.Error("worker stopped", "err", err)
		os.Exit(1)
	}
	log.Info("bye")
}

// handle works on one task. ctx ends when the client cancels the task, when
// the lease is lost, or on Ctrl-C; the worker.Client settles the task then.
func handle(ctx context.Context, j *worker.Job, pause time.Duration) error {
	input := j.Message.Text()
	slog.Info("working", "task", j.TaskID, "attempt", j.Attempt, "input", input)
	for step := 1; step <= 3; step++ {
		if err := j.Status(ctx, worker.StateWorking, fmt.Sprintf("step %d of 3", step)); err != nil {
			return err // e.g. 409 task_canceled: stop here
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pause):
		}
	}
	out := []rune(strings.ToUpper(input))
	half := len(out) / 2
	if err := j.Artifact(ctx, "result", string(out[:half]), false, false); err != nil {
		return err
	}
	if err := j.Artifact(ctx, "result", string(out[half:]), true, true); err != nil {
		return err
	}
	return j.Complete(ctx, "done")
}
