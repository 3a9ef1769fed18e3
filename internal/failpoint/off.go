//go:build !failpoint

package failpoint

// Hit does nothing: this build has no failpoints.
func Hit(string) {}
