package httpserve

import (
	"log/slog"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// closeListener stops accepting without resetting a connection the kernel
// has already completed: closing a listening socket resets every
// connection still in its accept queue, whose client (nginx) has sent its
// request by then and must answer 502. So it waits, at most a second,
// until the server's accept loop has taken every queued connection
// (TCP_INFO's tcpi_unacked is the queue's length on a listening socket),
// then shuts the socket down in the same breath, so that the next
// connection is refused rather than queued.
func closeListener(ln net.Listener, log *slog.Logger) {
	defer ln.Close()
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return
	}
	raw, err := tl.SyscallConn()
	if err != nil {
		return
	}
	deadline := time.Now().Add(time.Second)
	for {
		closed := false
		raw.Control(func(fd uintptr) {
			info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
			if err == nil && info.Unacked > 0 && time.Now().Before(deadline) {
				return
			}
			if err == nil && info.Unacked > 0 {
				log.Warn("closing the listener with connections still queued: they are reset", "queued", info.Unacked)
			}
			// On a listening socket, SHUT_RD stops it listening at once
			// (Linux's tcp_disconnect), unlike Close, which waits for the
			// accept loop's goroutine to let go of the descriptor.
			unix.Shutdown(int(fd), unix.SHUT_RD)
			closed = true
		})
		if closed {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}
