package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// relay bench --ceiling starts no relay, says first that it measures the
// raw POST ceiling, and delivers every notification.
func TestBenchCeiling(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := benchCmd([]string{"--ceiling", "--tasks", "20", "--steps", "2", "--concurrency", "4"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "relay bench --ceiling: the raw POST ceiling, no relay: 4 clients POST 20 tasks x 4 notifications") ||
		!strings.Contains(out, "notifications or events: 80 of 80 received") || !strings.Contains(out, "lost: 0, duplicates: 0, wrong token: 0") {
		t.Fatalf("stdout:\n%s", out)
	}
}

// Flags that contradict each other, or a Redis URL that is none, are
// refused.
func TestBenchRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--ceiling", "--mode", "stream"}, 2, "relay bench: --ceiling posts webhooks: it takes no --mode stream"},
		{[]string{"--target", "http://127.0.0.1:1/", "--redis-info-url", "http://127.0.0.1:1"}, 1, "relay bench: --redis-info-url: "},
	} {
		var stdout, stderr bytes.Buffer
		if code := benchCmd(tt.args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
		}
	}
}

// With --redis-url, relay bench reports what that Redis did per
// notification.
func TestBenchReportsRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var stdout, stderr bytes.Buffer
	code := benchCmd([]string{"--redis-url", srv.URL(), "--tasks", "20", "--steps", "2", "--delay", "1ms", "--concurrency", "4"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, line := range []string{"\nredis commands per notification: ", "\nredis CPU per notification: ", "\nredis memory per notification: ", "\nprocess CPU per notification: "} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("no %q in:\n%s", line, stdout.String())
		}
	}
}
