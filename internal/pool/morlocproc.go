package pool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// morlocConfig is what a process of a morloc pool starts with beside its
// child's config (whose args are its socket, its instance's temporary
// directory and shared-memory basename).
type morlocConfig struct {
	socket      string      // <tmpdir>/<socket>: nexus and the instance's other pools connect here
	wire        *morlocWire // its instance's
	wake        *wakePipe   // its instance's
	dialTimeout time.Duration
}

// morlocProcess is one running process of a pool morloc compiled, in an
// instance, and what nexus holds for it beside its child: its socket's
// address and a reader for its replies, which its instance's one call at
// a time uses. This file owns the protocol's side of its life: readiness
// by ping, and what its end means for the socket; its calls (one
// connection each) are in morloccall.go.
type morlocProcess struct {
	child
	morlocConfig
	addr unix.SockaddrUnix
	conn morlocConn // its call's
	br   bufio.Reader
}

// startMorlocProcess starts a morloc pool process and waits until it
// answers a ping on its socket. On failure the process is stopped and the
// error says why, with its output's last lines.
func startMorlocProcess(ctx context.Context, child childConfig, cfg morlocConfig) (*morlocProcess, error) {
	p := &morlocProcess{morlocConfig: cfg, addr: unix.SockaddrUnix{Name: cfg.socket}}
	p.br = *bufio.NewReaderSize(nil, 4096) // a small reply in one read
	if err := p.child.start(child, p); err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// waitReady pings the process's socket until it answers, as morloc's
// nexus does: connect (refused or missing until the pool has bound its
// socket, which it does after opening shared memory), send the 32-byte
// ping, and expect it back unchanged. It looks for the socket's file
// first, a stat where a connection would cost nexus far more, and tries
// again after a delay that starts short and grows: a C++ pool is up in a
// few milliseconds, which a one-shot CLI call waits for, an R pool in a
// second or more. (inotify would wake it at once, but closing an inotify
// descriptor waits for an RCU grace period, which delays nexus's exit by
// as much.)
func (p *morlocProcess) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(p.startTimeout)
	delay := pingFirstDelay
	for {
		err := socketFile(p.socket)
		if err == nil {
			err = p.ping(deadline)
		}
		if err == nil {
			break
		}
		if errors.Is(err, errBadPong) {
			p.stop()
			return p.startFailed(fmt.Sprintf("pool %s failed to start: %v", p.label, err))
		}
		if err := p.pause(ctx, min(delay, time.Until(deadline))); err != nil {
			return err
		}
		if !time.Now().Before(deadline) {
			p.stop()
			return p.startFailed(fmt.Sprintf("pool %s never became ready within %s (no answer to a ping on %s: %v)",
				p.label, p.startTimeout, p.socket, err))
		}
		delay = min(delay*110/100, pingMaxDelay)
	}
	p.becameReady()
	p.logger.Debug("pool ready", "pool", p.label, "pid", p.pid(), "socket", p.socket)
	return nil
}

// A start looks for its pool after pingFirstDelay, then after delays 10%
// longer each time, up to pingMaxDelay: a pool ready after t is seen
// within about t/10, at a hundred stats for a slow one.
const (
	pingFirstDelay = 100 * time.Microsecond
	pingMaxDelay   = 50 * time.Millisecond
)

// socketFile reports why there is no file at socket yet, if there is not.
func socketFile(socket string) error {
	var st unix.Stat_t
	return unix.Stat(socket, &st)
}

// pause waits d between two looks at a starting process, and fails the
// start if the process ends or ctx is done meanwhile. Go's timers wake a
// runtime with nothing else to do a millisecond late at the soonest
// (epoll's timeout counts milliseconds), which made a pool that was ready
// wait up to a millisecond to be seen: a pause shorter than that sleeps
// the thread instead (sleepThread), looking at the process and ctx after.
func (p *morlocProcess) pause(ctx context.Context, d time.Duration) error {
	if d < time.Millisecond {
		sleepThread(d)
		select {
		case <-p.gone:
			return p.exitedEarly()
		case <-ctx.Done():
			return p.abandonStart(ctx)
		default:
			return nil
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.gone:
		return p.exitedEarly()
	case <-ctx.Done():
		return p.abandonStart(ctx)
	case <-timer.C:
		return nil
	}
}

// errBadPong is a ping answered with something else than the ping.
var errBadPong = errors.New("it answered the ping with something else")

// ping sends one ping and waits, until deadline, for it to come back.
func (p *morlocProcess) ping(deadline time.Time) error {
	conn, err := net.DialTimeout("unix", p.socket, time.Until(deadline))
	if err != nil {
		return err
	}
	defer conn.Close()
	// A bounded wait, so that a cancelled start is seen; long enough that
	// a pool busy starting does not find its answer unread (it says so).
	try := time.Now().Add(2 * time.Second)
	if try.After(deadline) {
		try = deadline
	}
	_ = conn.SetDeadline(try)
	ping := p.wire.ping()
	if _, err := conn.Write(ping); err != nil {
		return err
	}
	pong := make([]byte, len(ping))
	if _, err := io.ReadFull(conn, pong); err != nil {
		return err // closed while the pool is still starting: try again
	}
	if !bytes.Equal(pong, ping) {
		return fmt.Errorf("%w: % x", errBadPong, pong)
	}
	return nil
}

// The protocol's side of the process's end (protocol, child.go).

// severed: a morloc pool has no connection that outlives a call.
func (p *morlocProcess) severed() <-chan struct{} { return nil }

func (p *morlocProcess) brokeProtocol() error { return nil }

// askToExit: morloc's pools have no shutdown message; morloc's nexus
// signals them at once, and so does nexus.
func (p *morlocProcess) askToExit() bool { return false }

// release removes the process's socket: R's pools leave theirs.
func (p *morlocProcess) release() { _ = os.Remove(p.socket) }

// endCalls wakes the call still running, if any: it ends with the
// process's error.
func (p *morlocProcess) endCalls(error) { p.wake.signal() }

// retireCalls: an instance retires as a whole (morlocProgram.retire),
// never one of its processes alone; were one retired, it would stop at
// once. p.mu is held.
func (p *morlocProcess) retireCalls(string) (after func(), drained bool) { return nil, true }
