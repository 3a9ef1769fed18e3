package worker

import (
	"testing"

	"go.uber.org/goleak"
)

// The package is public and imports nothing of internal/, its tests
// included: goleak directly, rather than redistest's CheckLeaksMain.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
