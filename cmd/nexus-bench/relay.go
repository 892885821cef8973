package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/pool"
)

// relayEnv makes the driver a relay (runRelay): the floor of nexus's own
// CPU and latency per call. Its value says what the relay's child is:
// relayFloorChild for the C++ floor child (no handshake, mid 1), or
// "pool:<mid>" for a bench pool speaking nexus's pool protocol, called
// with that mid.
const relayEnv = "NEXUS_BENCH_RELAY"

const relayFloorChild = "floor"

// runRelay is the least a Go process can do per tools/call: one goroutine,
// blocking pipes; read a request line, find its id and two numbers, send
// one call frame to the child (argv, a floor child or a real pool, both
// speaking the pool framing), read its reply frame, write a reply line.
// nexus does this and everything MCP asks besides (validation,
// concurrency, cancellation, progress, timeouts), so its CPU and latency
// per call are measured against this.
//
// The child inherits the relay's environment, working directory and
// stderr (its stdout too: fd 1 is the relay's MCP channel): the driver
// gives the relay the environment and directory nexus gives a pool.
func runRelay(mode string, argv []string) {
	if mode == relayMorloc {
		runMorlocRelay(argv)
		return
	}
	mid, handshake := "1", false
	if m, ok := strings.CutPrefix(mode, "pool:"); ok {
		mid, handshake = m, true
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "relay: no child command")
		os.Exit(2)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, relayEnv+"=") })
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	toW, fromR, err := startWithPoolPipes(cmd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	from := bufio.NewReader(fromR)
	in := bufio.NewReader(os.Stdin)
	frame := make([]byte, 4, 256)
	reply := make([]byte, 0, 256)
	var out []byte
	var head [4]byte
	// next reads the child's next message frame into reply; a blob (bit
	// 31 of the header) never comes for a small call, and is skipped.
	next := func() []byte {
		for {
			if _, err := io.ReadFull(from, head[:]); err != nil {
				fmt.Fprintln(os.Stderr, "relay: reading the child's reply:", err)
				os.Exit(1)
			}
			n := binary.BigEndian.Uint32(head[:])
			if n&(1<<31) != 0 {
				from.Discard(int(n &^ (1 << 31)))
				continue
			}
			reply = slices.Grow(reply[:0], int(n))[:n]
			if _, err := io.ReadFull(from, reply); err != nil {
				fmt.Fprintln(os.Stderr, "relay: reading the child's reply:", err)
				os.Exit(1)
			}
			return reply
		}
	}
	if handshake {
		for string(field(next(), `"type":`)) != `"ready"` {
			// a log message may come before ready
		}
	}
	var callID uint64
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			toW.Close()
			cmd.Wait()
			return
		}
		id := field(line, `"id":`)
		callID++
		// The call message nexus sends for add_<lang>: progress not
		// asked for, and the declared return type.
		frame = append(frame[:4], `{"type":"call","id":`...)
		frame = strconv.AppendUint(frame, callID, 10)
		frame = append(frame, `,"mid":`...)
		frame = append(frame, mid...)
		frame = append(frame, `,"args":[`...)
		frame = append(frame, field(line, `"a":`)...)
		frame = append(frame, ',')
		frame = append(frame, field(line, `"b":`)...)
		frame = append(frame, `],"progress":false,"returns":"int"}`...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		if _, err := toW.Write(frame); err != nil {
			os.Exit(1)
		}
		// One call in flight: the first result or error answers it; log
		// and progress messages are skipped.
		var kind []byte
		for {
			reply = next()
			kind = field(reply, `"type":`)
			if string(kind) == `"result"` || string(kind) == `"error"` {
				break
			}
		}
		if string(kind) == `"error"` {
			out = appendRelayReply(out[:0], id, nil, true, string(reply))
		} else {
			out = appendRelayReply(out[:0], id, field(reply, `"value":`), false, "")
		}
		os.Stdout.Write(out)
	}
}

// field returns the text after key up to the next ',' or '}'.
func field(b []byte, key string) []byte {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil
	}
	v := b[i+len(key):]
	if j := bytes.IndexAny(v, ",}"); j >= 0 {
		v = v[:j]
	}
	return v
}

// relayRun is what one relay measured.
type relayRun struct {
	cpu     float64 // the relay process's CPU µs per call
	lat     latency // client round trips through it
	poolCPU float64 // its child's CPU µs per call
}

// relayProc is a running relay with the client's ends of its stdio.
type relayProc struct {
	cmd     *exec.Cmd
	w       io.WriteCloser
	replies *bufio.Reader
	line    []byte
	// names are the tool's two arguments: a and b for the bench program's
	// add_<lang>; _1 and _2 for a morloc command.
	names [2]string
}

// startRelay starts the driver's own binary as a relay (mode: relayEnv's
// value) to the child argv, with env and dir for the relay and its child.
func startRelay(mode string, argv, env []string, dir string) (*relayProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, argv...)
	cmd.Env = append(env, relayEnv+"="+mode)
	cmd.Dir = dir
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &relayProc{cmd: cmd, w: w, replies: bufio.NewReader(r), names: [2]string{"a", "b"}}, nil
}

// call sends tools/call tool {"a":a,"b":b} (p.names) with id and returns
// the reply line (valid until the next call).
func (p *relayProc) call(id int, tool string, a, b int) ([]byte, error) {
	p.line = callLine(p.line[:0], id, tool, `{"`+p.names[0]+`":`+strconv.Itoa(a)+`,"`+p.names[1]+`":`+strconv.Itoa(b)+`}`)
	if _, err := p.w.Write(p.line); err != nil {
		return nil, err
	}
	return p.replies.ReadSlice('\n')
}

// stop closes the relay's stdin (it and its child exit) and waits.
func (p *relayProc) stop() {
	p.w.Close()
	waitOrKill(p.cmd, 10*time.Second)
}

// measure times n calls of tool, one in flight, after an untimed warm-up,
// as the small-call phase drives nexus; every answer is checked. The
// relay is killed if it all takes longer than timeout.
func (p *relayProc) measure(tool string, n int, timeout time.Duration) (relayRun, error) {
	kill := time.AfterFunc(timeout, func() { p.cmd.Process.Kill() })
	defer kill.Stop()
	one := func(i int) error {
		reply, err := p.call(i+1, tool, i, 1000)
		if err == nil {
			err = addAnswer(tool, i, reply)
		}
		if err != nil {
			return fmt.Errorf("the relay: %w", err)
		}
		return nil
	}
	if _, err := sequential(warmup(n), one); err != nil {
		return relayRun{}, err
	}
	relay := p.cmd.Process.Pid
	child := children(relay)
	c0, p0 := cpuTicks(relay), cpuTicks(child...)
	lat, err := sequential(n, one)
	if err != nil {
		return relayRun{}, err
	}
	return relayRun{
		cpu:     ticksToMicros(cpuTicks(relay)-c0) / float64(n),
		lat:     latencies(lat),
		poolCPU: ticksToMicros(cpuTicks(child...)-p0) / float64(n),
	}, nil
}

// floorChildRelay measures the relay to the C++ floor child: what any relay
// costs with the least a child can do.
func (b *bench) floorChildRelay(dir string, n int) (relayRun, error) {
	p, err := startRelay(relayFloorChild, floorArgv(dir, "cpp"), os.Environ(), "")
	if err != nil {
		return relayRun{}, err
	}
	defer p.stop()
	return p.measure("add_cpp", n, b.cfg.callTimeout)
}

// poolRelay measures the relay to the bench program's real pool of lang,
// started as nexus starts it (one worker): the same pool process, the same
// call messages, nothing of nexus between client and pool.
func (b *bench) poolRelay(lang string, n int) (relayRun, error) {
	p, err := b.startPoolRelay(lang)
	if err != nil {
		return relayRun{}, err
	}
	defer p.stop()
	return p.measure("add_"+lang, n, b.cfg.callTimeout)
}

// startPoolRelay starts a relay to the pool of lang, calling add_<lang>.
func (b *bench) startPoolRelay(lang string) (*relayProc, error) {
	mid, ok := b.mids["add_"+lang]
	if !ok {
		return nil, fmt.Errorf("the bench program has no add_%s", lang)
	}
	return b.startPoolRelayMid(lang, mid)
}

// startPoolRelayMid starts a relay to the pool of lang that calls mid.
func (b *bench) startPoolRelayMid(lang string, mid int) (*relayProc, error) {
	i := slices.IndexFunc(b.pools, func(p manifestPool) bool { return p.lang == lang })
	if i < 0 || len(b.pools[i].exec) == 0 {
		return nil, fmt.Errorf("the bench program has no %s pool", lang)
	}
	rt, err := pool.RuntimeDir()
	if err != nil {
		return nil, err
	}
	// As nexus does (internal/pool, startProcess): the program directory
	// is the working directory, and a relative exec[0] with a '/' is
	// resolved against it.
	argv := slices.Clone(b.pools[i].exec)
	if strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(b.programDir, argv[0])
	}
	return startRelay("pool:"+strconv.Itoa(mid), argv, pool.Environ(lang, 1, rt), b.programDir)
}

// appendRelayReply appends a relay's tools/call reply line: a text result
// holding value (a number: nothing to escape), or when failed an internal
// error saying failure.
func appendRelayReply(out, id, value []byte, failed bool, failure string) []byte {
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	if failed {
		out = append(out, `,"error":{"code":-32603,"message":`...)
		out = strconv.AppendQuoteToASCII(out, failure)
		return append(out, "}}\n"...)
	}
	out = append(out, `,"result":{"content":[{"type":"text","text":"`...)
	out = append(out, value...)
	return append(out, "\"}],\"isError\":false}}\n"...)
}
