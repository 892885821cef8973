package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"time"
)

// numpyElements is the size of the numpy case's array: a million float64s
// (8 MB), or less when -sizes asks only for smaller payloads.
const numpyElements = 1_000_000

// numpyPhase measures a numpy result: ramp_py of the scientific
// program (beside the bench program) returns a float64 ndarray of n
// elements, NaN and infinity among them, which the Python runtime sends as
// one array from the ndarray's memory and nexus writes as JSON for the
// client. MB/s counts the array's 8 bytes per element.
func (b *bench) numpyPhase() {
	prog := filepath.Join(filepath.Dir(filepath.Clean(b.cfg.program)), "scientific")
	what := "ramp_py: a float64 ndarray returned"
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		b.add(row{section: secLarge, lang: "py", what: what, text: "skipped", floor: none, details: "/usr/bin/python3 has no numpy (make deps installs python3-numpy)"})
		return
	}
	n := numpyElements
	if len(b.cfg.sizesMB) > 0 {
		largest := 0.0
		for _, mb := range b.cfg.sizesMB {
			largest = max(largest, mb)
		}
		n = min(n, max(1000, int(largest*1e6/8)))
	}
	p, err := b.startNexus("numpy", "mcp", prog, "--max-line", "300000000", "--timeout", b.cfg.callTimeout.String())
	if err != nil {
		b.fail("numpy: %v", err)
		return
	}
	s := &session{proc: p, r: bufio.NewReaderSize(p.stdout, 1<<20), nextID: 1, deadline: b.cfg.callTimeout}
	defer s.stop(time.Minute)
	if err := s.handshake(); err != nil {
		b.fail("numpy: %v", err)
		return
	}
	if _, err := s.call("ramp_py", `{"_1":1000}`); err != nil { // the pool up, numpy imported
		b.fail("numpy: warm-up: %v", err)
		return
	}
	mb := float64(8*n) / 1e6
	runs := b.cfg.runsFor(mb)
	progress("large data: %s (%d elements) × %d", what, n, runs)
	best, reply := math.Inf(1), 0
	for range runs {
		t0 := time.Now()
		line, err := s.call("ramp_py", fmt.Sprintf(`{"_1":%d}`, n))
		rt := time.Since(t0)
		if err != nil {
			b.fail("numpy: %v", err)
			return
		}
		// NaN at 3 and infinity at 5, as the client reads them.
		if !bytes.Contains(line, []byte(`[0,0.5,1,\"NaN\",2,\"Infinity\",3,3.5,`)) {
			b.add(row{section: secLarge, lang: "py", what: what, text: "WRONG", floor: none, details: fmt.Sprintf("%.200s", line)})
			b.fail("numpy: WRONG answer: %.200s", line)
			return
		}
		reply = len(line)
		best = min(best, ms(rt))
	}
	label := fmt.Sprintf("%s, %d elements", what, n)
	b.add(row{section: secLarge, lang: "py", what: label + ": round trip", value: best, unit: "ms", floor: none,
		details: fmt.Sprintf("best of %d; the reply is %s MB of JSON", runs, num(float64(reply)/1e6))})
	b.add(row{section: secLarge, lang: "py", what: label + ": MB/s", value: mb / (best / 1e3), unit: "MB/s", floor: none,
		details: fmt.Sprintf("%s MB of float64s (8 bytes each) per call", num(mb))})
}
