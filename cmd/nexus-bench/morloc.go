package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/morlocbuild"
)

// The morloc phase: one program compiled by the real morloc 0.69.0
// (testdata/morloc-0.69/bench), run by morloc's own C nexus and daemon and
// by nexus in the same minutes. morloc's nexus is a one-shot CLI (`./nexus
// CMD ARGS` starts the pools, calls, prints, stops them), so the one-shot
// rows set `nexus run LAUNCHER CMD ARGS` beside it, runs interleaved; a
// 1M-element [Real] goes as a JSON file, which both take in place of the
// value (a command line cannot hold it). The warm rows are nexus's own
// (MCP on stdio), beside a minimal Go relay to the same pool
// (morlocrelay.go), and beside morloc's daemon (`--daemon --http-port`)
// for small calls over HTTP and for bursts of concurrent calls
// (morlocburst.go).

const secMorloc = "morloc pools"

// morlocLangs are the pool languages of the bench program, by the suffix
// of its commands.
var morlocLangs = []struct{ lang, suffix, marker string }{
	{"py", "Py", "pool.py"},
	{"cpp", "Cpp", "pool-cpp.out"},
}

// morlocBench is what the phase's steps share.
type morlocBench struct {
	launcher string
	env      []string // PATH for both nexuses
	arg      string   // the 1M-element argument's file
	argData  []byte
	want     []float64
	pools    []manifestPool
}

func (b *bench) morlocPhase() {
	tc, err := morlocbuild.Installed()
	if err != nil {
		missing := err.Error()
		progress("morloc pools: skipped: %s", missing)
		b.add(row{section: secMorloc, what: "morloc 0.69 beside its own nexus", text: "skipped", floor: none, details: missing})
		b.note("morloc pools: skipped: " + missing)
		return
	}
	src := b.cfg.morlocProgram
	if src == "" {
		src = filepath.Join(filepath.Dir(filepath.Clean(b.cfg.program)), "morloc-0.69", "bench")
	}
	// Compiled once into the user's cache: morloc writes the directory's
	// absolute path into the launcher, and its generated pools (which
	// embed morloc's runtime code) are never committed.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir, err := tc.Compile(src, filepath.Join(cache, "nexus-bench", "morloc-0.69.0"), func(dir string) {
		progress("morloc pools: compiling %s with morloc 0.69.0 into %s", src, dir)
	})
	if err != nil {
		b.fail("morloc pools: %v", err)
		return
	}
	m := &morlocBench{launcher: filepath.Join(dir, "nexus"), env: []string{"PATH=" + tc.Path()}}
	for _, l := range morlocLangs {
		m.pools = append(m.pools, manifestPool{lang: l.lang, marker: l.marker})
	}
	f, err := os.CreateTemp("", "nexus-bench-reals-*.json")
	if err != nil {
		b.fail("morloc pools: %v", err)
		return
	}
	m.arg = f.Name()
	defer os.Remove(m.arg)
	m.want, m.argData = morlocReals(b.cfg.morlocElements)
	_, err = f.Write(m.argData)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.fail("morloc pools: writing %s: %v", m.arg, err)
		return
	}
	for _, l := range morlocLangs {
		if !slices.Contains(b.cfg.langs, l.lang) {
			continue
		}
		b.morlocOneShot(m, l.lang, "div"+l.suffix, []string{"7", "2"}, false)
		b.morlocOneShot(m, l.lang, "echo"+l.suffix, []string{m.arg}, true)
	}
	b.morlocWarm(m)
}

// morlocReals is n Reals as a JSON list in Go's shortest form (what nexus
// writes back byte for byte): random doubles of full precision, about 19
// bytes each, as measured data would be.
func morlocReals(n int) ([]float64, []byte) {
	rng := rand.New(rand.NewPCG(19, 7))
	xs := make([]float64, n)
	b := make([]byte, 0, 20*n+2)
	b = append(b, '[')
	for i := range xs {
		xs[i] = rng.NormFloat64() * 1000
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, xs[i], 'g', -1, 64)
	}
	return xs, append(b, ']')
}

// oneShot is one run of a CLI: when its result began to come out, when it
// exited, its CPU (its own and its waited-for children's: the pools), and
// its peak resident set, when asked (VmHWM of its pid, read every 2 ms
// until it exits: the peak stays in VmHWM, so only the last stretch before
// the exit can go unseen).
type oneShot struct {
	first, wall time.Duration
	cpu         time.Duration
	peak        int64
	out         []byte
}

func runOneShot(argv, env []string, watchPeak bool, timeout time.Duration, out *bytes.Buffer) (oneShot, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return oneShot{}, err
	}
	stderr := &tail{max: 8 << 10}
	cmd.Stderr = stderr
	var r oneShot
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	done := make(chan struct{})
	var wg sync.WaitGroup
	if watchPeak {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(2 * time.Millisecond)
			defer tick.Stop()
			for {
				if m, err := readMemory(cmd.Process.Pid); err == nil {
					r.peak = max(r.peak, m.hwm)
				}
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
	}
	out.Reset()
	var chunk [64 << 10]byte
	for {
		n, err := stdout.Read(chunk[:])
		if n > 0 && out.Len() == 0 {
			r.first = time.Since(t0)
		}
		out.Write(chunk[:n])
		if err != nil {
			break
		}
	}
	err = cmd.Wait()
	r.wall = time.Since(t0)
	close(done)
	wg.Wait()
	r.out = out.Bytes()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil {
		return r, fmt.Errorf("%v; stderr ends:\n%s", err, lastLines(stderr.String(), 10))
	}
	return r, nil
}

// morlocOneShot times `LAUNCHER cmd args` (morloc's nexus) and `nexus run
// LAUNCHER cmd args` in turn, -morloc-runs times each, the order swapped
// every run, and adds their rows: spawn → result and the whole process
// for a small call; the whole process and nexus's peak memory for the
// large list.
func (b *bench) morlocOneShot(m *morlocBench, lang, cmdName string, args []string, large bool) {
	morlocArgv := append([]string{m.launcher, cmdName}, args...)
	nexusArgv := append([]string{b.cfg.nexus, "run", m.launcher, cmdName}, args...)
	runs := b.cfg.morlocRuns
	what := cmdName + " " + strings.Join(args, " ")
	if large {
		what = fmt.Sprintf("%s %d Reals", cmdName, len(m.want))
	}
	progress("morloc pools: %s, one-shot, morloc's nexus and nexus in turn × %d", what, runs)
	var buf bytes.Buffer
	check := func(who string, r oneShot) error {
		if !large {
			if string(r.out) != "3.5\n" {
				return fmt.Errorf("%s printed %q, want 3.5", who, r.out)
			}
			return nil
		}
		digits := 17
		if who == "morloc's nexus" {
			digits = 15 // it prints %.15g
		}
		return sameReals(r.out, m.want, digits)
	}
	// The untimed round warms the page cache and Python's bytecode.
	ne, mo, err := interleave(runs, func(isNexus bool) ([]oneShot, error) {
		argv, who := morlocArgv, "morloc's nexus"
		if isNexus {
			argv, who = nexusArgv, "nexus"
		}
		r, err := runOneShot(argv, m.env, large, b.cfg.callTimeout, &buf)
		if err == nil {
			err = check(who, r)
		}
		if err != nil {
			return nil, fmt.Errorf("by %s: %w", who, err)
		}
		r.out = nil
		return []oneShot{r}, nil
	})
	if err != nil {
		b.fail("morloc pools: %s %v", what, err)
		b.add(row{section: secMorloc, lang: lang, what: what + ", one-shot", text: "FAILED", floor: none})
		return
	}
	med := func(rs []oneShot, f func(oneShot) float64) (float64, float64) {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs), slices.Min(xs)
	}
	firstOf := func(r oneShot) float64 { return ms(r.first) }
	wallOf := func(r oneShot) float64 { return ms(r.wall) }
	cpuOf := func(r oneShot) float64 { return ms(r.cpu) }
	peakOf := func(r oneShot) float64 { return mb(r.peak) }
	n := fmt.Sprintf("median of %d runs each, interleaved", runs)
	addRatio := func(measure string, f func(oneShot) float64, unit, extra string) {
		nv, nmin := med(ne, f)
		mv, mmin := med(mo, f)
		b.add(row{section: secMorloc, lang: lang, what: what + ", one-shot: " + measure, value: nv, unit: unit, floor: mv, vs: ratio(nv, mv),
			details: fmt.Sprintf("floor: morloc's own nexus; %s; minima: nexus %s, morloc %s%s", n, num(nmin), num(mmin), extra)})
	}
	if !large {
		addRatio("spawn → result", firstOf, "ms", "; `nexus run LAUNCHER "+what+"` against `LAUNCHER "+what+"`")
	}
	nc, _ := med(ne, cpuOf)
	mc, _ := med(mo, cpuOf)
	addRatio("whole process", wallOf, "ms", fmt.Sprintf("; CPU (with the pools): nexus %s ms, morloc %s ms", num(nc), num(mc)))
	if large {
		size := float64(len(m.argData)) / 1e6
		nv, nmin := med(ne, peakOf)
		mv, _ := med(mo, peakOf)
		b.add(row{section: secMorloc, lang: lang, what: what + ", one-shot: nexus peak RSS", value: nv, unit: "MB", floor: size, vs: ratio(nv, size),
			details: fmt.Sprintf("VmHWM of the nexus process; floor: the payload, the %s MB JSON file; %s; smallest %s MB; morloc's nexus process: %s MB", num(size), n, num(nmin), num(mv))})
	}
}

// interleave runs measure for nexus and for its floor in turn, rounds
// times after one untimed round, swapping the order every round so that
// neither side always runs on the machine the other warmed, and returns
// each side's figures.
func interleave[T any](rounds int, measure func(isNexus bool) ([]T, error)) (nexus, floor []T, err error) {
	for k := -1; k < rounds; k++ {
		for _, isNexus := range []bool{k%2 == 0, k%2 != 0} {
			got, err := measure(isNexus)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case k < 0: // untimed
			case isNexus:
				nexus = append(nexus, got...)
			default:
				floor = append(floor, got...)
			}
		}
	}
	return nexus, floor, nil
}

// sameReals checks a printed JSON list of Reals against want, each to the
// given significant digits (17: exactly).
func sameReals(out []byte, want []float64, digits int) error {
	out = bytes.TrimSpace(out)
	if len(out) < 2 || out[0] != '[' || out[len(out)-1] != ']' {
		return fmt.Errorf("not a JSON list: %.200s", out)
	}
	body := out[1 : len(out)-1]
	i := 0
	for k := 0; k < len(want); k++ {
		j := bytes.IndexByte(body[i:], ',')
		if j < 0 {
			j = len(body) - i
		}
		tok := body[i : i+j]
		got, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return fmt.Errorf("element %d: %q is not a number", k, tok)
		}
		if digits >= 17 && got != want[k] || digits < 17 && math.Abs(got-want[k]) > math.Abs(want[k])*math.Pow(10, float64(1-digits)) {
			return fmt.Errorf("element %d is %s, sent %v", k, tok, want[k])
		}
		i += j + 1
		if i > len(body) && k < len(want)-1 {
			return fmt.Errorf("%d elements, sent %d", k+1, len(want))
		}
	}
	if i < len(body) {
		return fmt.Errorf("more elements than the %d sent", len(want))
	}
	return nil
}

// morlocWarm measures nexus serving the program warm: small calls over
// MCP on stdio beside the relay floor; the large list over MCP, with
// nexus's memory during the call; small calls through HTTP beside
// morloc's daemon; then the bursts of concurrent calls, last, since a
// burst that fails leaves the session's stream unusable.
func (b *bench) morlocWarm(m *morlocBench) {
	maxLine := int64(len(m.argData))*2 + (1 << 20)
	p, err := b.startNexusEnv("morloc-mcp", m.env, "mcp", m.launcher, "--max-line", strconv.FormatInt(maxLine, 10), "--timeout", b.cfg.callTimeout.String())
	if err != nil {
		b.fail("morloc pools: %v", err)
		return
	}
	s := &session{proc: p, r: bufio.NewReaderSize(p.stdout, 1<<20), nextID: 1, deadline: b.cfg.callTimeout}
	defer func() {
		if err := s.stop(time.Minute); err != nil {
			b.fail("morloc pools: %v", s.failure("stopping nexus", err))
		}
	}()
	if err := s.handshake(); err != nil {
		b.fail("morloc pools: %v", err)
		return
	}
	for _, l := range morlocLangs {
		if !slices.Contains(b.cfg.langs, l.lang) {
			continue
		}
		if err := b.morlocWarmSmall(s, m, l.lang, "add"+l.suffix); err != nil {
			b.fail("morloc pools: warm add%s: %v", l.suffix, err)
			return
		}
	}
	for _, l := range morlocLangs {
		if !slices.Contains(b.cfg.langs, l.lang) {
			continue
		}
		p := &payload{kind: payloadKind{name: "Reals", arg: "_1"}, mb: float64(len(m.argData)) / 1e6, data: m.argData}
		tool := "echo" + l.suffix
		what := fmt.Sprintf("%s %d Reals over MCP stdio, warm", tool, len(m.want))
		if e, err := b.echoWith(s, m.pools, l.lang, tool, what, p, secMorloc); err != nil || e.wrong {
			b.fail("morloc pools: %s: %v", what, err)
			return
		}
	}
	daemon, daemonBase, err := startMorlocDaemon(m)
	if err != nil {
		b.add(row{section: secMorloc, what: "morloc's daemon", text: "skipped", floor: none, details: err.Error()})
		b.note("morloc pools: morloc's daemon did not start: " + err.Error())
	} else {
		defer stopMorlocDaemon(daemon)
	}
	b.morlocHTTP(m, daemonBase)
	b.morlocBursts(m, s, daemonBase)
}

// morlocWarmSmall times sequential small calls over MCP, one in flight.
func (b *bench) morlocWarmSmall(s *session, m *morlocBench, lang, tool string) error {
	n := b.cfg.calls.of(lang)
	one := func(i int) error {
		line, err := s.call(tool, fmt.Sprintf(`{"_1":%d,"_2":1000}`, i))
		if err != nil {
			return err
		}
		return addAnswer(tool, i, line)
	}
	if _, err := sequential(warmup(n), one); err != nil {
		return err
	}
	progress("morloc pools: %d × %s over MCP stdio", n, tool)
	fam := findFamily(s.pid(), m.pools)
	c0 := b.sampleCPU(fam, lang)
	lat, err := sequential(n, one)
	if err != nil {
		return err
	}
	cpu := b.sampleCPU(fam, lang).sub(c0)
	l := latencies(lat)
	progress("morloc pools: %d × %s through a minimal Go relay to the same pool", n, tool)
	r, err := b.morlocRelayRun(m, tool, n)
	if err != nil {
		b.fail("morloc pools: the relay floor of %s: %v", tool, err)
		r = relayRun{lat: latency{p50: none, p90: none, p99: none}, cpu: none, poolCPU: none}
	}
	what := fmt.Sprintf("%s × %d over MCP stdio, warm: ", tool, n)
	b.add(row{section: secMorloc, lang: lang, what: what + "p50", value: l.p50, unit: "µs", floor: r.lat.p50, vs: ratio(l.p50, r.lat.p50),
		details: fmt.Sprintf("floor: the p50 of a minimal Go relay to the same pool, started as nexus starts it (a connection and a call packet per call), p90 %s, p99 %s µs; nexus p90 %s, p99 %s µs; morloc 0.69's nexus has no MCP",
			num(r.lat.p90), num(r.lat.p99), num(l.p90), num(l.p99))})
	per := cpu.nexus / float64(n)
	d := fmt.Sprintf("from /proc utime+stime at 10 ms ticks: ±%s µs/call; floor: the relay's CPU per call; pool CPU per call %s µs, through the relay %s µs", num(1e4/float64(n)), num(cpu.pool/float64(n)), num(r.poolCPU))
	if own, ok := b.rowValue(secSmall, lang, ": nexus CPU/call"); ok {
		d += fmt.Sprintf("; the same kind of call through nexus's own runtime (add_%s, small calls): %s µs, this ×%s", lang, num(own), num(per/own))
	}
	b.add(row{section: secMorloc, lang: lang, what: what + "nexus CPU/call", value: per, unit: "µs", floor: r.cpu, vs: ratio(per, r.cpu), details: d})
	return nil
}

// rowValue is the value of the first row of section and lang whose
// measure ends in suffix, if the run has one.
func (b *bench) rowValue(section, lang, suffix string) (float64, bool) {
	for _, r := range b.rows {
		if r.section == section && r.lang == lang && strings.HasSuffix(r.what, suffix) && r.text == "" && r.value > 0 {
			return r.value, true
		}
	}
	return 0, false
}
