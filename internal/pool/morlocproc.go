package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// morlocConfig is what a process of a morloc pool starts with beside its
// child's config (whose args are its socket, the program's temporary
// directory and shared-memory basename).
type morlocConfig struct {
	// socket is this process's own socket (args' socket path): each start
	// binds a fresh one, so that a process replaced while a call is stuck
	// in it keeps serving its other calls while the new one starts. link
	// is <tmpdir>/<socket>, where the program's other pools reach this
	// pool: a symbolic link, pointed at socket once the process is ready.
	socket, link string

	wire        *morlocWire
	dialTimeout time.Duration
	// stuckIn learns the other pools a stuck call needed (see
	// morlocProgram.replaceNeeded).
	stuckIn func(pools []int, why string)
}

// morlocProcess is one running process of a pool morloc compiled, and what
// nexus holds for it beside its child: its socket and its calls in flight.
// This file owns the protocol's side of its life: readiness by ping, and
// what its end means for the socket; its calls (one connection each) are
// in morloccall.go.
type morlocProcess struct {
	child
	morlocConfig
	gate resultGate // which calls may be in flight together (see resultGate)

	// Guarded by child.mu.
	inflight  map[*morlocCall]bool
	abandoned map[*morlocCall]abandonedCall // given up on, still running
	// settled, while calls given up on wait out their cancel grace, is
	// closed once they are done or the process is retired; new calls wait
	// for it (see call).
	settled chan struct{}
	stuck   bool // a call given up on was found stuck: the process is being replaced
}

// startMorlocProcess starts a morloc pool process and waits until it
// answers a ping on its socket. On failure the process is stopped and the
// error says why, with its output's last lines.
func startMorlocProcess(ctx context.Context, child childConfig, cfg morlocConfig) (*morlocProcess, error) {
	p := &morlocProcess{
		morlocConfig: cfg,
		inflight:     make(map[*morlocCall]bool),
		abandoned:    make(map[*morlocCall]abandonedCall),
	}
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
// ping, and expect it back unchanged. Then the program's other pools are
// pointed at it.
func (p *morlocProcess) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(p.startTimeout)
	delay := time.Millisecond
	for {
		err := p.ping(deadline)
		if err == nil {
			break
		}
		if errors.Is(err, errBadPong) {
			p.stop()
			return p.startFailed(fmt.Sprintf("pool %s failed to start: %v", p.label, err))
		}
		timer := time.NewTimer(min(delay, time.Until(deadline)))
		select {
		case <-p.gone:
			timer.Stop()
			return p.exitedEarly()
		case <-ctx.Done():
			timer.Stop()
			return p.abandonStart(ctx)
		case <-timer.C:
		}
		if !time.Now().Before(deadline) {
			p.stop()
			return p.startFailed(fmt.Sprintf("pool %s never became ready within %s (no answer to a ping on %s: %v)",
				p.label, p.startTimeout, p.socket, err))
		}
		delay = min(delay*5/4+time.Millisecond, 50*time.Millisecond)
	}
	if err := p.publish(); err != nil {
		p.stop()
		return fmt.Errorf("pool %s failed to start: %w", p.label, err)
	}
	p.becameReady()
	p.logger.Debug("pool ready", "pool", p.label, "pid", p.pid(), "socket", p.socket)
	return nil
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

// publish points <tmpdir>/<socket>, where the program's other pools reach
// this one, at the process's own socket, atomically: a pool connecting
// meanwhile reaches the old process or the new one, never nothing.
func (p *morlocProcess) publish() error {
	tmp := p.socket + ".link"
	_ = os.Remove(tmp)
	if err := os.Symlink(p.socket, tmp); err != nil {
		return fmt.Errorf("linking its socket for the other pools: %w", err)
	}
	if err := os.Rename(tmp, p.link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("linking its socket for the other pools: %w", err)
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

// release removes the process's own socket: R's pools leave theirs.
func (p *morlocProcess) release() { _ = os.Remove(p.socket) }

// endCalls closes the connections of the calls still running: their
// exchanges end, with the process's error.
func (p *morlocProcess) endCalls(error) {
	p.mu.Lock()
	p.settle()
	calls := make([]*morlocCall, 0, len(p.inflight)+len(p.abandoned))
	for c := range p.inflight {
		calls = append(calls, c)
	}
	for c := range p.abandoned {
		calls = append(calls, c)
	}
	p.mu.Unlock()
	for _, c := range calls {
		c.conn.Close()
	}
}

// retireCalls: the calls the process still runs finish in it, and the
// calls held back (see settled) go to the fresh one. p.mu is held.
func (p *morlocProcess) retireCalls(why string) (after func(), drained bool) {
	p.settle()
	return func() {
		p.logger.Info("pool process retired", "pool", p.label, "pid", p.pid(), "why", why)
	}, len(p.inflight) == 0
}

// settle closes settled when no call given up on is waiting out its
// grace any more, or the process takes no new calls. p.mu is held.
func (p *morlocProcess) settle() {
	if p.settled != nil && (len(p.abandoned) == 0 || p.retiring || p.err != nil) {
		close(p.settled)
		p.settled = nil
	}
}
