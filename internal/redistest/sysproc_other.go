//go:build !linux

package redistest

import "syscall"

// sysProcAttr has nothing to add outside Linux: there a crashed test binary
// can leave its redis-server running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
