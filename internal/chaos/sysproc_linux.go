//go:build linux

package chaos

import "syscall"

// sysProcAttr asks Linux to kill a relay process when the test binary dies,
// so a test that crashes or times out leaves no relay behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
