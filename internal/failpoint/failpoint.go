// Package failpoint names the points where a test may kill relay on
// purpose, to check what a crash there leaves behind. The points do
// something only in a binary built with the build tag failpoint (go build
// -tags failpoint), when the environment variable RELAY_FAILPOINT names
// them; in any other build Hit is empty and compiles away. It knows nothing
// of what runs around the points.
package failpoint

// Points.
const (
	// AfterCommit is right after the commit that makes a task's turn
	// claimable, before the turn is offered to its work queue
	// (ingest.Service).
	AfterCommit = "after-commit"
)

// Env is the environment variable that names the point to die at.
const Env = "RELAY_FAILPOINT"
