package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// largePhase echoes every payload through echo_<lang> and
// echoMatrix_<lang>, beside the language's own JSON decode+encode of the
// same bytes. Each language, kind and size gets a nexus of its own (named
// for -nexus-env by largeRun): a process keeps the memory of a
// large call, so a peak measured after a larger payload would be that
// payload's, and a first call after a smaller one would find part of its
// memory touched already (linPoint).
func (b *bench) largePhase() {
	defer b.dropPayloads()
	for _, lang := range b.cfg.langs {
		var fc *floorChild
		if b.floorDir != "" && b.floors.missing[lang] == "" {
			c, err := startFloorChild(b.floorDir, lang)
			if err != nil {
				b.fail("large data: JSON floor (%s): %v", lang, err)
			} else {
				fc = c
			}
		}
		for _, k := range payloadKinds {
			if err := b.largeKind(lang, k, fc); err != nil {
				b.fail("large data (%s, %s): %v", lang, k.name, err)
			}
		}
		if fc != nil {
			fc.stop()
		}
	}
}

func (b *bench) largeKind(lang string, k payloadKind, fc *floorChild) error {
	// The line cap must take the largest request: the payload and a little.
	maxLine := int64(64 << 20)
	for _, mb := range b.cfg.sizesMB {
		maxLine = max(maxLine, int64(mb*1e6)*2+(1<<20))
	}
	msPerByte := 0.0 // of the last size: predicts the next
	var line []linPoint
	for _, mb := range b.cfg.sizesMB {
		tool := k.tool + "_" + lang
		what := fmt.Sprintf("%s %s %s MB", tool, k.name, mbLabel(mb))
		if mb > b.cfg.maxFor(lang) {
			b.add(row{section: secLarge, lang: lang, what: what, text: "skipped", floor: none, details: fmt.Sprintf("-max-mb %s=%s", lang, mbLabel(b.cfg.maxFor(lang)))})
			continue
		}
		if predicted := time.Duration(msPerByte * mb * 1e6 * float64(time.Millisecond)); predicted > b.cfg.maxCallTime {
			b.add(row{section: secLarge, lang: lang, what: what, text: "skipped", floor: none,
				details: fmt.Sprintf("at the rate of the size below, a call would take %.0f s, more than -max-call-time %v", predicted.Seconds(), b.cfg.maxCallTime)})
			continue
		}
		p, err := b.payload(k, mb)
		if err != nil {
			return err
		}
		// Every size in a nexus and pools of their own: its first call
		// then meets memory no process has touched, as at every other
		// size (linPoint).
		s, err := b.largeSession(largeRun(lang, k, mb, 1), lang, k, maxLine)
		if err != nil {
			return err
		}
		e, err := b.echo(s, lang, tool, what, p)
		if err != nil {
			s.stop(time.Minute)
			return err
		}
		if err := s.stop(time.Minute); err != nil {
			return s.failure("stopping nexus", err)
		}
		if e.wrong {
			break // the next sizes would be wrong the same way
		}
		msPerByte = e.best / float64(len(p.data))
		// A size of several runs makes as many first calls, each in
		// processes of its own, and the linearity row takes their median.
		firsts := []callTime{e.first}
		for n := 2; n <= b.cfg.runsFor(mb); n++ {
			f, err := b.freshFirstCall(largeRun(lang, k, mb, n), lang, k, p, maxLine)
			if err != nil {
				return err
			}
			firsts = append(firsts, f)
		}
		line = append(line, medianPoint(mb, float64(len(p.data))/1e6, firsts))
		if fc != nil {
			progress("large data: the %s JSON floor of %s", lang, p.label())
			f, err := fc.jsonFloor(p, b.cfg.runsFor(mb), b.cfg.callTimeout)
			if err != nil {
				b.fail("large data: JSON floor of %s (%s): %v", p.label(), lang, err)
				fc.stop()
				fc = nil
			} else {
				b.jsonFloorRow(lang, what, p, e.best, f)
			}
		}
	}
	b.linearityRow(lang, k.tool+"_"+lang+" "+k.name, line)
	return nil
}

// linPoint is one size's figures for the linearity row: those of its first
// call, in a nexus and pools started for it. On a machine where a page's
// first touch costs far more than the bytes written to it (the VM of
// docs/performance.md, "Fresh memory": some 20 µs a page), the best of
// three 10 MB calls reuses the pages of the first, and a single 100 MB call
// cannot: set side by side, they would measure which memory was warm, not
// how the cost grows with the size.
//
// others is the share of the machine other processes took during the
// call (cpuSample.others): a first call is one sample, and a neighbour
// busy during it slows it down by as much, which the row shows beside
// the MB/s rather than hides.
//
// n is how many first calls, each in processes of its own, the figures
// are the median of (medianPoint).
type linPoint struct {
	mb, mbps, cpuPerMB, others float64
	n                          int
}

// largeRun names the nexus of the n-th first call (from 1) of one size of
// a payload kind, for -nexus-env: large-<lang>-<kind>-<mb>MB, then -<n>
// from the second, so that each process writes a CPU profile of its own.
func largeRun(lang string, k payloadKind, mb float64, n int) string {
	run := fmt.Sprintf("large-%s-%s-%sMB", lang, k.name, mbLabel(mb))
	if n > 1 {
		run += "-" + strconv.Itoa(n)
	}
	return run
}

// largeSession starts the nexus run names for one size of a payload kind,
// with every pool up and the tool called once: nothing of the start-up is
// timed.
func (b *bench) largeSession(run, lang string, k payloadKind, maxLine int64) (*session, error) {
	tool := k.tool + "_" + lang
	s, err := b.startSession(run, "--max-line", strconv.FormatInt(maxLine, 10), "--timeout", b.cfg.callTimeout.String())
	if err != nil {
		return nil, err
	}
	if err := b.ready(s); err != nil {
		s.stop(time.Minute)
		return nil, err
	}
	if line, err := s.call(tool, fmt.Sprintf(`{%q:%s}`, k.arg, k.warm)); err != nil || echoed(line, []byte(k.warm)) != "" {
		s.stop(time.Minute)
		return nil, fmt.Errorf("warm-up call to %s: %v %.300s", tool, err, line)
	}
	return s, nil
}

// callTime is what one timed echo call measured.
type callTime struct {
	ms      float64 // its round trip
	nexusMs float64 // nexus's CPU in it
	others  float64 // other processes' share of the machine in it (linPoint)
}

// timeCall makes one echo call of p to tool and measures it; the reply is
// checked by the caller. The reply buffer is made before the timer starts.
func (b *bench) timeCall(s *session, fam family, lang, tool string, p *payload) ([]byte, callTime, cpuSample, error) {
	id := s.nextID
	s.nextID++
	prefix := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{%q:`, id, tool, p.kind.arg)
	s.reserveLine(len(p.data) + 1<<20) // the echo is the payload and a little
	c0 := b.sampleCPU(fam, lang)
	t0 := time.Now()
	line, err := s.exchange(id, prefix, p.data, []byte("}}}\n"))
	rt := time.Since(t0)
	d := b.sampleCPU(fam, lang).sub(c0)
	return line, callTime{ms: ms(rt), nexusMs: d.nexus / 1e3, others: d.others() / (float64(rt.Microseconds()) * float64(runtime.NumCPU()))}, d, err
}

// freshFirstCall makes one call of p into a nexus started for it, named run.
func (b *bench) freshFirstCall(run, lang string, k payloadKind, p *payload, maxLine int64) (callTime, error) {
	tool := k.tool + "_" + lang
	s, err := b.largeSession(run, lang, k, maxLine)
	if err != nil {
		return callTime{}, err
	}
	progress("large data: %s %s MB, a first call in a fresh nexus", tool, num(p.mb))
	line, f, _, err := b.timeCall(s, findFamily(s.pid(), b.pools), lang, tool, p)
	if err == nil {
		if why := echoed(line, p.data); why != "" {
			err = fmt.Errorf("WRONG answer: %s", why)
		}
	}
	if stopErr := s.stop(time.Minute); err == nil && stopErr != nil {
		err = s.failure("stopping nexus", stopErr)
	}
	return f, err
}

// medianPoint is the linearity point of a size from its first calls: the
// median of each figure (one call: its own). A first call at 10 MB is a
// sub-second sample whose page faults may or may not find pages another
// process just gave back: nexus's CPU for it ranged 260-600 ms between
// runs on one quiet day, more than the whole effect the row is there to
// show.
func medianPoint(mb, size float64, firsts []callTime) linPoint {
	var mbps, cpu, others []float64
	for _, c := range firsts {
		mbps = append(mbps, size/(c.ms/1e3))
		cpu = append(cpu, c.nexusMs/size)
		others = append(others, c.others)
	}
	return linPoint{mb: mb, n: len(firsts), mbps: median(mbps), cpuPerMB: median(cpu), others: median(others)}
}

// linearityRow sets the MB/s of every size's first call beside that at
// 10 MB (or the smallest size above it, when 10 MB was not run), and
// nexus's CPU per MB likewise: flat from 10 MB up is the goal (a large
// call's throughput must not fall with its size), so the row's figure is
// the largest size's MB/s and its floor the 10 MB one's.
func (b *bench) linearityRow(lang, what string, pts []linPoint) {
	ref := -1
	for i, p := range pts {
		if p.mb >= 10 {
			ref = i
			break
		}
	}
	if ref < 0 || ref == len(pts)-1 {
		return
	}
	base, last := pts[ref], pts[len(pts)-1]
	var sizes, mbps, cpu, others, firsts []string
	for _, p := range pts[ref:] {
		sizes = append(sizes, mbLabel(p.mb))
		firsts = append(firsts, strconv.Itoa(p.n))
		mbps = append(mbps, fmt.Sprintf("%s (×%s)", num(p.mbps), num(p.mbps/base.mbps)))
		cpu = append(cpu, fmt.Sprintf("%s (×%s)", num(p.cpuPerMB), num(p.cpuPerMB/base.cpuPerMB)))
		others = append(others, fmt.Sprintf("%.0f %%", 100*p.others))
	}
	b.add(row{section: secLarge, lang: lang, what: fmt.Sprintf("%s: MB/s at %s MB vs %s MB", what, mbLabel(last.mb), mbLabel(base.mb)),
		value: last.mbps, unit: "MB/s", floor: base.mbps, vs: ratio(last.mbps, base.mbps),
		details: fmt.Sprintf("first calls, each in processes of its own, the median of %s; MB/s at %s MB: %s; nexus CPU per MB (ms): %s; other processes' share of the machine during the call: %s",
			strings.Join(firsts, " / "), strings.Join(sizes, " / "), strings.Join(mbps, " / "), strings.Join(cpu, " / "), strings.Join(others, " / "))})
}

// echoResult is what echo measured, in ms.
type echoResult struct {
	best    float64  // the best round trip
	nexusMs float64  // nexus's CPU per call, on average
	first   callTime // the first call's
	wrong   bool     // the answer was wrong (a row says so)
}

// echo runs the echo of p runs times and adds its rows.
func (b *bench) echo(s *session, lang, tool, what string, p *payload) (echoResult, error) {
	return b.echoWith(s, b.pools, lang, tool, what, p, secLarge)
}

// echoWith is echo for a program whose pools are pools, its rows in section.
func (b *bench) echoWith(s *session, pools []manifestPool, lang, tool, what string, p *payload, section string) (echoResult, error) {
	runs := b.cfg.runsFor(p.mb)
	size := float64(len(p.data)) / 1e6
	progress("%s: %s (%s MB) × %d", section, what, num(size), runs)
	fam := findFamily(s.pid(), pools)
	best, peak, before, poolPeak := math.Inf(1), int64(math.MaxInt64), int64(0), int64(0)
	var cpu cpuSample
	var e echoResult
	for i := range runs {
		resetPeak(fam.nexus)
		for _, pid := range fam.pools[lang] {
			resetPeak(pid)
		}
		m0, _ := readMemory(fam.nexus)
		line, f, d, err := b.timeCall(s, fam, lang, tool, p)
		if err != nil {
			return e, s.failure(what, err)
		}
		cpu = cpu.add(d)
		if i == 0 {
			e.first = f
		}
		// The smallest peak of the runs: a later run may start with the
		// memory an earlier one left behind.
		if m, err := readMemory(fam.nexus); err == nil && m.hwm < peak {
			peak, before = m.hwm, m0.rss
		}
		for _, pid := range fam.pools[lang] {
			if m, err := readMemory(pid); err == nil {
				poolPeak = max(poolPeak, m.hwm)
			}
		}
		if why := echoed(line, p.data); why != "" {
			b.add(row{section: section, lang: lang, what: what + ": round trip", text: "WRONG", floor: none, details: why})
			b.fail("large data: %s: WRONG answer: %s", what, why)
			e.wrong = true
			return e, nil
		}
		best = min(best, f.ms)
	}
	rn := float64(runs)
	b.add(row{section: section, lang: lang, what: what + ": round trip", value: best, unit: "ms", floor: none,
		details: fmt.Sprintf("%s MB argument; best of %d (the first %s ms, nexus CPU %s ms, other processes %.0f %% of the machine); CPU per call: nexus %s ms, pool %s ms, the driver %s ms", num(size), runs, num(e.first.ms), num(e.first.nexusMs), 100*e.first.others, num(cpu.nexus/rn/1e3), num(cpu.pool/rn/1e3), num(cpu.self/rn/1e3))})
	b.add(row{section: section, lang: lang, what: what + ": MB/s", value: size / (best / 1e3), unit: "MB/s", floor: none,
		details: fmt.Sprintf("%s ms per MB", num(best/size))})
	b.add(row{section: section, lang: lang, what: what + ": nexus peak RSS", value: mb(peak), unit: "MB", floor: size, vs: ratio(mb(peak), size),
		details: fmt.Sprintf("VmHWM during the call (%s MB before it), the smallest of %d; floor: the payload; pool peak %s MB", num(mb(before)), runs, num(mb(poolPeak)))})
	e.best, e.nexusMs = best, cpu.nexus/rn/1e3
	return e, nil
}

// jsonFloorRow puts the JSON floor beside the round-trip row of what.
func (b *bench) jsonFloorRow(lang, what string, p *payload, best float64, f jsonFl) {
	for i := len(b.rows) - 1; i >= 0; i-- {
		r := &b.rows[i]
		if r.lang != lang || r.what != what+": round trip" {
			continue
		}
		r.floor, r.vs = f.ms, ratio(best, f.ms)
		d := fmt.Sprintf("; floor: %s's own JSON decode+encode, %s MB/s", langName(lang), num(float64(len(p.data))/1e6/(f.ms/1e3)))
		if !f.same {
			d += " (its output is not the input byte for byte"
			if lang == "r" && p.kind.name == "matrix" {
				d += ": toJSON(digits = NA) writes 15 significant digits"
			}
			d += ")"
		}
		r.details += d
		return
	}
}

func langName(lang string) string {
	return map[string]string{"py": "Python", "r": "R", "cpp": "C++"}[lang]
}

// payload returns the argument of kind k at mb, generated once from a
// seed of its own (the same bytes in every language and every run) and
// written to a file for the JSON floor.
func (b *bench) payload(k payloadKind, mb float64) (*payload, error) {
	key := k.name + " " + mbLabel(mb)
	if p, ok := b.payloadCache[key]; ok {
		return p, nil
	}
	rng := rand.New(rand.NewPCG(uint64(len(k.name)), math.Float64bits(mb)))
	p := &payload{kind: k, mb: mb, data: k.gen(rng, int(mb*1e6))}
	f, err := os.CreateTemp("", "nexus-bench-*.json")
	if err != nil {
		return nil, fmt.Errorf("the payload file for the JSON floor: %w", err)
	}
	_, err = f.Write(p.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	p.file = f.Name()
	if err != nil {
		os.Remove(p.file)
		return nil, fmt.Errorf("writing %s: %w", p.file, err)
	}
	if b.payloadCache == nil {
		b.payloadCache = map[string]*payload{}
	}
	b.payloadCache[key] = p
	return p, nil
}

func (b *bench) dropPayloads() {
	for _, p := range b.payloadCache {
		os.Remove(p.file)
	}
	b.payloadCache = nil
}
