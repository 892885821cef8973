package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// tail keeps the last bytes written to it: a child's stderr, quoted when
// something fails.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
	// echo, when set, gets a copy of everything (-v).
	echo io.Writer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.echo != nil {
		t.echo.Write(p)
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// proc is a started nexus process with its own pipes. The driver makes the
// pipes itself (no exec copying goroutines), so that Wait returns when
// nexus exits, not when the last holder of its stderr (the reaper) does.
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tail
	exited chan struct{}
	exitAt time.Time
	err    error
}

// startNexus runs nexus with args; run names the process for -nexus-env.
func (b *bench) startNexus(run string, args ...string) (*proc, error) {
	return b.startNexusEnv(run, nil, args...)
}

// startNexusEnv is startNexus with env added to the environment (before
// -nexus-env's, which win).
func (b *bench) startNexusEnv(run string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(b.cfg.nexus, args...)
	cmd.Env = append(append(os.Environ(), env...), b.cfg.envFor(run)...)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &proc{cmd: cmd, stdin: inW, stdout: outR, stderr: &tail{max: 64 << 10}, exited: make(chan struct{})}
	if b.cfg.verbose {
		p.stderr.echo = os.Stderr
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", b.cfg.nexus, err)
	}
	go func() { io.Copy(p.stderr, errR); errR.Close() }()
	go func() {
		p.err = cmd.Wait()
		p.exitAt = time.Now()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// awaitExit waits up to d for exited to close, after the caller asked cmd's
// process to end (an end of file, SIGTERM), and then kills it; it reports
// whether the process ended by itself.
func awaitExit(cmd *exec.Cmd, exited <-chan struct{}, d time.Duration) bool {
	select {
	case <-exited:
		return true
	case <-time.After(d):
		cmd.Process.Kill()
		<-exited
		return false
	}
}

// waitOrKill is awaitExit for a process nothing waits for yet.
func waitOrKill(cmd *exec.Cmd, d time.Duration) bool {
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return awaitExit(cmd, exited, d)
}

// stop closes stdin and waits for nexus to exit (killing it after d); an
// exit status other than 0 is an error (stdin EOF means a clean exit).
func (p *proc) stop(d time.Duration) error {
	p.stdin.Close()
	defer p.stdout.Close()
	if !awaitExit(p.cmd, p.exited, d) {
		return fmt.Errorf("nexus did not exit within %v of stdin closing", d)
	}
	if p.err != nil {
		return fmt.Errorf("nexus exited with %v", p.err)
	}
	return nil
}

// failure describes a failed exchange with nexus, quoting its stderr.
func (p *proc) failure(what string, err error) error {
	select {
	case <-p.exited:
		what += fmt.Sprintf(" (nexus exited: %v)", p.err)
	default:
	}
	return fmt.Errorf("%s: %w; nexus stderr ends:\n%s", what, err, lastLines(p.stderr.String(), 15))
}

// session is an MCP client on a nexus process's stdio: one JSON-RPC
// message per line.
type session struct {
	*proc
	r      *bufio.Reader
	line   []byte // the last line read, reused
	nextID int
	wmu    sync.Mutex
	// deadline kills nexus when a call takes longer than -call-timeout.
	deadline time.Duration
}

func (b *bench) startSession(run string, extra ...string) (*session, error) {
	args := append([]string{"mcp", b.cfg.program}, extra...)
	p, err := b.startNexus(run, args...)
	if err != nil {
		return nil, err
	}
	return &session{proc: p, r: bufio.NewReaderSize(p.stdout, 1<<20), nextID: 1, deadline: b.cfg.callTimeout}, nil
}

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"nexus-bench","version":"1"}}}` + "\n"

const initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// initialize sends initialize and waits for its reply; handshake also
// sends notifications/initialized.
func (s *session) initialize() error {
	line, err := s.exchange(0, []byte(initializeLine))
	if err != nil {
		return s.failure("initialize", err)
	}
	if !bytes.Contains(line, []byte(`"protocolVersion":"2025-06-18"`)) {
		return s.failure("initialize", fmt.Errorf("unexpected reply %.300s", line))
	}
	return nil
}

func (s *session) handshake() error {
	if err := s.initialize(); err != nil {
		return err
	}
	return s.write([]byte(initializedLine))
}

// ready runs the handshake and one add_<lang> call per language, so that
// every pool is up before anything is timed.
func (s *session) ready(langs ...string) error {
	if err := s.handshake(); err != nil {
		return err
	}
	for _, lang := range langs {
		line, err := s.call("add_"+lang, `{"a":1,"b":2}`)
		if err != nil {
			return err
		}
		if !textIs(line, "3") {
			return fmt.Errorf("add_%s(1, 2): WRONG answer %.300s", lang, line)
		}
	}
	return nil
}

// write sends bytes to nexus's stdin whole.
func (s *session) write(parts ...[]byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, p := range parts {
		if _, err := s.stdin.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// readLine reads one line (without its newline) into a buffer reused by
// the next call, so a 100 MB reply costs one copy and no allocation.
func (s *session) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading nexus's stdout: %w", err)
		}
		return s.line[:len(s.line)-1], nil
	}
}

// reserveLine makes the reply buffer hold n bytes, its pages touched, so
// that a large reply read inside a timed call costs the driver one copy:
// a 300 MB reply grown by append was some 1.5 GB of fresh allocations,
// seconds of the driver's own time in a round trip that measures nexus.
func (s *session) reserveLine(n int) {
	if cap(s.line) < n {
		s.line = make([]byte, 0, n)
	}
	clear(s.line[:n]) // memory fresh from the OS is not yet touched
}

// exchange sends parts (one request line) and returns the reply to id. A
// request that is not answered within the deadline kills nexus, which
// fails the exchange.
func (s *session) exchange(id int, parts ...[]byte) ([]byte, error) {
	timer := time.AfterFunc(s.deadline, func() { s.cmd.Process.Kill() })
	defer timer.Stop()
	err := s.write(parts...)
	var line []byte
	if err == nil {
		line, err = s.reply(id)
	}
	if err != nil && !timer.Stop() { // it fired
		err = fmt.Errorf("no reply within -call-timeout %v (nexus killed): %w", s.deadline, err)
	}
	return line, err
}

// reply reads lines until the reply to request id, skipping notifications;
// a sequential caller expects no other reply.
func (s *session) reply(id int) ([]byte, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		got, ok := replyID(line)
		if !ok {
			continue // a notification
		}
		if got != id {
			return nil, fmt.Errorf("reply to request %d while waiting for %d: %.300s", got, id, line)
		}
		return line, nil
	}
}

// replyID finds a reply's id without decoding it: the first `"id":` of the
// line. Inside the result, the text block is an escaped string (`\"id\":`),
// so it cannot match there.
func replyID(line []byte) (int, bool) {
	i := bytes.Index(line, []byte(`"id":`))
	if i < 0 {
		return 0, false
	}
	j := i + 5
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	n, err := strconv.Atoi(string(line[j:k]))
	return n, err == nil
}

// callLine builds a tools/call request line for arguments given as a JSON
// object's text.
func callLine(dst []byte, id int, tool string, args string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, int64(id), 10)
	dst = append(dst, `,"method":"tools/call","params":{"name":"`...)
	dst = append(dst, tool...)
	dst = append(dst, `","arguments":`...)
	dst = append(dst, args...)
	return append(dst, "}}\n"...)
}

// call runs one tool call and returns the reply line (valid until the next
// read), or an error when the reply is an error or the call failed.
func (s *session) call(tool, args string) ([]byte, error) {
	id := s.nextID
	s.nextID++
	line, err := s.exchange(id, callLine(nil, id, tool, args))
	if err != nil {
		return nil, s.failure("calling "+tool, err)
	}
	if !bytes.Contains(line, []byte(`"isError":false`)) {
		return line, fmt.Errorf("calling %s: the reply is not a success: %.500s", tool, line)
	}
	return line, nil
}

// textIs reports whether a tools/call reply's text block is exactly want.
func textIs(line []byte, want string) bool {
	return bytes.Contains(line, []byte(`"text":"`+want+`"`)) && bytes.Contains(line, []byte(`"isError":false`))
}

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(s), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
