package pool

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// morlocConn is the connection of one call to a morloc pool, driven with
// plain system calls on the caller's goroutine: socket, connect, write,
// poll, read, close, and no more for a small call, which wakes no other
// goroutine. Through net.Conn the same call cost three times as many
// system calls (the poller's registrations, descriptor flags, addresses, a
// read that finds nothing yet) and a goroutine parked and woken: more
// than all of nexus's own work on the call (docs/performance.md, "morloc
// pools"). While it waits, poll(2) also watches the instance's wake pipe,
// readable once the caller gives up or the process is gone, and, for a
// call waiting inline (CallOptions.Inline), the caller's input, which it
// hands over (Yield) when that has something.
type morlocConn struct {
	fd   int
	ctx  context.Context
	c    *callRequest
	wake *wakePipe
	proc *morlocProcess // its goneErr says when it is gone
	fds  [3]unix.PollFd
}

// errProcessGone ends a wait: the process is gone (its death says more).
var errProcessGone = errors.New("the pool process is gone")

// dialMorloc connects to the Unix socket at sa; EAGAIN means its listen
// backlog is full.
func dialMorloc(sa *unix.SockaddrUnix) (int, error) {
	fd, err := unixSocket()
	if err != nil {
		return -1, err
	}
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Write writes all of b, waiting for room as needed.
func (mc *morlocConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := unix.Write(mc.fd, b[n:])
		if k > 0 {
			n += k
		}
		switch err {
		case nil, unix.EINTR:
		case unix.EAGAIN:
			if err := mc.wait(unix.POLLOUT); err != nil {
				return n, err
			}
		default:
			return n, err
		}
	}
	return n, nil
}

// Read reads what has come, waiting for something if nothing has.
func (mc *morlocConn) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(mc.fd, b)
		switch err {
		case nil:
			if n == 0 && len(b) > 0 {
				return 0, io.EOF
			}
			return n, nil
		case unix.EINTR:
		case unix.EAGAIN:
			if err := mc.wait(unix.POLLIN); err != nil {
				return 0, err
			}
		default:
			return 0, err
		}
	}
}

// wait waits until the connection is ready for events (POLLIN, POLLOUT),
// or has ended. It fails with ctx's error once the caller gives up,
// os.ErrDeadlineExceeded once the call's time has run out, and
// errProcessGone once the process is gone.
func (mc *morlocConn) wait(events int16) error {
	for {
		if err := mc.ctx.Err(); err != nil {
			return err
		}
		timeout := -1
		if !mc.c.deadline.IsZero() {
			d := time.Until(mc.c.deadline)
			if d <= 0 {
				return os.ErrDeadlineExceeded
			}
			timeout = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		fds := mc.fds[:2]
		fds[0] = unix.PollFd{Fd: int32(mc.fd), Events: events}
		fds[1] = unix.PollFd{Fd: int32(mc.wake.r), Events: unix.POLLIN}
		if in := mc.c.opts.Inline; in != nil {
			fds = append(fds, unix.PollFd{Fd: int32(in.Fd), Events: unix.POLLIN})
		}
		if _, err := unix.Poll(fds, timeout); err != nil && err != unix.EINTR {
			return err
		}
		switch {
		case fds[0].Revents != 0:
			return nil // ready, or ended: the read or write says which
		case fds[1].Revents != 0:
			mc.wake.drain()
			if mc.proc.goneErr() != nil {
				return errProcessGone
			}
			// ctx is seen at the top; a wake left by an earlier call is no more
		case len(fds) > 2 && fds[2].Revents != 0:
			mc.c.yieldInline() // input: stdin is someone else's to read from now on
		}
	}
}

// wakePipe wakes an instance's call waiting in poll(2): its caller gave
// up, or a process of the instance is gone.
type wakePipe struct {
	r, w     int
	signalFn func() // signal, made once: a call hands it to context.AfterFunc
	mu       sync.Mutex
	closed   bool
}

func newWakePipe() (*wakePipe, error) {
	r, w, err := nonblockingPipe()
	if err != nil {
		return nil, err
	}
	p := &wakePipe{r: r, w: w}
	p.signalFn = p.signal
	return p, nil
}

// signal makes the pipe readable; once closed it does nothing.
func (p *wakePipe) signal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		_, _ = unix.Write(p.w, []byte{1})
	}
}

// drain empties the pipe.
func (p *wakePipe) drain() {
	var b [64]byte
	for {
		if n, err := unix.Read(p.r, b[:]); n <= 0 && err != unix.EINTR {
			return
		}
	}
}

func (p *wakePipe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		unix.Close(p.r)
		unix.Close(p.w)
	}
}
