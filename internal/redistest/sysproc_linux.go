//go:build linux

package redistest

import "syscall"

// sysProcAttr asks Linux to kill redis-server when the test binary dies,
// so a test binary that crashes or times out leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
