package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A pool process, whichever protocol it speaks, is a child: this file owns
// its life as the operating system sees it (exec, its process group, the
// reaper, its output, its exit, TERM then KILL, the error its death gives,
// and the calls that death fails). A driver (nexusproc.go, morlocproc.go)
// embeds a child and adds the wire: how nexus talks to the process.

const (
	// tailLines is how many lines of a pool's output errors quote.
	tailLines = 20
	// tailLineMax cuts a quoted line, so one runaway line cannot flood an error.
	tailLineMax = 1000
	// outputLineMax is where a line of pool output that never ends is cut.
	outputLineMax = 64 << 10
)

// childConfig is what every start of a pool process begins with; its
// owner fills it (Set.childConfig) and its driver adds args and env.
type childConfig struct {
	lang    string
	runtime string   // the Spec's: names the protocol assumed when a start fails
	label   string   // names the process in messages: "py", or "py#2" among several workers
	argv    []string // the manifest's exec; a relative first element with a slash is resolved against dir
	args    []string // what the driver adds after argv
	dir     string
	env     []string

	stderr       io.Writer    // where the pool's stdout and stderr lines go
	outputLog    *slog.Logger // if set, takes those lines as records instead
	logger       *slog.Logger
	startTimeout time.Duration
	grace        time.Duration // how long the process may take to exit at each stop step
	cancelGrace  time.Duration // how long a cancelled call may take to stop
	reaper       *reaper       // told of the process group; may be nil
	functions    map[int]Function

	processHooks
}

// processHooks are how a process tells its owner of its life: a worker
// sets both, a morloc instance onDeath alone (it retires as a whole).
type processHooks struct {
	// onDeath learns that a process that had become ready ended without
	// nexus asking it to, and why, before any call can see it gone.
	onDeath func(p poolProcess, err error)
	// onStuck learns that a call did not stop when cancelled: it must
	// retire the process after starting another.
	onStuck func(p poolProcess, why string)
}

// protocol is a driver's side of one process: how nexus talks to it. The
// child consults it at the moments of the process's life that depend on it.
type protocol interface {
	poolProcess
	// severed is closed when nexus can no longer talk to the process
	// though it may live on (nexus's fd 4 ended); nil if that cannot happen.
	severed() <-chan struct{}
	// brokeProtocol says, once severed has closed, how the process broke
	// the protocol; nil if it did not. Such a process is killed at once,
	// and its end is told as that.
	brokeProtocol() error
	// askToExit asks the process to exit by itself and reports whether it
	// could: if so it gets a grace to do it before it is signalled.
	askToExit() bool
	// release lets go of the process's wire once the process has exited
	// and its group is killed: what it wrote last is read, then the
	// driver's pipes or sockets go.
	release()
	// endCalls fails the calls still in flight with err, why the process
	// is gone. It runs once, after new calls see err, before gone closes.
	endCalls(err error)
	// retireCalls decides, as the process retires, what becomes of the
	// calls in it, with c.mu held: drained reports that none runs on
	// (then it stops), and after, if not nil, runs once c.mu is let go.
	retireCalls(why string) (after func(), drained bool)
}

// child is one running pool process: the operating system's side of it.
type child struct {
	childConfig
	proto   protocol
	cmd     *exec.Cmd
	outPipe *os.File // our end of the pool's stdout and stderr
	tail    tail

	readyAt  time.Time   // when it became ready; set before its start returns
	answered atomic.Bool // it has answered a call: it works

	// mu guards the fields below and its driver's calls in flight: a
	// call's check that the process takes calls and its entry in flight
	// are one step.
	mu       sync.Mutex
	ready    bool  // it became ready
	stopping bool  // nexus asked it to stop
	retiring bool  // a call in it is stuck: no new calls, stop when drained
	err      error // why calls fail now that the process is gone; set just before gone closes

	exitState  string        // "exit status 1"; set before exited closes
	exited     chan struct{} // closed once the process has been reaped
	outputDone chan struct{} // closed when its output is read to the end
	gone       chan struct{} // closed when the process, its group, its output and its wire are finished
}

// start runs the program, with extra as its fd 3 onward and its stdout and
// stderr on one pipe, so that their lines keep their order (stdout too:
// nexus's own may be the MCP stream), and watches its output, its exit and
// its end. extra are the child's ends of the driver's pipes: start closes
// them, since ours would hide the child's death from the reads. proto must
// be ready for supervise.
func (c *child) start(cfg childConfig, proto protocol, extra ...*os.File) error {
	defer func() {
		for _, f := range extra {
			f.Close()
		}
	}()
	c.childConfig, c.proto = cfg, proto
	failed := func(err error) error { return fmt.Errorf("pool %s failed to start: %w", cfg.label, err) }
	if len(cfg.argv) == 0 {
		return failed(errors.New("its manifest entry has no exec command"))
	}
	argv0 := cfg.argv[0]
	if strings.ContainsRune(argv0, filepath.Separator) && !filepath.IsAbs(argv0) {
		argv0 = filepath.Join(cfg.dir, argv0)
	}
	cmd := exec.Command(argv0, append(cfg.argv[1:len(cfg.argv):len(cfg.argv)], cfg.args...)...)
	cmd.Dir = cfg.dir
	cmd.Env = cfg.env
	cmd.SysProcAttr = sysProcAttr()
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed(err)
	}
	cmd.ExtraFiles = extra
	cmd.Stdout = outW
	cmd.Stderr = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return failed(execError(cfg.argv[0], argv0, err))
	}
	c.reaper.watch(cmd.Process.Pid) // its process group has its pid
	outW.Close()
	c.cmd, c.outPipe = cmd, outR
	c.exited = make(chan struct{})
	c.outputDone = make(chan struct{})
	c.gone = make(chan struct{})
	go func() {
		defer close(c.outputDone)
		copyPoolOutput(outR, c.label, &c.tail, c.stderr, c.outputLog)
	}()
	go func() {
		_ = cmd.Wait() // the exit status is in ProcessState
		c.exitState = cmd.ProcessState.String()
		close(c.exited)
	}()
	go c.supervise()
	return nil
}

// execError says in words why the pool's program could not be run: arg is
// exec's first element as the manifest wrote it, path where nexus looked.
func execError(arg, path string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%s is not installed (there is no %s in PATH)", arg, arg)
	case errors.Is(err, fs.ErrNotExist):
		if _, statErr := os.Stat(path); statErr == nil {
			return fmt.Errorf("%s exists but its interpreter (its #! line) is not installed", path)
		}
		return fmt.Errorf("%s not found — build the program first", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s is not executable", path)
	}
	return err
}

// becameReady records that the process is ready: from now on its end is a
// death, not a failed start.
func (c *child) becameReady() {
	c.mu.Lock()
	c.ready = true
	c.readyAt = time.Now()
	c.mu.Unlock()
}

// startFailed is the error of a start that failed as msg says.
func (c *child) startFailed(msg string) error { return startFailure(msg, &c.tail, c.runtime) }

// exitedEarly is the error of a process that ended before it was ready.
func (c *child) exitedEarly() error {
	return c.startFailed(fmt.Sprintf("pool %s failed to start: exited before it was ready (%s)", c.label, c.exitState))
}

// abandonStart stops a process whose start ctx abandoned and says so.
func (c *child) abandonStart(ctx context.Context) error {
	c.stop()
	return fmt.Errorf("pool %s: start abandoned: %w", c.label, context.Cause(ctx))
}

// supervise waits for the process to end, kills what is left of its
// group, lets go of its output and wire, and fails the calls still in
// flight.
func (c *child) supervise() {
	select {
	case <-c.exited:
	case <-c.proto.severed():
		// nexus cannot talk to it any more. Without a protocol error, it
		// may be exiting.
		if c.proto.brokeProtocol() != nil || !c.waitExited(c.grace) {
			c.signalGroup(syscall.SIGKILL)
		}
		<-c.exited
	}
	// Its children (the workers Python's and R's pools fork) must not
	// outlive it, and may hold its pipes open.
	c.signalGroup(syscall.SIGKILL)
	c.reaper.forget(c.pid())
	c.proto.release()
	c.waitOrClose(c.outputDone, c.outPipe)
	c.outPipe.Close()

	c.mu.Lock()
	var err error
	switch broke := c.proto.brokeProtocol(); {
	case c.stopping:
		err = fmt.Errorf("pool %s: stopped", c.label)
	case broke != nil:
		err = errors.New(c.withTail(fmt.Sprintf("pool %s broke the protocol: %v", c.label, broke)))
	default:
		err = errors.New(c.withTail(fmt.Sprintf("pool %s died (%s)", c.label, c.exitState)))
	}
	died := c.ready && !c.stopping // a failed start is reported by its caller
	c.mu.Unlock()
	if died {
		c.logger.Warn("pool process ended", "pool", c.label, "pid", c.pid(), "err", err)
		if c.onDeath != nil {
			c.onDeath(c.proto, err)
		}
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	c.proto.endCalls(err)
	close(c.gone)
}

// retire takes the process out of service because a call in it is stuck:
// new calls go to the fresh process its worker has started, and it stops
// once no call runs in it any more.
func (c *child) retire(why string) {
	c.mu.Lock()
	if c.retiring || c.err != nil {
		c.mu.Unlock()
		return
	}
	c.retiring = true
	after, drained := c.proto.retireCalls(why)
	c.mu.Unlock()
	if after != nil {
		after()
	}
	if drained {
		go c.stop()
	}
}

// waitOrClose waits the grace for a reader goroutine to finish on its own
// (reading what the pool wrote last), then closes its file to end it.
func (c *child) waitOrClose(done <-chan struct{}, f *os.File) {
	select {
	case <-done:
		return
	case <-time.After(c.grace):
	}
	f.Close() // something outside the group holds the pipe
	<-done
}

// stop ends the process: asked to exit, it gets the grace to do it, then
// SIGTERM to its group, then SIGKILL after another grace; it returns once
// the process is gone.
func (c *child) stop() {
	c.mu.Lock()
	c.stopping = true
	ready := c.ready
	c.mu.Unlock()
	if c.proto.askToExit() {
		if !ready {
			// Still starting: it has nothing to finish, and an interpreter
			// busy loading reads its end of file only once it is done.
			c.signalGroup(syscall.SIGTERM)
		}
		if c.waitExited(c.grace) {
			<-c.gone
			return
		}
	}
	c.signalGroup(syscall.SIGTERM)
	if !c.waitExited(c.grace) {
		c.signalGroup(syscall.SIGKILL)
	}
	<-c.gone
}

// leftToReaper marks the process as stopping without signalling it: the
// reaper kills it as nexus exits (Set.Abandon).
func (c *child) leftToReaper() {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
}

// waitExited waits at most d for the process to exit and reports whether it did.
func (c *child) waitExited(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-c.exited:
		return true
	case <-timer.C:
		return false
	}
}

func (c *child) signalGroup(sig syscall.Signal) {
	if err := signalGroup(c.pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.logger.Warn("signalling pool process group", "pool", c.label, "signal", sig, "err", err)
	}
}

// dead reports whether the process has ended, even before nexus has
// reaped it (cmd.Wait may lag under load): a killed process is a zombie
// at once.
func (c *child) dead() bool {
	select {
	case <-c.exited:
		return true
	default:
	}
	return zombie(c.pid())
}

// awaitEnd waits, when the process has died, until nexus has dealt with
// its death (a worker has started the next, an instance is retired), and
// reports whether it had.
func (c *child) awaitEnd() bool {
	if !c.dead() {
		return false
	}
	timer := time.NewTimer(c.grace + 5*time.Second)
	defer timer.Stop()
	select {
	case <-c.gone:
	case <-timer.C:
	}
	return true
}

// alive reports whether the process can still take calls.
func (c *child) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unusableErr() == nil
}

// unusableErr says why the process takes no more calls, or nil. c.mu is held.
func (c *child) unusableErr() error {
	switch {
	case c.err != nil:
		return c.err
	case c.retiring:
		return fmt.Errorf("pool %s: replaced", c.label)
	}
	return nil
}

func (c *child) goneErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// answeredAny reports whether the process has answered a call: it works.
func (c *child) answeredAny() bool { return c.answered.Load() }

// markAnswered counts the process as working: a call that needed it
// succeeded.
func (c *child) markAnswered() { c.answered.Store(true) }

// upFor is how long the process has been ready.
func (c *child) upFor() time.Duration { return time.Since(c.readyAt) }

// ended is closed once the process is gone.
func (c *child) ended() <-chan struct{} { return c.gone }

func (c *child) pid() int { return c.cmd.Process.Pid }

// withTail appends the pool's last lines of output to msg.
func (c *child) withTail(msg string) string { return withTail(msg, &c.tail) }

// copyPoolOutput copies a pool's stdout and stderr, line by line and
// prefixed, to stderr, or as records to outputLog when set, keeping the
// last lines in t for errors. It returns at the end of r.
func copyPoolOutput(r io.Reader, label string, t *tail, stderr io.Writer, outputLog *slog.Logger) {
	prefix := "[pool " + label + "] "
	br := bufio.NewReaderSize(r, outputLineMax)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
			t.add(text)
			if outputLog != nil {
				outputLog.Info("pool output", "pool", label, "text", text)
			} else {
				_, _ = io.WriteString(stderr, prefix+text+"\n")
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// startFailure is the error of a pool that did not become ready: msg, its
// last lines of output, and which protocol nexus took it to speak, with
// how to choose the other (manifest.RuntimeHint): the likely mistake when
// a pool dies at once or never answers.
func startFailure(msg string, t *tail, runtime string) error {
	msg = withTail(msg, t)
	if hint := manifest.RuntimeHint(runtime); hint != "" {
		msg += "\n(" + hint + ")"
	}
	return errors.New(msg)
}

// withTail appends the last lines of output t holds to msg.
func withTail(msg string, t *tail) string {
	if s := t.String(); s != "" {
		return msg + "; last stderr:\n" + s
	}
	return msg
}

// tail keeps the last tailLines lines of a pool's output.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	if len(line) > tailLineMax {
		line = strings.ToValidUTF8(line[:tailLineMax], "") + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-tailLines:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
