package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStandardWebhooksVerifyInNode runs e2e/standard_webhooks.mjs, a Node
// receiver that verifies relay's notifications with the npm package
// standardwebhooks (v1) and node:crypto (v1a), against a relay here. It
// needs node and e2e/node_modules (npm ci in e2e); without them it is
// skipped, except in CI (CI=true), where it fails.
func TestStandardWebhooksVerifyInNode(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs(filepath.Join("..", "..", "e2e", "standard_webhooks.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	lib := filepath.Join(filepath.Dir(script), "node_modules", "standardwebhooks")
	if _, statErr := os.Stat(lib); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) and e2e/node_modules (%v) are required in CI", err, statErr)
		}
		t.Skipf("needs node and e2e/node_modules (npm ci in e2e): %v %v", err, statErr)
	}
	r := deliveringRelay(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, r.url)
	cmd.Env = append(os.Environ(), "RELAY_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", filepath.Base(script), err, out)
	}
	t.Logf("%s", out)
}
