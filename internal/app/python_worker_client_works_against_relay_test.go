package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/config"
)

// The Python worker client (clients/python/relay_worker.py) and its example
// (examples/worker.py) against a real relay: this runs their unittest suite
// with python3, RELAY_URL pointing at a relay with a worker queue. The
// lease is long (60 s), so a task claimable again within the tests' waits
// was released, and only a heartbeat can tell a handler of a cancel.
// Without python3 (3.11 or later) the test is skipped, or fails when CI is
// true, as a missing redis-server is.
func TestPythonWorkerClient(t *testing.T) {
	t.Parallel()
	python := findPython(t)
	r := startWorkerRelay(t, func(c *config.Config) { c.WorkerLease = time.Minute })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "-v", "test_relay_worker")
	cmd.Dir = filepath.Join("..", "..", "clients", "python")
	cmd.Env = append(envWithout("RELAY_URL", "RELAY_WORKER_TOKEN", "RELAY_QUEUE", "http_proxy", "HTTP_PROXY",
		"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"),
		"RELAY_URL="+r.url, "RELAY_WORKER_TOKEN="+testWorkerToken, "RELAY_QUEUE=jobs",
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "PYTHONDEVMODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if skipped := strings.Contains(string(out), "skipped"); skipped {
		t.Fatalf("python tests were skipped:\n%s", out)
	}
	t.Logf("%s", out)
}

// findPython returns the path of python3, 3.11 or later; without one it
// skips t, or fails it when CI is true.
func findPython(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(path, "-c", "import sys; sys.exit(sys.version_info < (3, 11))").Run()
	}
	if err == nil {
		return path
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("python3 3.11 or later is required when CI=true (apt-get install python3): %v", err)
	}
	t.Skipf("no python3 3.11 or later (apt-get install python3); with CI=true this fails: %v", err)
	return ""
}

// envWithout is the environment without the variables names.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || name == n
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}
