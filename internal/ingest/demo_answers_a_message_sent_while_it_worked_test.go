package ingest

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/redistest"
)

// A message the client sends while the demo works on a task is a turn of
// its own: when the current turn ends asking for input, the queued turn
// takes the task up again and carries it to its end, answering that
// message (the task does not stay waiting for an answer it has). The
// queued turn, read while the first held the task, comes out once it has
// been idle a lease: the lease is short here.
func TestDemoAnswersAMessageSentWhileItWorked(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a := newDemoInstance(t, srv.Addr(), "meanwhile", 2*time.Second, DemoConfig{}, slog.New(slog.DiscardHandler))
	a.run()
	id := a.send(t, "first", map[string]any{"steps": 3, "delayMs": 300, "outcome": "input-required"})
	waitFor(t, 10*time.Second, "the first turn working", func() bool { return a.task(id).Status.State == a2a.StateWorking })
	md, _ := json.Marshal(map[string]any{"demo": map[string]any{"steps": 1, "delayMs": 0}})
	if _, err := a.svc.Send(context.Background(), a2a.SendParams{Dialect: a2a.V10, TaskID: id, Message: a2a.Message{
		MessageID: "meanwhile", Role: a2a.RoleUser, Parts: []a2a.Part{{Kind: a2a.PartText, Text: "second"}}, Metadata: md}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the task completed", func() bool { return a.task(id).Status.State == a2a.StateCompleted })
	task := a.task(id)
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 || task.Artifacts[0].Parts[0].Text != "second" {
		t.Fatalf("artifacts %+v, want the echo of the message sent meanwhile", task.Artifacts)
	}
}
