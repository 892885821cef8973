package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The floor children: the least a pool in each language can cost.
//
//go:embed floors/floor.py floors/floor.R floors/floor.cpp
var floorFiles embed.FS

// floorSet is what the floors phase measured, per language.
type floorSet struct {
	pipe     map[string]latency // raw frame round trip
	pipeCPU  map[string]float64 // child CPU µs per round trip
	start    map[string]float64 // interpreter start-up, ms
	bareRSS  map[string]int64   // a bare interpreter's (or the C++ floor's) VmRSS
	childRSS map[string]int64   // the floor child's VmRSS (json library loaded)
	// childRelay is a minimal Go relay (runRelay) to the C++ floor child:
	// what any relay costs; lat.n 0 when not measured.
	childRelay relayRun
	// relay is the same relay to the language's real bench pool, the
	// floor of a small call through nexus.
	relay   map[string]relayRun
	missing map[string]string // language → why its floors are missing
}

type jsonFl struct {
	ms   float64 // decode + encode, best run
	same bool    // the encoding equals the input byte for byte
}

func newFloorSet() *floorSet {
	return &floorSet{pipe: map[string]latency{}, pipeCPU: map[string]float64{},
		start: map[string]float64{}, bareRSS: map[string]int64{}, childRSS: map[string]int64{},
		relay: map[string]relayRun{}, missing: map[string]string{}}
}

// floorDir writes the floor sources into a cache directory named by their
// content and builds the C++ one there, once: g++ with nlohmann takes
// seconds. It returns the directory and why C++ floors cannot run ("" if
// they can).
func floorDir() (string, string, error) {
	h := sha256.New()
	names := []string{"floor.py", "floor.R", "floor.cpp"}
	for _, n := range names {
		b, _ := floorFiles.ReadFile("floors/" + n)
		h.Write(b)
	}
	cxxVersion, _ := exec.Command("g++", "--version").Output()
	h.Write(cxxVersion)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "nexus-bench", hex.EncodeToString(h.Sum(nil))[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("floor directory: %w", err)
	}
	for _, n := range names {
		b, _ := floorFiles.ReadFile("floors/" + n)
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return "", "", fmt.Errorf("writing %s: %w", n, err)
		}
	}
	bin := filepath.Join(dir, "floor-cpp")
	if fileExists(bin) {
		return dir, "", nil
	}
	if _, err := exec.LookPath("g++"); err != nil {
		return dir, "g++ not found", nil
	}
	progress("floors: compiling floor.cpp (once; cached in %s)", dir)
	tmp := bin + ".tmp"
	out, err := exec.Command("g++", "-O2", "-std=c++17", filepath.Join(dir, "floor.cpp"), "-o", tmp).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if strings.Contains(string(out), "nlohmann/json.hpp") {
			first = "nlohmann/json.hpp not found (Debian: nlohmann-json3-dev)"
		}
		return dir, "g++ failed: " + first, nil
	}
	return dir, "", os.Rename(tmp, bin)
}

// floorArgv is how the floor child of lang starts.
func floorArgv(dir, lang string) []string {
	switch lang {
	case "py":
		return []string{"python3", filepath.Join(dir, "floor.py")}
	case "r":
		return []string{"Rscript", filepath.Join(dir, "floor.R")}
	default:
		return []string{filepath.Join(dir, "floor-cpp")}
	}
}

// startArgv is the interpreter start-up floor of lang.
func startArgv(dir, lang string) []string {
	switch lang {
	case "py":
		return []string{"python3", "-c", "pass"}
	case "r":
		return []string{"Rscript", "-e", "0"}
	default:
		return []string{filepath.Join(dir, "floor-cpp"), "--exit"}
	}
}

// bareArgv is a bare interpreter that says "ready" and then blocks reading
// stdin, for its resident memory.
func bareArgv(lang string) []string {
	switch lang {
	case "py":
		return []string{"python3", "-c", "import sys; print('ready', flush=True); sys.stdin.read()"}
	case "r":
		return []string{"Rscript", "-e", `cat("ready\n"); invisible(readLines(file("stdin")))`}
	}
	return nil
}

// floorChild is a running floor child with the pool protocol's pipes.
type floorChild struct {
	lang string
	cmd  *exec.Cmd
	w    *os.File // its fd 3
	r    *bufio.Reader
	out  *tail
	buf  []byte
}

func startFloorChild(dir, lang string) (*floorChild, error) {
	argv := floorArgv(dir, lang)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	out := &tail{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	w, r, err := startWithPoolPipes(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting the %s floor child %q: %w", lang, argv, err)
	}
	return &floorChild{lang: lang, cmd: cmd, w: w, r: bufio.NewReaderSize(r, 1<<16), out: out}, nil
}

// startWithPoolPipes starts cmd with the pool protocol's pipes as fds 3
// and 4, named in its environment (added to cmd.Env), as nexus starts a
// pool, and returns this side's ends: w writes to its fd 3, r reads its
// fd 4.
func startWithPoolPipes(cmd *exec.Cmd) (w, r *os.File, err error) {
	toR, toW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		toR.Close()
		toW.Close()
		return nil, nil, err
	}
	cmd.ExtraFiles = []*os.File{toR, fromW}
	cmd.Env = append(cmd.Env, "NEXUS_POOL_IN=3", "NEXUS_POOL_OUT=4")
	err = cmd.Start()
	toR.Close()
	fromW.Close()
	if err != nil {
		toW.Close()
		fromR.Close()
		return nil, nil, err
	}
	return toW, fromR, nil
}

// roundTrip sends one frame and reads the reply frame (valid until the next).
func (c *floorChild) roundTrip(msg []byte) ([]byte, error) {
	c.buf = binary.BigEndian.AppendUint32(c.buf[:0], uint32(len(msg)))
	c.buf = append(c.buf, msg...)
	if _, err := c.w.Write(c.buf); err != nil {
		return nil, c.failure(err)
	}
	var head [4]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		return nil, c.failure(err)
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	c.buf = slices.Grow(c.buf[:0], n)[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return nil, c.failure(err)
	}
	return c.buf, nil
}

func (c *floorChild) failure(err error) error {
	return fmt.Errorf("the %s floor child: %w; its output ends:\n%s", c.lang, err, lastLines(c.out.String(), 10))
}

func (c *floorChild) stop() {
	c.w.Close() // end of file: the child exits
	waitOrKill(c.cmd, 10*time.Second)
}

// floorsPhase measures every floor of every language.
func (b *bench) floorsPhase() {
	dir, noCpp, err := floorDir()
	if err != nil {
		b.fail("floors: %v", err)
		return
	}
	b.floorDir = dir
	for _, lang := range b.cfg.langs {
		n := b.cfg.calls.of(lang)
		if lang == "cpp" && noCpp != "" {
			b.floors.missing[lang] = noCpp
			b.note("C++ floors skipped: " + noCpp)
		} else {
			if err := b.floorsOf(dir, lang); err != nil {
				b.floors.missing[lang] = err.Error()
				b.fail("floors (%s): %v", lang, err)
			}
			if lang == "cpp" {
				progress("floors: a minimal Go relay to the C++ floor child")
				if r, err := b.floorChildRelay(dir, n); err != nil {
					b.fail("floors (Go relay to the C++ floor child): %v", err)
				} else {
					b.floors.childRelay = r
				}
			}
		}
		progress("floors: a minimal Go relay to the %s bench pool", lang)
		if r, err := b.poolRelay(lang, n); err != nil {
			b.fail("floors (Go relay to the %s pool): %v", lang, err)
		} else {
			b.floors.relay[lang] = r
		}
	}
}

func (b *bench) floorsOf(dir, lang string) error {
	// Interpreter start-up: the median of a few runs.
	argv := startArgv(dir, lang)
	var starts []float64
	for range max(3, b.cfg.startupRuns) {
		t0 := time.Now()
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("start-up floor %q: %w: %s", argv, err, out)
		}
		starts = append(starts, ms(time.Since(t0)))
	}
	b.floors.start[lang] = median(starts)

	if bare := bareArgv(lang); bare != nil {
		rss, err := bareRSS(bare)
		if err != nil {
			return fmt.Errorf("bare interpreter %q: %w", bare, err)
		}
		b.floors.bareRSS[lang] = rss
	}

	progress("floors: %s pipe round trip and JSON", lang)
	c, err := startFloorChild(dir, lang)
	if err != nil {
		return err
	}
	defer c.stop()
	n := b.cfg.calls.of(lang)
	var msg []byte
	trip := func(i int) error {
		msg = fmt.Appendf(msg[:0], `{"type":"call","id":%d,"mid":1,"args":[%d,7]}`, i+1, i)
		reply, err := c.roundTrip(msg)
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(reply, fmt.Appendf(nil, `"value":%d}`, i+7)) {
			return fmt.Errorf("wrong answer to call %d: %.200s", i+1, reply)
		}
		return nil
	}
	if _, err := sequential(warmup(n), trip); err != nil {
		return err
	}
	cpu0 := cpuTicks(c.cmd.Process.Pid)
	lat, err := sequential(n, trip)
	if err != nil {
		return err
	}
	b.floors.pipeCPU[lang] = ticksToMicros(cpuTicks(c.cmd.Process.Pid)-cpu0) / float64(n)
	b.floors.pipe[lang] = latencies(lat)
	if m, err := readMemory(c.cmd.Process.Pid); err == nil {
		b.floors.childRSS[lang] = m.rss
		if lang == "cpp" {
			b.floors.bareRSS[lang] = m.rss
		}
	}

	return nil
}

// jsonFloor has the floor child decode and encode p with the language's
// own JSON library, runs times; the best run counts.
func (c *floorChild) jsonFloor(p *payload, runs int, timeout time.Duration) (jsonFl, error) {
	best := jsonFl{ms: -1}
	for i := range runs {
		msg := fmt.Appendf(nil, `{"type":"json","id":%d,"path":%s}`, i+1, strconv.Quote(p.file))
		kill := time.AfterFunc(timeout, func() { c.cmd.Process.Kill() })
		reply, err := c.roundTrip(msg)
		kill.Stop()
		if err != nil {
			return best, err
		}
		var r struct {
			DecodeMs *float64 `json:"decode_ms"`
			EncodeMs *float64 `json:"encode_ms"`
			Same     *bool    `json:"same"`
		}
		if err := json.Unmarshal(reply, &r); err != nil || r.DecodeMs == nil || r.EncodeMs == nil || r.Same == nil {
			return best, fmt.Errorf("bad reply %.200s (%v)", reply, err)
		}
		if t := *r.DecodeMs + *r.EncodeMs; best.ms < 0 || t < best.ms {
			best = jsonFl{ms: t, same: *r.Same}
		}
	}
	return best, nil
}

// bareRSS starts argv, waits for its "ready" line and reads its VmRSS.
func bareRSS(argv []string) (int64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		return 0, fmt.Errorf("no ready line (%q, %v)", line, err)
	}
	m, err := readMemory(cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	return m.rss, nil
}

// warmup is how many calls run, unmeasured, before a measured loop.
func warmup(n int) int { return min(200, max(10, n/20)) }

// sequential makes the calls one(0) … one(n-1), one at a time, and returns
// how long each took; the first error ends it.
func sequential(n int, one func(i int) error) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		if err := one(i); err != nil {
			return nil, err
		}
		lat[i] = time.Since(t0)
	}
	return lat, nil
}

// addAnswer checks the reply to tool(i, 1000), the small call every phase
// makes: its text is i+1000.
func addAnswer(tool string, i int, reply []byte) error {
	if !textIs(reply, strconv.Itoa(i+1000)) {
		return fmt.Errorf("WRONG answer to %s(%d, 1000): %.300s", tool, i, reply)
	}
	return nil
}
