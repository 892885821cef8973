// Command nexus-bench is nexus's benchmark driver (`make bench`).
// It measures a built nexus through its public surface only — the binary,
// MCP on stdio, HTTP — on the bench program (testdata/bench), and in the
// same run the floors that the figures only mean something against on a
// noisy machine: a raw pipe round trip to a trivial child in each language,
// the language's own JSON decode+encode of the same payloads, interpreter
// start-up and resident memory. It prints one Markdown table to stdout
// (progress goes to stderr) and exits 1 if an answer was wrong or a phase
// failed. docs/performance.md says what each row measures.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	if mode := os.Getenv(relayEnv); mode != "" {
		runRelay(mode, os.Args[1:])
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if strings.Contains(err.Error(), "help requested") {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "nexus-bench:", err)
		os.Exit(2)
	}
	b := &bench{cfg: cfg, floors: newFloorSet()}
	if err := b.check(); err != nil {
		fmt.Fprintln(os.Stderr, "nexus-bench:", err)
		os.Exit(2)
	}
	b.run()
	fmt.Println(b.machine())
	fmt.Println()
	writeTable(os.Stdout, b.rows)
	if len(b.notes) > 0 {
		fmt.Println()
		for _, n := range b.notes {
			fmt.Println("- " + n)
		}
	}
	if len(b.failures) > 0 {
		fmt.Fprintf(os.Stderr, "\nnexus-bench: %d failure(s):\n", len(b.failures))
		for _, f := range b.failures {
			fmt.Fprintln(os.Stderr, "  - "+strings.ReplaceAll(f, "\n", "\n    "))
		}
		os.Exit(1)
	}
}

// bench is one run of the driver.
type bench struct {
	cfg   config
	name  string         // the manifest's name: the module in /call/<name>/...
	pools []manifestPool // the manifest's pools
	mids  map[string]int // the manifest's commands' mids, by name
	// programDir is where nexus runs the program's pools: the manifest's
	// build.path, relative to -program.
	programDir string
	rows       []row
	notes      []string // printed under the table
	failures   []string
	floors     *floorSet
	// floorDir holds the floor children (floorsPhase), "" without floors.
	floorDir     string
	payloadCache map[string]*payload
	loadStart    string
	started      time.Time
}

type manifestPool struct {
	lang   string
	exec   []string
	marker string // how its process is recognised (poolMarker)
}

func (b *bench) add(r row) { b.rows = append(b.rows, r) }

// fail records a failed phase or a wrong answer: the run goes on, and the
// driver exits 1 at the end.
func (b *bench) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	progress("FAILED: %s", msg)
	b.failures = append(b.failures, msg)
}

func (b *bench) note(s string) {
	if !slices.Contains(b.notes, s) {
		b.notes = append(b.notes, s)
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "nexus-bench: "+format+"\n", args...)
}

// check fails early, with the fix, when something the run needs is missing.
func (b *bench) check() error {
	if !fileExists(b.cfg.nexus) {
		return fmt.Errorf("nexus binary %s not found: run `make build` or pass -nexus PATH", b.cfg.nexus)
	}
	abs, err := filepath.Abs(b.cfg.nexus)
	if err != nil {
		return err
	}
	b.cfg.nexus = abs
	mf := filepath.Join(b.cfg.program, "manifest.json")
	if err := b.loadProgram(); err != nil {
		return err
	}
	for _, lang := range b.cfg.langs {
		i := slices.IndexFunc(b.pools, func(p manifestPool) bool { return p.lang == lang })
		if i < 0 {
			return fmt.Errorf("%s has no %s pool (leave it out with -langs)", mf, lang)
		}
		switch lang {
		case "cpp":
			bin := filepath.Join(b.cfg.program, b.pools[i].exec[0])
			if !fileExists(bin) {
				return fmt.Errorf("the C++ pool %s is not built: run `make pools` (needs g++ and nlohmann-json3-dev), or leave C++ out with -langs py,r", bin)
			}
		case "r":
			if _, err := lookPath("Rscript"); err != nil {
				return fmt.Errorf("Rscript not found: install R and jsonlite (`make deps`), or leave R out with -langs py,cpp")
			}
		case "py":
			if _, err := lookPath("python3"); err != nil {
				return fmt.Errorf("python3 not found, or leave Python out with -langs")
			}
		}
	}
	return nil
}

// loadProgram reads what the driver needs of the bench program's manifest.
func (b *bench) loadProgram() error {
	mf := filepath.Join(b.cfg.program, "manifest.json")
	raw, err := os.ReadFile(mf)
	if err != nil {
		return fmt.Errorf("reading the bench program: %w (pass -program DIR)", err)
	}
	var m struct {
		Name  string `json:"name"`
		Build struct {
			Path string `json:"path"`
		} `json:"build"`
		Pools []struct {
			Lang string   `json:"lang"`
			Exec []string `json:"exec"`
		} `json:"pools"`
		Commands []struct {
			Name string `json:"name"`
			Mid  int    `json:"mid"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", mf, err)
	}
	b.name = m.Name
	b.pools = nil
	for _, p := range m.Pools {
		b.pools = append(b.pools, manifestPool{lang: p.Lang, exec: p.Exec, marker: poolMarker(p.Exec)})
	}
	b.mids = map[string]int{}
	for _, c := range m.Commands {
		b.mids[c.Name] = c.Mid
	}
	dir := m.Build.Path
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(b.cfg.program, dir)
	}
	b.programDir, err = filepath.Abs(dir)
	return err
}

func (b *bench) run() {
	start := time.Now()
	b.started, b.loadStart = start, loadAverage()
	phases := []struct {
		name string
		skip bool
		fn   func()
	}{
		{"floors", b.cfg.skip["floors"], b.floorsPhase},
		{"start-up", b.cfg.skip["startup"], b.startupPhase},
		{"small calls, memory, concurrency", b.cfg.skip["small"] && b.cfg.skip["memory"] && b.cfg.skip["concurrency"], b.sessionPhases},
		{"large data", b.cfg.skip["large"], b.largePhase},
		{"numpy", b.cfg.skip["numpy"], b.numpyPhase},
		{"HTTP", b.cfg.skip["http"], b.httpPhase},
		{"morloc pools", b.cfg.skip["morloc"], b.morlocPhase},
	}
	for _, ph := range phases {
		if ph.skip {
			continue
		}
		t0 := time.Now()
		ph.fn()
		progress("%s: done in %.1f s", ph.name, time.Since(t0).Seconds())
	}
	progress("all done in %.1f s", time.Since(start).Seconds())
}

// payload is one argument of the large-data phase; file holds the same
// bytes for the JSON floor.
type payload struct {
	kind payloadKind
	mb   float64
	data []byte
	file string
}

func (p payload) label() string { return p.kind.name + " " + mbLabel(p.mb) + " MB" }

func mbLabel(mb float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", mb), "0"), ".")
}

// latency is a latency distribution, in µs.
type latency struct {
	p50, p90, p99, mean float64
	n                   int
}

func latencies(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	// Nearest rank: the smallest value with at least p% of them at or below it.
	at := func(p float64) float64 {
		i := int(float64(len(s))*p/100+0.999999) - 1
		return us(s[min(max(i, 0), len(s)-1)])
	}
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	return latency{p50: at(50), p90: at(90), p99: at(99), mean: us(sum) / float64(len(s)), n: len(s)}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return none
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mb(n int64) float64         { return float64(n) / 1e6 }
