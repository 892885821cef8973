package pool

import (
	"time"

	"golang.org/x/sys/unix"
)

// unixSocket makes a non-blocking stream socket, closed on exec.
func unixSocket() (int, error) {
	return unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
}

// nonblockingPipe makes a pipe whose ends do not block, closed on exec.
func nonblockingPipe() (r, w int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return -1, -1, err
	}
	return p[0], p[1], nil
}

// sleepThread sleeps d on the calling thread, to within the kernel's timer
// slack rather than the Go runtime's millisecond (morlocProcess.pause).
func sleepThread(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil) // interrupted: a shorter pause does
}
