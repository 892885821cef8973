//go:build unix && !linux

package pool

import "syscall"

// sysProcAttr puts a pool in a process group of its own, so that stopping
// it reaches its children. Without Linux's Pdeathsig, a pool notices nexus's
// death by end of file on fd 3.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
