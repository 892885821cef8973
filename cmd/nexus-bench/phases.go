package main

import (
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// sessionPhases runs the small-call, memory and concurrency phases on one
// nexus mcp process, named "session" for -nexus-env.
func (b *bench) sessionPhases() {
	s, err := b.startSession(mainRun, "--timeout", b.cfg.callTimeout.String())
	if err != nil {
		b.fail("starting the session: %v", err)
		return
	}
	defer func() {
		if err := s.stop(time.Minute); err != nil {
			b.fail("session: %v", s.failure("stopping nexus", err))
		}
	}()
	if err := b.ready(s); err != nil {
		b.fail("session: %v", err)
		return
	}
	if !b.cfg.skip["small"] {
		for _, lang := range b.cfg.langs {
			if err := b.smallCalls(s, lang); err != nil {
				b.fail("small calls (%s): %v", lang, err)
				b.add(row{section: secSmall, lang: lang, what: "add_" + lang + ": p50", text: "FAILED", floor: none})
			}
		}
	}
	if !b.cfg.skip["memory"] {
		b.memoryPhase(s)
	}
	if !b.cfg.skip["concurrency"] {
		for _, lang := range b.cfg.langs {
			if err := b.concurrency(s, lang); err != nil {
				b.fail("concurrency (%s): %v", lang, err)
				b.add(row{section: secConcurrency, lang: lang, what: "sleep_" + lang, text: "FAILED", floor: none})
				return // the session's reader may be mid-line: nothing more can be trusted
			}
		}
	}
}

// ready makes every pool of the session start before anything is timed:
// those of the languages measured, with an add call whose answer is
// checked, and the program's others too, which nexus starts beside them
// (with -langs py, R's two workers starting took a third to a half of
// the machine during the first timed call). The others' answers are not
// checked: a language that is not measured may not be installed.
func (b *bench) ready(s *session) error {
	if err := s.ready(b.cfg.langs...); err != nil {
		return err
	}
	for _, p := range b.pools {
		if !slices.Contains(b.cfg.langs, p.lang) {
			if _, err := s.call("add_"+p.lang, `{"a":1,"b":2}`); err != nil {
				return err
			}
		}
	}
	return nil
}

// cpuSample is the CPU time nexus, the pools of one language and the
// driver itself have used so far, and that of the whole machine (busy and
// stolen): what is left of the machine's is other processes' (others).
type cpuSample struct{ nexus, pool, self, machine, steal float64 } // µs

func (b *bench) sampleCPU(fam family, lang string) cpuSample {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
	busy, steal, _ := machineTicks() // 0 without /proc/stat: others reads 0
	return cpuSample{nexus: ticksToMicros(cpuTicks(fam.nexus)), pool: ticksToMicros(cpuTicks(fam.pools[lang]...)), self: self,
		machine: ticksToMicros(busy), steal: ticksToMicros(steal)}
}

func (c cpuSample) sub(d cpuSample) cpuSample {
	return cpuSample{c.nexus - d.nexus, c.pool - d.pool, c.self - d.self, c.machine - d.machine, c.steal - d.steal}
}

// others is the CPU time, in µs, that processes other than nexus, the
// pools measured and the driver took from the machine in a difference of
// two samples (the other languages' idle pools count, at next to
// nothing), and the time the hypervisor stole: on a shared machine, what
// a wall-clock figure lost to its neighbours.
func (c cpuSample) others() float64 {
	return max(0, c.machine-c.nexus-c.pool-c.self) + c.steal
}

// smallCalls times sequential add_<lang> calls, one in flight.
func (b *bench) smallCalls(s *session, lang string) error {
	n := b.cfg.calls.of(lang)
	tool := "add_" + lang
	progress("small calls: %d × %s", n, tool)
	var line, args []byte
	one := func(i int) error {
		id := s.nextID
		s.nextID++
		args = append(strconv.AppendInt(append(args[:0], `{"a":`...), int64(i), 10), `,"b":1000}`...)
		line = callLine(line[:0], id, tool, string(args))
		reply, err := s.exchange(id, line)
		if err != nil {
			return s.failure(tool, err)
		}
		return addAnswer(tool, i, reply)
	}
	if _, err := sequential(warmup(n), one); err != nil {
		return err
	}
	fam := findFamily(s.pid(), b.pools)
	if len(fam.pools[lang]) == 0 {
		return fmt.Errorf("no %s pool process among nexus's children", lang)
	}
	c0 := b.sampleCPU(fam, lang)
	t0 := time.Now()
	lat, err := sequential(n, one)
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	cpu := b.sampleCPU(fam, lang).sub(c0)
	l := latencies(lat)
	fl, hasFloor := b.floors.pipe[lang]
	floorOf := func(v float64) float64 {
		if !hasFloor {
			return none
		}
		return v
	}
	what := fmt.Sprintf("add_%s × %d: ", lang, n)
	floorName := "floor: a raw pipe round trip to a " + lang + " child, pool framing"
	cr := b.floors.childRelay
	for _, q := range []struct {
		name     string
		v, floor float64
	}{{"p50", l.p50, fl.p50}, {"p90", l.p90, fl.p90}, {"p99", l.p99, fl.p99}} {
		f := floorOf(q.floor)
		d := ""
		if q.name == "p50" {
			d = floorName
			if cr.lat.n > 0 {
				d += fmt.Sprintf("; a minimal Go relay between client and C++ floor child: p50 %s µs, pipe floor ×%s",
					num(cr.lat.p50), num(cr.lat.p50/b.floors.pipe["cpp"].p50))
			}
		}
		b.add(row{section: secSmall, lang: lang, what: what + q.name, value: q.v, unit: "µs", floor: f, vs: ratio(q.v, f), details: d})
		if q.name == "p50" {
			b.add(b.vsRelayRow(lang, what, l, len(fam.pools[lang])))
		}
	}
	b.add(row{section: secSmall, lang: lang, what: what + "calls/s", value: float64(n) / wall.Seconds(), unit: "calls/s", floor: floorOf(1e6 / fl.mean),
		vs: ratio(float64(n)/wall.Seconds(), floorOf(1e6/fl.mean)), details: fmt.Sprintf("one call in flight; the client's own CPU %s µs/call", num(cpu.self/float64(n)))})
	res := fmt.Sprintf("from /proc utime+stime at 10 ms ticks: ±%s µs/call", num(1e4/float64(n)))
	relay := none
	if r, ok := b.floors.relay[lang]; ok {
		relay = r.cpu
		res += "; floor: a minimal Go relay's CPU per call (one goroutine, blocking pipes) to the real " + lang + " bench pool"
	}
	if cr.lat.n > 0 {
		res += fmt.Sprintf("; the same relay to the C++ floor child: %s µs", num(cr.cpu))
	}
	b.add(row{section: secSmall, lang: lang, what: what + "nexus CPU/call", value: cpu.nexus / float64(n), unit: "µs", floor: relay,
		vs: ratio(cpu.nexus/float64(n), relay), details: res})
	pf, ok := b.floors.pipeCPU[lang]
	if !ok {
		pf = none
	}
	workers := ""
	if k := len(fam.pools[lang]); k > 1 {
		workers = fmt.Sprintf(", summed over %d workers", k)
	}
	pd := "floor: the pipe floor child's CPU per round trip" + workers
	if r, ok := b.floors.relay[lang]; ok {
		pd += fmt.Sprintf("; the same pool through the relay: %s µs", num(r.poolCPU))
	}
	b.add(row{section: secSmall, lang: lang, what: what + "pool CPU/call", value: cpu.pool / float64(n), unit: "µs", floor: pf, vs: ratio(cpu.pool/float64(n), pf),
		details: pd})
	return nil
}

// vsRelayRow sets a small call's p50 through nexus beside the p50 through a
// minimal Go relay to the same language's real bench pool (the goal: at
// most ×1.3), so that the ratio is what nexus adds and not the pool's own
// time. workers is how many pool processes nexus runs for lang.
func (b *bench) vsRelayRow(lang, what string, l latency, workers int) row {
	r, ok := b.floors.relay[lang]
	f := none
	d := "floor: the p50 of a minimal Go relay (one goroutine, blocking pipes) to the real " + lang + " bench pool, started as nexus starts it"
	if ok {
		f = r.lat.p50
		d += fmt.Sprintf(" (its p90 %s, p99 %s µs)", num(r.lat.p90), num(r.lat.p99))
	} else {
		d += ": not measured"
	}
	if workers > 1 {
		d += fmt.Sprintf("; nexus runs %d %s workers, the relay one pool process: one call in flight keeps to nexus's first worker", workers, lang)
	}
	return row{section: secSmall, lang: lang, what: what + "p50 vs relay", value: l.p50, unit: "µs", floor: f, vs: ratio(l.p50, f), details: d}
}

// memoryPhase reads resident memory after the small calls, beside a bare
// interpreter's.
func (b *bench) memoryPhase(s *session) {
	fam := findFamily(s.pid(), b.pools)
	m, err := readMemory(fam.nexus)
	if err != nil {
		b.fail("memory: nexus: %v", err)
		return
	}
	b.add(row{section: secMemory, what: "nexus VmHWM (peak so far)", value: mb(m.hwm), unit: "MB", floor: none, details: "after the small calls; MB = 10^6 bytes"})
	b.add(row{section: secMemory, what: "nexus VmRSS", value: mb(m.rss), unit: "MB", floor: none})
	if fam.reaper == 0 {
		b.fail("memory: no nexus-reaper among nexus's children")
	} else if r, err := readMemory(fam.reaper); err != nil {
		b.fail("memory: reaper: %v", err)
	} else {
		b.add(row{section: secMemory, what: "nexus-reaper VmRSS", value: mb(r.rss), unit: "MB", floor: none})
	}
	for _, lang := range b.cfg.langs {
		var rss, hwm int64
		for _, pid := range fam.pools[lang] {
			if pm, err := readMemory(pid); err == nil {
				rss, hwm = max(rss, pm.rss), max(hwm, pm.hwm)
			}
		}
		if rss == 0 {
			b.fail("memory: no %s pool process", lang)
			continue
		}
		fl := none
		if v, ok := b.floors.bareRSS[lang]; ok {
			fl = mb(v)
		}
		d := fmt.Sprintf("VmHWM %s MB", num(mb(hwm)))
		if k := len(fam.pools[lang]); k > 1 {
			d = fmt.Sprintf("the largest of %d workers; ", k) + d
		}
		if lang == "cpp" {
			d += "; floor: the C++ floor child"
		} else {
			d += "; floor: a bare " + map[string]string{"py": "python3", "r": "Rscript"}[lang] + " blocked on stdin"
			if c, ok := b.floors.childRSS[lang]; ok {
				d += fmt.Sprintf(" (the floor child, its JSON library loaded: %s MB)", num(mb(c)))
			}
		}
		b.add(row{section: secMemory, lang: lang, what: "pool VmRSS", value: mb(rss), unit: "MB", floor: fl, vs: diff(mb(rss), fl, "MB"), details: d})
	}
}

// concurrency sends sleep_<lang> calls with inflight of them in flight at
// once and compares the wall time with the ideal.
func (b *bench) concurrency(s *session, lang string) error {
	n, k := b.cfg.sleeps, b.cfg.inflight
	tool := "sleep_" + lang
	fam := findFamily(s.pid(), b.pools)
	par := k // Python and C++ run each call on a thread of its own
	if lang == "r" {
		par = min(k, len(fam.pools[lang])) // one call at a time per worker
	}
	if par == 0 {
		return fmt.Errorf("no %s pool process among nexus's children", lang)
	}
	progress("concurrency: %d × %s(%d), %d in flight", n, tool, b.cfg.sleepMs, k)
	// One untimed round first: sequential calls all went to the first
	// worker, and a worker's first call of a function costs R its loading.
	if _, err := s.inFlight(tool, fmt.Sprintf(`{"ms":%d}`, b.cfg.sleepMs), strconv.Itoa(b.cfg.sleepMs), k, k, b.cfg.callTimeout); err != nil {
		return fmt.Errorf("warm-up round: %w", err)
	}
	wall, err := s.inFlight(tool, fmt.Sprintf(`{"ms":%d}`, b.cfg.sleepMs), strconv.Itoa(b.cfg.sleepMs), n, k, b.cfg.callTimeout)
	if err != nil {
		return err
	}
	ideal := float64((n+par-1)/par) * float64(b.cfg.sleepMs)
	b.add(row{section: secConcurrency, lang: lang, what: fmt.Sprintf("%d × %s(%d), %d in flight, P = %d: wall", n, tool, b.cfg.sleepMs, k, par),
		value: ms(wall), unit: "ms", floor: ideal, vs: ratio(ms(wall), ideal),
		details: fmt.Sprintf("floor: the ideal ⌈%d / P⌉ × %d ms; P = min(%d, the calls the pool runs at once)", n, b.cfg.sleepMs, k)})
	return nil
}

// inFlight makes n calls of tool with k of them in flight at once, each
// answered want, and returns the wall time from the first request sent to
// the last reply read.
func (s *session) inFlight(tool, args, want string, n, k int, timeout time.Duration) (time.Duration, error) {
	first := s.nextID
	s.nextID += n
	slots := make(chan struct{}, k)
	done := make(chan error, 1)
	timer := time.AfterFunc(timeout, func() { s.cmd.Process.Kill() })
	defer timer.Stop()
	go func() {
		seen := make([]bool, n)
		for got := 0; got < n; {
			line, err := s.readLine()
			if err != nil {
				done <- s.failure(tool, err)
				return
			}
			id, ok := replyID(line)
			if !ok {
				continue
			}
			if id < first || id >= first+n || seen[id-first] {
				done <- fmt.Errorf("unexpected or repeated reply id %d: %.300s", id, line)
				return
			}
			seen[id-first] = true
			if !textIs(line, want) {
				done <- fmt.Errorf("WRONG answer to %s: %.300s", tool, line)
				return
			}
			got++
			<-slots
		}
		done <- nil
	}()
	t0 := time.Now()
	var line []byte
	for i := range n {
		select {
		case slots <- struct{}{}:
		case err := <-done:
			return 0, fmt.Errorf("after %d calls sent: %w", i, err)
		}
		line = callLine(line[:0], first+i, tool, args)
		if err := s.write(line); err != nil {
			return 0, s.failure(tool, err)
		}
	}
	if err := <-done; err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func (c cpuSample) add(d cpuSample) cpuSample {
	return cpuSample{c.nexus + d.nexus, c.pool + d.pool, c.self + d.self, c.machine + d.machine, c.steal + d.steal}
}
