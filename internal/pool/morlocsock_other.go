//go:build unix && !linux

package pool

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// unixSocket makes a non-blocking stream socket, closed on exec: flags
// set after, under the fork lock, where the socket call cannot take them.
func unixSocket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// nonblockingPipe makes a pipe whose ends do not block, closed on exec.
func nonblockingPipe() (r, w int, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return -1, -1, err
	}
	for _, fd := range p {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return -1, -1, err
		}
	}
	return p[0], p[1], nil
}

// sleepThread sleeps d: the runtime's timers here (kqueue) keep
// sub-millisecond time (morlocProcess.pause).
func sleepThread(d time.Duration) { time.Sleep(d) }
