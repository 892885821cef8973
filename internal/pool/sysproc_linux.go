package pool

import "syscall"

// sysProcAttr puts a pool in a process group of its own, so that stopping
// it reaches its children, and has the kernel kill it if nexus dies.
// Pdeathsig fires when the thread that started the pool exits; Go only
// retires threads locked with LockOSThread, which pool starts never are.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
