//go:build !linux

package chaos

import "syscall"

// sysProcAttr has nothing to add outside Linux: there a crashed test binary
// can leave its relay processes running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
