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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

const (
	// tailLines is how many lines of a pool's output errors quote.
	tailLines = 20
	// tailLineMax cuts a quoted line, so one runaway line cannot flood an error.
	tailLineMax = 1000
	// outputLineMax is where a line of pool output that never ends is cut.
	outputLineMax = 64 << 10
	// shutdownWriteTimeout bounds the wait for room in the pipe to say shutdown.
	shutdownWriteTimeout = 100 * time.Millisecond
)

// processConfig is what startProcess needs to run one pool process.
type processConfig struct {
	lang    string
	runtime string // the Spec's: names the protocol assumed when a start fails
	label   string // names the process in messages: "py", or "py#2" among several workers
	argv    []string
	dir     string
	env     []string

	stderr       io.Writer    // where the pool's stdout and stderr lines go
	outputLog    *slog.Logger // if set, takes those lines as records instead
	logger       *slog.Logger
	startTimeout time.Duration
	grace        time.Duration

	cancelGrace time.Duration // how long a cancelled call may take to stop
	reaper      *reaper       // told of the process group; may be nil
	functions   map[int]Function
	argTypes    bool // send calls their arguments' declared types (Spec.ArgTypes)

	// onDeath, if set, learns that a process that had become ready ended
	// without nexus asking it to, and why, before any call can see it gone.
	onDeath func(p poolProcess, err error)
	// onStuck, if set, learns that a call did not stop when cancelled; it
	// must retire the process (see process.retire), after starting another.
	onStuck func(p poolProcess, why string)
}

// process is one running pool process and everything nexus holds for it:
// its pipes, its calls in flight, the tail of its output. It owns the
// process's whole life: start, handshake, calls, output, death and stop.
type process struct {
	processConfig
	cmd      *exec.Cmd
	toPool   *os.File // our end of the pool's fd 3
	fromPool *os.File // our end of the pool's fd 4
	outPipe  *os.File // our end of the pool's stdout and stderr
	tail     tail

	out            *outbox    // frames waiting for writeLoop
	writeMu        sync.Mutex // one frame at a time on toPool
	closeInputOnce sync.Once
	mode           concurrency     // how the runtime runs calls; set before startProcess returns
	mids           map[int]bool    // the functions the pool says it has; nil if it did not say
	dtypes         []ndarray.DType // the array dtypes the pool takes (protocol 2); set before startProcess returns

	readyAt  time.Time   // when the handshake ended; set before startProcess returns
	answered atomic.Bool // the process has answered a call

	mu        sync.Mutex
	nextID    uint64
	inflight  map[uint64]*pendingCall
	abandoned map[uint64]abandonedCall // given up on, reply still owed
	retiring  bool                     // a call is stuck: no new calls, stop when drained
	ready     bool                     // the handshake succeeded
	stopping  bool                     // nexus asked the process to stop
	err       error                    // why calls fail now that the process is gone; set just before gone closes

	readyCh  chan *inbound // the ready message, once
	protoErr error         // set before rd.over closes, so before readerDone does

	// Reading fd 4: by readLoop, or by a call waiting inline (inline.go);
	// never both. br, blobs and readyRead belong to whichever reads.
	rd         fd4Reader
	br         *bufio.Reader
	blobs      [][]byte      // blobs waiting for the message they belong to
	readyRead  bool          // the ready message has come
	exitState  string        // "exit status 1"; set before exited closes
	exited     chan struct{} // closed once the process has been reaped
	readerDone chan struct{} // closed when readLoop returns
	outputDone chan struct{} // closed when copyOutput returns
	gone       chan struct{} // closed when the process, its group and its pipes are all finished
}

// startProcess starts a pool process and waits for its ready message. On
// failure the process is stopped and the error says why, with its output's
// last lines.
func startProcess(ctx context.Context, cfg processConfig) (*process, error) {
	failed := func(err error) error { return fmt.Errorf("pool %s failed to start: %w", cfg.label, err) }
	if len(cfg.argv) == 0 {
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

	// Three pipes: calls in (the pool's fd 3), replies out (its fd 4), and
	// its stdout and stderr together, so their lines keep their order.
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	callsR, callsW, err := pipe()
	if err != nil {
		return nil, failed(err)
	}
	repliesR, repliesW, err := pipe()
	if err != nil {
		closeAll()
		return nil, failed(err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, failed(err)
	}
	cmd.ExtraFiles = []*os.File{callsR, repliesW} // fd 3, fd 4
	cmd.Stdout = outW
	cmd.Stderr = outW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, failed(execError(cfg.argv[0], argv0, err))
	}
	cfg.reaper.watch(cmd.Process.Pid) // its process group has its pid
	// The child has its own copies; ours would hide its death from the reads.
	callsR.Close()
	repliesW.Close()
	outW.Close()

	p := &process{
		processConfig: cfg,
		cmd:           cmd,
		toPool:        callsW,
		fromPool:      repliesR,
		outPipe:       outR,
		inflight:      make(map[uint64]*pendingCall),
		abandoned:     make(map[uint64]abandonedCall),
		out:           newOutbox(),
		readyCh:       make(chan *inbound, 1),
		exited:        make(chan struct{}),
		readerDone:    make(chan struct{}),
		outputDone:    make(chan struct{}),
		gone:          make(chan struct{}),
		rd:            newFD4Reader(repliesR),
		br:            bufio.NewReaderSize(repliesR, 64<<10),
	}
	go p.copyOutput()
	go p.readLoop()
	go p.writeLoop()
	go func() {
		_ = cmd.Wait() // the exit status is in ProcessState
		p.exitState = cmd.ProcessState.String()
		close(p.exited)
	}()
	go p.supervise()

	if err := p.handshake(ctx); err != nil {
		return nil, err
	}
	return p, nil
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

// handshake waits for the pool's ready message.
func (p *process) handshake(ctx context.Context) error {
	timer := time.NewTimer(p.startTimeout)
	defer timer.Stop()
	select {
	case ready := <-p.readyCh:
		if ready.Protocol != 1 && ready.Protocol != protocolVersion {
			p.stop()
			return fmt.Errorf("pool %s failed to start: it speaks pool protocol %d; this nexus speaks 1 and %d",
				p.label, ready.Protocol, protocolVersion)
		}
		if ready.Protocol >= 2 {
			for _, d := range ready.DTypes {
				if d.Size() > 0 {
					p.dtypes = append(p.dtypes, d)
				}
			}
		}
		p.readyAt = time.Now()
		p.checkMids(ready.Mids)
		switch {
		case ready.Concurrent == nil:
			p.mode = concurrencyUnknown
		case *ready.Concurrent:
			p.mode = concurrent
		default:
			p.mode = sequential
		}
		p.mu.Lock()
		p.ready = true
		p.mu.Unlock()
		p.logger.Debug("pool ready", "pool", p.label, "pid", p.cmd.Process.Pid, "mids", ready.Mids)
		return nil
	case <-p.gone:
		if p.protoErr != nil {
			return startFailure(fmt.Sprintf("pool %s failed to start: it broke the protocol: %v", p.label, p.protoErr), &p.tail, p.runtime)
		}
		return startFailure(fmt.Sprintf("pool %s failed to start: exited before it was ready (%s)", p.label, p.exitState), &p.tail, p.runtime)
	case <-timer.C:
		p.stop()
		return startFailure(fmt.Sprintf("pool %s never became ready within %s", p.label, p.startTimeout), &p.tail, p.runtime)
	case <-ctx.Done():
		p.stop()
		return fmt.Errorf("pool %s: start abandoned: %w", p.label, context.Cause(ctx))
	}
}

// checkMids records the mids the pool says it has (when it says) and warns
// of the manifest's functions it lacks: the manifest and the pool disagree.
func (p *process) checkMids(mids []int64) {
	if mids == nil {
		return
	}
	p.mids = make(map[int]bool, len(mids))
	for _, m := range mids {
		p.mids[int(m)] = true
	}
	var missing []int
	for mid := range p.functions {
		if !p.mids[mid] {
			missing = append(missing, mid)
		}
	}
	slices.Sort(missing)
	for _, mid := range missing {
		p.logger.Warn("pool lacks a function the manifest gives it: calls to it will fail",
			"pool", p.label, "command", p.functions[mid].Name, "mid", mid, "pool has", p.midList())
	}
}

// midList lists the pool's mids in order: "1, 2, 9".
func (p *process) midList() string {
	var mids []int
	for m := range p.mids {
		mids = append(mids, m)
	}
	slices.Sort(mids)
	var b strings.Builder
	for i, m := range mids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(m))
	}
	return b.String()
}

// alive reports whether the process can still take calls.
func (p *process) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unusableErr() == nil
}

// stoppedByNexus reports whether nexus asked the process to stop.
func (p *process) stoppedByNexus() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// answeredAny reports whether the process has answered a call: it works.
func (p *process) answeredAny() bool { return p.answered.Load() }

// upFor is how long the process has been ready.
func (p *process) upFor() time.Duration { return time.Since(p.readyAt) }

// ended is closed once the process is gone.
func (p *process) ended() <-chan struct{} { return p.gone }

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) goneErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// readLoop reads the pool's frames until fd 4 ends or breaks the protocol,
// whenever fd 4 is its to read: a call waiting inline reads its own reply
// (inline.go), and readLoop waits meanwhile.
func (p *process) readLoop() {
	defer close(p.readerDone)
	for {
		if err := p.readMessage(); err != nil {
			p.readEnded(err)
			return
		}
		if p.loopYields() {
			select {
			case <-p.rd.wake:
			case <-p.rd.over:
				return
			}
		}
	}
}

// readEnded records why fd 4 can be read no more (a protocol error; else
// its end, or our end closed by supervise) and stops every reader.
func (p *process) readEnded(err error) {
	p.rd.overOnce.Do(func() {
		if pe := (*ProtocolError)(nil); errors.As(err, &pe) {
			p.protoErr = err
		}
		close(p.rd.over)
	})
}

// readMessage reads one frame from fd 4 and acts on it: a blob waits for
// its message, a message goes where it belongs. Only the holder of fd 4
// (readLoop, or a call reading inline) calls it. It returns io.EOF at the
// end of fd 4 and a *ProtocolError for what breaks the protocol.
func (p *process) readMessage() error {
	payload, blob, err := readFrame(p.br)
	if err != nil {
		return err
	}
	if blob {
		p.blobs = append(p.blobs, payload)
		return nil
	}
	msg, err := decodeInbound(payload)
	if err != nil {
		return err
	}
	var arrays []ndarray.Array
	if msg.Arrays != nil || len(p.blobs) > 0 {
		if arrays, err = attachBlobs(msg, p.blobs); err != nil {
			return err
		}
		p.blobs = nil
	}
	switch {
	case msg.Type == typeReady && !p.readyRead:
		p.readyRead = true
		p.readyCh <- msg
	case msg.Type == typeLog:
		p.deliverLog(msg)
	case !p.readyRead:
		// Only log and ready count before the handshake.
	case msg.Type == typeResult:
		r := callReply{value: ndarray.Value{JSON: msg.Value, Arrays: arrays}, content: msg.Content}
		if msg.Content != nil {
			if err := checkContent(msg.Content); err != nil {
				r = callReply{err: fmt.Errorf("pool %s returned a bad result: %v", p.label, err)}
			}
		}
		p.deliverReply(*msg.ID, r)
	case msg.Type == typeError:
		p.logger.Debug("pool call failed", "pool", p.label, "id", *msg.ID, "message", msg.Message, "traceback", msg.Traceback)
		p.deliverReply(*msg.ID, callReply{err: &CallError{Lang: p.lang, Message: msg.Message, Traceback: msg.Traceback}})
	case msg.Type == typeProgress:
		if pc := p.pending(*msg.ID); pc != nil {
			pc.progress(*msg.Progress, msg.Total, msg.Message)
		}
	case msg.Type == typeAsk:
		p.startAsk(msg)
	}
	return nil
}

// attachBlobs pairs a message's array descriptors with the blobs sent
// before it. Only a result may carry arrays; the counts must agree.
func attachBlobs(msg *inbound, blobs [][]byte) ([]ndarray.Array, error) {
	if msg.Type != typeResult {
		return nil, protocolErrorf("%s message after %d blobs: only a result carries arrays", msg.Type, len(blobs))
	}
	var arrays []ndarray.Array
	if msg.Arrays != nil {
		var err error
		if arrays, err = ndarray.ParseDescriptors(msg.Arrays); err != nil {
			return nil, protocolErrorf("result: %v", err)
		}
	}
	if len(arrays) != len(blobs) {
		return nil, protocolErrorf("result describes %d arrays but %d blobs came before it", len(arrays), len(blobs))
	}
	for i := range arrays {
		arrays[i].Data = blobs[i]
		if err := arrays[i].Check(); err != nil {
			return nil, protocolErrorf("result: %v", err)
		}
	}
	return arrays, nil
}

func (p *process) deliverLog(msg *inbound) {
	level := normalLevel(msg.Level)
	if msg.ID != nil {
		if pc := p.pending(*msg.ID); pc != nil && pc.log(level, msg.Data) {
			return
		}
	}
	p.logger.Log(context.Background(), logLevels[level], "pool log", "pool", p.label, "data", string(msg.Data))
}

// copyOutput copies the pool's stdout and stderr (see copyPoolOutput).
func (p *process) copyOutput() {
	defer close(p.outputDone)
	copyPoolOutput(p.outPipe, p.label, &p.tail, p.stderr, p.outputLog)
}

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

// supervise waits for the process to end, cleans up after it and fails the
// calls still in flight.
func (p *process) supervise() {
	select {
	case <-p.exited:
	case <-p.readerDone:
		// fd 4 closed or broke the protocol while the pool lives on: it
		// cannot answer any more. Without a protocol error, it may be exiting.
		if p.protoErr != nil || !p.waitExited(p.grace) {
			p.signalGroup(syscall.SIGKILL)
		}
		<-p.exited
	}
	// Children of the pool must not outlive it, and may hold its pipes open.
	p.signalGroup(syscall.SIGKILL)
	p.reaper.forget(p.cmd.Process.Pid)
	p.readToLoop() // what the pool wrote last is read, to its end, by readLoop
	p.waitOrClose(p.readerDone, p.fromPool)
	p.waitOrClose(p.outputDone, p.outPipe)
	p.closeInput()
	p.fromPool.Close()
	p.outPipe.Close()

	p.mu.Lock()
	var err error
	switch {
	case p.stopping:
		err = fmt.Errorf("pool %s: stopped", p.label)
	case p.protoErr != nil:
		err = errors.New(p.withTail(fmt.Sprintf("pool %s broke the protocol: %v", p.label, p.protoErr)))
	default:
		err = errors.New(p.withTail(fmt.Sprintf("pool %s died (%s)", p.label, p.exitState)))
	}
	died := p.ready && !p.stopping // a failed start is reported by its caller
	p.mu.Unlock()

	if died {
		p.logger.Warn("pool process ended", "pool", p.label, "pid", p.cmd.Process.Pid, "err", err)
		if p.onDeath != nil {
			p.onDeath(p, err)
		}
	}
	p.mu.Lock()
	p.err = err
	inflight := p.inflight
	p.inflight = nil
	p.mu.Unlock()
	for _, pc := range inflight {
		if pc.written.Load() {
			pc.reply <- callReply{err: err}
		} else {
			pc.reply <- callReply{err: &unstartedError{err}} // never reached the pool: may be tried again
		}
	}
	close(p.gone)
}

// waitOrClose waits the grace for a reader goroutine to finish on its own
// (draining what the pool wrote last), then closes its file to end it.
func (p *process) waitOrClose(done <-chan struct{}, f *os.File) {
	select {
	case <-done:
		return
	case <-time.After(p.grace):
	}
	f.Close()
	<-done
}

// closeInput says shutdown and closes fd 3; the pool exits on either.
func (p *process) closeInput() {
	p.closeInputOnce.Do(func() {
		p.out.close()
		// The deadline also frees a writer stuck on a pool that stopped reading.
		_ = p.toPool.SetWriteDeadline(time.Now().Add(shutdownWriteTimeout))
		p.writeMu.Lock()
		defer p.writeMu.Unlock()
		_ = writeFrame(p.toPool, shutdownFrame)
		p.toPool.Close()
	})
}

// stop ends the process: shutdown and fd 3 closed, then SIGTERM to its
// group after the grace, then SIGKILL after another; it returns once the
// process is gone.
func (p *process) stop() {
	p.mu.Lock()
	p.stopping = true
	ready := p.ready
	p.mu.Unlock()
	p.closeInput()
	if !ready {
		// Still starting: it has nothing to finish, and an interpreter
		// busy loading reads its end of file only once it is done.
		p.signalGroup(syscall.SIGTERM)
	}
	if !p.waitExited(p.grace) {
		p.signalGroup(syscall.SIGTERM)
		if !p.waitExited(p.grace) {
			p.signalGroup(syscall.SIGKILL)
		}
	}
	<-p.gone
}

// waitExited waits at most d for the process to exit and reports whether it did.
func (p *process) waitExited(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

func (p *process) signalGroup(sig syscall.Signal) {
	if err := signalGroup(p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.logger.Warn("signalling pool process group", "pool", p.label, "signal", sig, "err", err)
	}
}

// withTail appends the pool's last lines of output to msg.
func (p *process) withTail(msg string) string { return withTail(msg, &p.tail) }

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
