package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// morlocConfig is what startMorlocProcess needs to run one process of a
// morloc pool.
type morlocConfig struct {
	label string // names the process in messages: "py"
	lang  string
	argv  []string // the manifest's exec, then socket, tmpdir and shm basename
	dir   string
	env   []string

	// socket is this process's own socket (argv's socket path): each start
	// binds a fresh one, so that a process replaced while a call is stuck
	// in it keeps serving its other calls while the new one starts. link
	// is <tmpdir>/<socket>, where the program's other pools reach this
	// pool: a symbolic link, pointed at socket once the process is ready.
	socket, link string

	functions   map[int]Function
	wire        *morlocWire
	opts        *Options // Stderr, OutputLog, Logger, StartTimeout, StopGrace, CancelGrace
	reaper      *reaper  // told of the process group; may be nil
	dialTimeout time.Duration

	// onDeath and onStuck are as processConfig's. onBroken learns that a
	// worker of the process died running a call while the process lives
	// on; it must retire the process after starting another: morloc's R
	// pools start no worker in place of a dead one, so such a process may
	// never answer again (Python's do, but nexus cannot tell which).
	// prepare learns that a call was given up on, so that a process to
	// replace this one starts at once, and calls ready when it is up;
	// unprepare learns that the calls given up on ended first. stuckIn
	// learns the other pools a stuck call needed (see Set.replaceNeeded).
	morlocHooks
}

// morlocProcess is one running process of a pool morloc compiled. It owns
// the process's whole life: start, readiness by ping, output, death and
// stop; its calls (one connection each) are in morloccall.go.
type morlocProcess struct {
	morlocConfig
	cmd      *exec.Cmd
	outPipe  *os.File // our end of the pool's stdout and stderr
	tail     tail
	readyAt  time.Time // set before startMorlocProcess returns
	answered atomic.Bool
	gate     resultGate // which calls may be in flight together (see resultGate)

	mu        sync.Mutex
	inflight  map[*morlocCall]bool
	abandoned map[*morlocCall]abandonedCall // given up on, still running
	// settled, while calls given up on wait out their cancel grace, is
	// closed once they are done or the process is retired; new calls wait
	// for it (see call).
	settled  chan struct{}
	ready    bool
	retiring bool
	stuck    bool // a call given up on was found stuck: the process is being replaced
	stopping bool
	err      error // why calls fail now that the process is gone; set just before gone closes

	exitState  string        // "exit status 1"; set before exited closes
	exited     chan struct{} // closed once the process has been reaped
	outputDone chan struct{} // closed when copyOutput returns
	gone       chan struct{} // closed when the process, its group and its output are finished
}

// startMorlocProcess starts a morloc pool process and waits until it
// answers a ping on its socket. On failure the process is stopped and the
// error says why, with its output's last lines.
func startMorlocProcess(ctx context.Context, cfg morlocConfig) (*morlocProcess, error) {
	failed := func(err error) error { return fmt.Errorf("pool %s failed to start: %w", cfg.label, err) }
	if len(cfg.argv) <= 3 {
		return nil, failed(errors.New("its manifest entry has no exec command"))
	}
	argv0 := cfg.argv[0]
	if strings.ContainsRune(argv0, filepath.Separator) && !filepath.IsAbs(argv0) {
		argv0 = filepath.Join(cfg.dir, argv0)
	}
	cmd := exec.Command(argv0, cfg.argv[1:]...)
	cmd.Dir = cfg.dir
	cmd.Env = cfg.env
	cmd.SysProcAttr = sysProcAttr()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, failed(err)
	}
	cmd.Stdout = outW // stdout too: nexus's own may be the MCP stream
	cmd.Stderr = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return nil, failed(execError(cfg.argv[0], argv0, err))
	}
	cfg.reaper.watch(cmd.Process.Pid)
	outW.Close()

	p := &morlocProcess{
		morlocConfig: cfg,
		cmd:          cmd,
		outPipe:      outR,
		inflight:     make(map[*morlocCall]bool),
		abandoned:    make(map[*morlocCall]abandonedCall),
		exited:       make(chan struct{}),
		outputDone:   make(chan struct{}),
		gone:         make(chan struct{}),
	}
	go func() {
		defer close(p.outputDone)
		copyPoolOutput(outR, cfg.label, &p.tail, cfg.opts.Stderr, cfg.opts.OutputLog)
	}()
	go func() {
		_ = cmd.Wait()
		p.exitState = cmd.ProcessState.String()
		close(p.exited)
	}()
	go p.supervise()

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
	deadline := time.Now().Add(p.opts.StartTimeout)
	delay := time.Millisecond
	for {
		err := p.ping(deadline)
		if err == nil {
			break
		}
		if errors.Is(err, errBadPong) {
			p.stop()
			return startFailure(fmt.Sprintf("pool %s failed to start: %v", p.label, err), &p.tail, RuntimeMorloc)
		}
		timer := time.NewTimer(min(delay, time.Until(deadline)))
		select {
		case <-p.gone:
			timer.Stop()
			return startFailure(fmt.Sprintf("pool %s failed to start: exited before it was ready (%s)", p.label, p.exitState), &p.tail, RuntimeMorloc)
		case <-ctx.Done():
			timer.Stop()
			p.stop()
			return fmt.Errorf("pool %s: start abandoned: %w", p.label, context.Cause(ctx))
		case <-timer.C:
		}
		if !time.Now().Before(deadline) {
			p.stop()
			return startFailure(fmt.Sprintf("pool %s never became ready within %s (no answer to a ping on %s: %v)",
				p.label, p.opts.StartTimeout, p.socket, err), &p.tail, RuntimeMorloc)
		}
		delay = min(delay*5/4+time.Millisecond, 50*time.Millisecond)
	}
	if err := p.publish(); err != nil {
		p.stop()
		return fmt.Errorf("pool %s failed to start: %w", p.label, err)
	}
	p.mu.Lock()
	p.ready = true
	p.readyAt = time.Now()
	p.mu.Unlock()
	p.opts.Logger.Debug("pool ready", "pool", p.label, "pid", p.pid(), "socket", p.socket)
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

// supervise waits for the process to end, kills what is left of its
// group, and fails the calls still in flight.
func (p *morlocProcess) supervise() {
	<-p.exited
	// Its workers (forked by Python's and R's pools) must not outlive it.
	p.signalGroup(syscall.SIGKILL)
	p.reaper.forget(p.pid())
	select {
	case <-p.outputDone:
	case <-time.After(p.opts.StopGrace):
		p.outPipe.Close() // something outside the group holds the pipe
		<-p.outputDone
	}
	p.outPipe.Close()
	_ = os.Remove(p.socket) // R's pools leave theirs

	p.mu.Lock()
	var err error
	if p.stopping {
		err = fmt.Errorf("pool %s: stopped", p.label)
	} else {
		err = errors.New(p.withTail(fmt.Sprintf("pool %s died (%s)", p.label, p.exitState)))
	}
	died := p.ready && !p.stopping // a failed start is reported by its caller
	p.mu.Unlock()
	if died {
		p.opts.Logger.Warn("pool process ended", "pool", p.label, "pid", p.pid(), "err", err)
		if p.onDeath != nil {
			p.onDeath(p, err)
		}
	}
	p.mu.Lock()
	p.err = err
	p.settle()
	calls := make([]*morlocCall, 0, len(p.inflight)+len(p.abandoned))
	for c := range p.inflight {
		calls = append(calls, c)
	}
	for c := range p.abandoned {
		calls = append(calls, c)
	}
	p.mu.Unlock()
	close(p.gone)
	for _, c := range calls {
		c.conn.Close() // their exchanges end, with p.err
	}
}

// stop ends the process as morloc's nexus does (it has no shutdown
// message): SIGTERM to its group, then SIGKILL after the grace; it returns
// once the process is gone.
func (p *morlocProcess) stop() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.signalGroup(syscall.SIGTERM)
	timer := time.NewTimer(p.opts.StopGrace)
	select {
	case <-p.exited:
		timer.Stop()
	case <-timer.C:
		p.signalGroup(syscall.SIGKILL)
	}
	<-p.gone
}

// retire takes the process out of service because a call in it is stuck:
// new calls go to the fresh process the worker has started, the calls it
// still runs finish here, and it is stopped once they are done.
func (p *morlocProcess) retire(why string) {
	p.mu.Lock()
	if p.retiring || p.err != nil {
		p.mu.Unlock()
		return
	}
	p.retiring = true
	p.settle()
	drained := len(p.inflight) == 0
	p.mu.Unlock()
	p.opts.Logger.Info("pool process retired", "pool", p.label, "pid", p.pid(), "why", why)
	if drained {
		go p.stop()
	}
}

// settle closes settled when no call given up on is waiting out its
// grace any more, or the process takes no new calls. p.mu is held.
func (p *morlocProcess) settle() {
	if p.settled != nil && (len(p.abandoned) == 0 || p.retiring || p.err != nil) {
		close(p.settled)
		p.settled = nil
	}
}

func (p *morlocProcess) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unusableErr() == nil
}

// unusableErr says why the process takes no more calls, or nil. p.mu is held.
func (p *morlocProcess) unusableErr() error {
	switch {
	case p.err != nil:
		return p.err
	case p.retiring:
		return fmt.Errorf("pool %s: replaced", p.label)
	}
	return nil
}

// dead reports whether the process has ended, even before nexus has
// reaped it (cmd.Wait may lag under load): a killed process is a zombie
// at once.
func (p *morlocProcess) dead() bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	return zombie(p.pid())
}

// awaitEnd waits, when the process has died, until nexus has dealt with
// its death (its worker has started the next), and reports whether it had.
func (p *morlocProcess) awaitEnd() bool {
	if !p.dead() {
		return false
	}
	timer := time.NewTimer(p.opts.StopGrace + 5*time.Second)
	defer timer.Stop()
	select {
	case <-p.gone:
	case <-timer.C:
	}
	return true
}

func (p *morlocProcess) answeredAny() bool          { return p.answered.Load() }
func (p *morlocProcess) upFor() time.Duration       { return time.Since(p.readyAt) }
func (p *morlocProcess) ended() <-chan struct{}     { return p.gone }
func (p *morlocProcess) pid() int                   { return p.cmd.Process.Pid }
func (p *morlocProcess) withTail(msg string) string { return withTail(msg, &p.tail) }

func (p *morlocProcess) signalGroup(sig syscall.Signal) {
	if err := signalGroup(p.pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.opts.Logger.Warn("signalling pool process group", "pool", p.label, "signal", sig, "err", err)
	}
}
