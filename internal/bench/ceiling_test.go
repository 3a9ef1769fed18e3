package bench_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/bench"
)

// A ceiling run posts every notification straight to the sink: each
// arrives once, with the token, and the status updates are measured as
// relay's are.
func TestCeilingDeliversEveryNotification(t *testing.T) {
	t.Parallel()
	cfg := bench.Config{Ceiling: true, Tasks: 20, Steps: 2, Concurrency: 4, Drain: 10 * time.Second, Window: 50 * time.Millisecond}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Expected != 80 || res.Delivered != 80 || res.Lost != 0 || res.Duplicates != 0 || res.WrongToken != 0 || res.P99 <= 0 || res.PerSecond <= 0 {
		t.Fatalf("result %+v", res)
	}
	measured := 0
	for _, w := range res.Windows {
		measured += w.Measured
	}
	if measured != 60 { // the status updates: 3 of each task's 4 notifications
		t.Fatalf("the timeline holds %d notifications, want 60: %+v", measured, res.Windows)
	}
	if res.Redis != nil || strings.Contains(res.String(), "redis") {
		t.Fatalf("a run without Redis reports Redis figures: %s", res)
	}
	if runtime.GOOS == "linux" && (res.CPU <= 0 || !strings.Contains(res.String(), "\nprocess CPU per notification: ")) {
		t.Fatalf("no process CPU (%s) in:\n%s", res.CPU, res)
	}
	t.Log(res)
}

// Rate paces a ceiling run as it does relay's load: 20 tasks of 4
// notifications at 400 notifications/s take about 190ms to send (a tick
// per task, 10ms apart), not the few milliseconds of an unpaced run.
func TestCeilingKeepsToTheRate(t *testing.T) {
	t.Parallel()
	cfg := bench.Config{Ceiling: true, Tasks: 20, Steps: 2, Concurrency: 4, Rate: 400, Drain: 10 * time.Second}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Delivered != 80 || res.SendTime < 150*time.Millisecond {
		t.Fatalf("delivered %d in %s, want 80 in about 190ms", res.Delivered, res.SendTime)
	}
}

// A ceiling run posts webhooks: asking it to stream is refused.
func TestCeilingRefusesToStream(t *testing.T) {
	t.Parallel()
	_, err := bench.Run(context.Background(), bench.Config{Ceiling: true, Stream: true})
	if err == nil || !strings.Contains(err.Error(), "cannot stream") {
		t.Fatalf("err %v, want a refusal", err)
	}
}
