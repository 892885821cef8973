package pool

import "syscall"

// sysProcAttr puts a pool in a process group of its own, so that stopping
// it reaches its children, and has the kernel send it SIGTERM if nexus dies.
// SIGTERM rather than SIGKILL: a runtime catches it to kill its own process
// group, so that children its functions started die too (nobody else is
// left to do it), and by default it ends the pool all the same. Pdeathsig
// fires when the thread that started the pool exits; Go only retires
// threads locked with LockOSThread, which pool starts never are.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
