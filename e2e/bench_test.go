package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// TestBenchDriverTiny runs the benchmark driver (cmd/nexus-bench) once in
// its tiny configuration against the race-built nexus, so that `make bench`
// cannot rot: it must exit 0 and print every section with a row of numbers
// per language. Its figures are not checked: speed is judged by the bench,
// never by tests.
func TestBenchDriverTiny(t *testing.T) {
	testenv.Long(t)
	langs := []string{"py", "r", "cpp"}
	missing := map[string]string{}
	if _, err := exec.LookPath("Rscript"); err != nil {
		missing["r"] = "Rscript is not installed (make deps)"
	}
	if _, err := os.Stat(filepath.Join(program("bench"), "pools", "cpp", "pool-cpp.out")); err != nil {
		missing["cpp"] = "testdata/bench's C++ pool is not built (needs g++ and nlohmann-json3-dev: make deps, make pools)"
	}
	for lang, why := range missing {
		if !testing.Short() {
			t.Fatalf("the bench driver measures %s, but %s; only -short leaves a language out", lang, why)
		}
		t.Logf("-short: leaving %s out: %s", lang, why)
		langs = slices.DeleteFunc(langs, func(l string) bool { return l == lang })
	}

	driver := filepath.Join(t.TempDir(), "nexus-bench")
	build := exec.Command("go", "build", "-o", driver, "./cmd/nexus-bench")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/nexus-bench: %v\n%s", err, out)
	}
	cmd := exec.Command(driver, "-tiny", "-nexus", nexusBin, "-program", program("bench"), "-langs", strings.Join(langs, ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("nexus-bench -tiny: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	rows := parseBenchTable(t, stdout.String())
	if t.Failed() {
		return
	}

	// want is a row the table must have: found by section, language and
	// the start and end of its measure (the middle holds counts).
	type want struct {
		section, lang, prefix, suffix string
		floor                         bool // its floor column must hold a positive number too
		zeroOK                        bool // CPU time, counted in 10 ms ticks: a tiny run may see none
	}
	wants := []want{
		{section: "start-up", lang: "nexus", prefix: "spawn → initialize reply"},
		{section: "start-up", lang: "nexus", prefix: "exit after stdin EOF"},
		{section: "memory", lang: "nexus", prefix: "nexus VmHWM"},
		{section: "memory", lang: "nexus", prefix: "nexus VmRSS"},
		{section: "memory", lang: "nexus", prefix: "nexus-reaper VmRSS"},
	}
	for _, l := range langs {
		add, sleep := "add_"+l+" × ", "sleep_"+l+"("
		wants = append(wants,
			want{section: "small calls", lang: l, prefix: add, suffix: ": p50", floor: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": p50 vs relay", floor: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": p90", floor: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": p99", floor: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": calls/s", floor: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": nexus CPU/call", zeroOK: true},
			want{section: "small calls", lang: l, prefix: add, suffix: ": pool CPU/call", zeroOK: true},
			want{section: "concurrency", lang: l, prefix: "16 × " + sleep, suffix: ": wall", floor: true},
			want{section: "start-up", lang: l, prefix: "spawn → first add_" + l + " answered", floor: true},
			want{section: "memory", lang: l, prefix: "pool VmRSS", floor: true},
			want{section: "HTTP", lang: l, prefix: "POST /call/bench/add_" + l + " [1,2]"},
			want{section: "HTTP", lang: l, prefix: "POST /mcp stateless tools/call add_" + l},
		)
		for _, k := range []string{"echo_" + l + " ints 0.01 MB", "echoMatrix_" + l + " matrix 0.01 MB"} {
			wants = append(wants,
				want{section: "large data", lang: l, prefix: k, suffix: ": round trip", floor: true},
				want{section: "large data", lang: l, prefix: k, suffix: ": MB/s"},
				want{section: "large data", lang: l, prefix: k, suffix: ": nexus peak RSS", floor: true},
			)
		}
	}
	// The morloc phase: nexus beside morloc 0.69's own nexus and daemon
	// on one compiled program, or one row saying why it was skipped.
	if why := morlocAbsent(); why != "" {
		i := slices.IndexFunc(rows, func(r benchRow) bool { return r.section == "morloc pools" })
		if i < 0 || rows[i].value != "skipped" || !strings.Contains(rows[i].details, "not installed") {
			t.Errorf("morloc is absent (%s), but the morloc section does not say it was skipped: %+v", why, rows[min(max(i, 0), len(rows)-1)])
		}
	} else {
		for _, l := range []struct{ lang, suffix string }{{"py", "Py"}, {"cpp", "Cpp"}} {
			if !slices.Contains(langs, l.lang) {
				continue
			}
			add, div, echo := "add"+l.suffix, "div"+l.suffix, "echo"+l.suffix
			wants = append(wants,
				want{section: "morloc pools", lang: l.lang, prefix: div + " 7 2, one-shot: spawn → result", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: div + " 7 2, one-shot: whole process", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: echo + " 10000 Reals, one-shot: whole process", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: echo + " 10000 Reals, one-shot: nexus peak RSS", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: add + " × ", suffix: " over MCP stdio, warm: p50", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: add + " × ", suffix: " over MCP stdio, warm: nexus CPU/call", zeroOK: true},
				want{section: "morloc pools", lang: l.lang, prefix: add + " × ", suffix: " over HTTP, a connection per call, warm: p50", floor: true},
				want{section: "morloc pools", lang: l.lang, prefix: echo + " 10000 Reals over MCP stdio, warm: round trip"},
				want{section: "morloc pools", lang: l.lang, prefix: echo + " 10000 Reals over MCP stdio, warm: nexus peak RSS", floor: true},
			)
		}
		// Bursts of concurrent calls, to nexus by default and with four
		// workers and to morloc's daemon: their wall time beside the
		// ideal, and the mixed shared-memory calls' throughput and wrong
		// answers (a wrong answer from nexus has already failed the run).
		for _, srv := range []string{"MCP stdio, default workers", "MCP stdio, --workers 4", "HTTP, morloc's daemon"} {
			nexus := !strings.Contains(srv, "daemon")
			wants = append(wants,
				want{section: "morloc pools", lang: "py", prefix: "8 × sleepPy(", suffix: " at once over " + srv + ": wall", floor: true},
				want{section: "morloc pools", lang: "mixed", prefix: "48 mixed shared-memory calls at once over " + srv + ": calls/s", floor: nexus},
				want{section: "morloc pools", lang: "mixed", prefix: "48 mixed shared-memory calls at once over " + srv + ": wrong answers", zeroOK: true},
			)
		}
	}
	for _, w := range wants {
		i := slices.IndexFunc(rows, func(r benchRow) bool {
			return r.section == w.section && r.lang == w.lang && strings.HasPrefix(r.measure, w.prefix) && strings.HasSuffix(r.measure, w.suffix)
		})
		name := w.section + " / " + w.lang + " / " + w.prefix + "…" + w.suffix
		if i < 0 {
			t.Errorf("no row %s", name)
			continue
		}
		r := rows[i]
		v, err := strconv.ParseFloat(r.value, 64)
		switch {
		case err != nil:
			t.Errorf("row %s: value %q is not a number", name, r.value)
		case v < 0 || (v == 0 && !w.zeroOK):
			t.Errorf("row %s: value %v, want > 0", name, v)
		}
		if w.floor {
			if f, err := strconv.ParseFloat(r.floor, 64); err != nil || f <= 0 {
				t.Errorf("row %s: floor %q, want a positive number", name, r.floor)
			}
		}
	}
	if t.Failed() {
		t.Logf("the table:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

type benchRow struct{ section, lang, measure, value, unit, floor, vs, details string }

// parseBenchTable reads the driver's Markdown table: a header row, a
// separator, then one row per line.
func parseBenchTable(t *testing.T, out string) []benchRow {
	t.Helper()
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "|") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 {
		t.Errorf("no table in the output:\n%s", out)
		return nil
	}
	cells := func(l string) []string {
		parts := strings.Split(strings.Trim(l, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	if h := cells(lines[0]); !slices.Equal(h, []string{"section", "lang", "measure", "value", "unit", "floor", "vs floor", "details"}) {
		t.Errorf("table header %q", h)
		return nil
	}
	var rows []benchRow
	for _, l := range lines[2:] {
		c := cells(l)
		if len(c) != 8 {
			t.Errorf("table row with %d cells, want 8: %q", len(c), l)
			continue
		}
		rows = append(rows, benchRow{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]})
	}
	return rows
}

// morlocAbsent says what of morloc 0.69.0 is not installed ("" when all is):
// the bench driver then skips its morloc rows.
func morlocAbsent() string {
	home, _ := os.UserHomeDir()
	for _, f := range []string{"/opt/morloc-0.69.0/bin/morloc", filepath.Join(home, ".local", "bin", "morloc-nexus"), filepath.Join(home, ".local", "share", "morloc", "lib", "libmorloc.so")} {
		if _, err := os.Stat(f); err != nil {
			return "no " + f
		}
	}
	return ""
}
