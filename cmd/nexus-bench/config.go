package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Phases, as -skip names them, in the order they run.
var allPhases = []string{"floors", "startup", "small", "memory", "concurrency", "large", "numpy", "http", "morloc"}

var allLangs = []string{"py", "r", "cpp"}

type config struct {
	nexus, program string
	langs          []string
	sizesMB        []float64
	calls          perLang[int]
	maxMB          perLang[float64]
	sleeps         int // -concurrent: sleep calls in the concurrency phase
	inflight       int
	sleepMs        int
	runs, runsBig  int
	startupRuns    int
	httpTime       time.Duration
	httpConns      int
	skip           map[string]bool
	nexusEnv       []string
	callTimeout    time.Duration
	maxCallTime    time.Duration
	verbose        bool
	tiny           bool
	// The morloc phase (docs/performance.md, "morloc pools").
	morlocProgram  string // "": morloc-0.69/bench beside -program
	morlocElements int
	morlocRuns     int
	morlocWorkers  int // --workers of the second nexus the bursts go to
	morlocSleeps   int
	morlocSleepMs  int
	morlocMixed    int
}

// bigMB is where -runs-big takes over from -runs: such payloads take long.
const bigMB = 50

// perLang is a value with per-language overrides: "5000,r=2000".
type perLang[T int | float64] struct {
	all    T
	byLang map[string]T
	set    bool // the flag had a value for all languages
}

func (p perLang[T]) of(lang string) T {
	if v, ok := p.byLang[lang]; ok {
		return v
	}
	return p.all
}

func parsePerLang[T int | float64](s string, parse func(string) (T, error)) (perLang[T], error) {
	p := perLang[T]{byLang: map[string]T{}}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lang, val, ok := strings.Cut(part, "=")
		if !ok {
			v, err := parse(part)
			if err != nil {
				return p, fmt.Errorf("%q: %w", part, err)
			}
			p.all, p.set = v, true
			continue
		}
		if !slices.Contains(allLangs, lang) {
			return p, fmt.Errorf("%q: unknown language %q (py, r, cpp)", part, lang)
		}
		v, err := parse(val)
		if err != nil {
			return p, fmt.Errorf("%q: %w", part, err)
		}
		p.byLang[lang] = v
	}
	return p, nil
}

func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive integer")
	}
	return n, nil
}

func positiveFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) {
		return 0, errors.New("want a positive number")
	}
	return f, nil
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// envFor is the extra environment of the nexus process named run (session,
// large-py-ints-10MB, http, startup-py-1, ...): every -nexus-env value, with
// {run} replaced by that name, so that each process can write a file of
// its own (NEXUS_CPUPROFILE=/tmp/cpu-{run}.out).
func (c *config) envFor(run string) []string {
	var env []string
	for _, kv := range c.nexusEnv {
		env = append(env, strings.ReplaceAll(kv, "{run}", run))
	}
	return env
}

// mainRun names the stdio session of the small-call, memory and
// concurrency phases.
const mainRun = "session"

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("nexus-bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: nexus-bench [flags]\n\n"+
			"Measures a built nexus through its public surface (stdio MCP and HTTP) on\n"+
			"the bench program, beside floors measured in the same run, and prints one\n"+
			"table (docs/performance.md). Build first: make build pools.\n\nflags:\n")
		fs.PrintDefaults()
	}
	var c config
	var langs, sizes, calls, maxMB, skip string
	var env multiFlag
	fs.StringVar(&c.nexus, "nexus", "bin/nexus", "the nexus binary to measure")
	fs.StringVar(&c.program, "program", "testdata/bench", "the bench program (a directory holding manifest.json)")
	fs.StringVar(&langs, "langs", "py,r,cpp", "pool languages to measure")
	fs.StringVar(&sizes, "sizes", "1,10,100,300", "large-data payloads, in MB (10^6 bytes) of JSON")
	fs.StringVar(&calls, "calls", "5000,r=2000", "sequential small calls per language: N, or N,lang=N,...")
	fs.StringVar(&maxMB, "max-mb", "", "largest payload per language, e.g. r=10: larger sizes are skipped for it")
	fs.IntVar(&c.sleeps, "concurrent", 256, "sleep calls in the concurrency phase")
	fs.IntVar(&c.inflight, "inflight", 32, "calls in flight at once in the concurrency phase")
	fs.IntVar(&c.sleepMs, "sleep-ms", 20, "how long each sleep call sleeps")
	fs.IntVar(&c.runs, "runs", 3, "runs of each large-data size below 50 MB (the best is reported)")
	fs.IntVar(&c.runsBig, "runs-big", 1, "runs of each large-data size of 50 MB and more")
	fs.IntVar(&c.startupRuns, "startup-runs", 5, "spawns per language in the start-up phase (the median is reported)")
	fs.DurationVar(&c.httpTime, "http-time", 3*time.Second, "how long each HTTP case runs")
	fs.IntVar(&c.httpConns, "http-conns", 32, "concurrent HTTP clients (keep-alive connections)")
	fs.StringVar(&skip, "skip", "", "phases to leave out: "+strings.Join(allPhases, ","))
	fs.Var(&env, "nexus-env", "KEY=VAL in the environment of every nexus the driver starts (repeatable); {run} in it becomes the process's name: session, large-<lang>-<kind>-<mb>MB[-<n>], http, startup-<lang>-<n>")
	fs.DurationVar(&c.maxCallTime, "max-call-time", time.Minute, "skip a large-data size when the size below it predicts a longer call than this (nexus is slow today)")
	fs.DurationVar(&c.callTimeout, "call-timeout", 10*time.Minute, "longest a single call or phase step may take before nexus is killed and the phase fails")
	fs.StringVar(&c.morlocProgram, "morloc-program", "", "the morloc 0.69 bench program's sources (default: morloc-0.69/bench beside -program)")
	fs.IntVar(&c.morlocElements, "morloc-elements", 1_000_000, "Reals in the morloc phase's large list")
	fs.IntVar(&c.morlocRuns, "morloc-runs", 5, "runs of each one-shot command in the morloc phase, by each nexus (the median is reported)")
	fs.IntVar(&c.morlocWorkers, "morloc-workers", 4, "--workers of the second nexus that the morloc phase's bursts go to")
	fs.IntVar(&c.morlocSleeps, "morloc-sleeps", 8, "sleep calls sent at once in the morloc phase")
	fs.IntVar(&c.morlocSleepMs, "morloc-sleep-ms", 300, "how long each of the morloc phase's sleep calls sleeps")
	fs.IntVar(&c.morlocMixed, "morloc-mixed", 48, "mixed shared-memory calls sent at once in the morloc phase")
	fs.BoolVar(&c.tiny, "tiny", false, "a configuration that runs in seconds (make test): few calls, 10 KB payloads, one run; flags given explicitly still win")
	fs.BoolVar(&c.verbose, "v", false, "copy nexus's stderr to stderr")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q (everything is a flag)", fs.Args())
	}
	if c.tiny {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		tiny := map[string]func(){
			// Enough calls that CPU time shows at 10 ms ticks under -race.
			"calls":           func() { calls = "200,r=100" },
			"concurrent":      func() { c.sleeps = 16 },
			"sizes":           func() { sizes = "0.01" },
			"runs":            func() { c.runs = 1 },
			"startup-runs":    func() { c.startupRuns = 1 },
			"http-time":       func() { c.httpTime = 300 * time.Millisecond },
			"morloc-elements": func() { c.morlocElements = 10_000 },
			"morloc-runs":     func() { c.morlocRuns = 1 },
			"morloc-sleep-ms": func() { c.morlocSleepMs = 100 },
		}
		for name, apply := range tiny {
			if !set[name] {
				apply()
			}
		}
	}
	c.nexusEnv = env
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return c, fmt.Errorf("-nexus-env %q: want KEY=VALUE", kv)
		}
	}
	for l := range strings.SplitSeq(langs, ",") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !slices.Contains(allLangs, l) {
			return c, fmt.Errorf("-langs: unknown language %q (py, r, cpp)", l)
		}
		if !slices.Contains(c.langs, l) {
			c.langs = append(c.langs, l)
		}
	}
	if len(c.langs) == 0 {
		return c, errors.New("-langs: no language")
	}
	for s := range strings.SplitSeq(sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		f, err := positiveFloat(s)
		if err != nil {
			return c, fmt.Errorf("-sizes %q: %w", s, err)
		}
		c.sizesMB = append(c.sizesMB, f)
	}
	var err error
	if c.calls, err = parsePerLang(calls, positiveInt); err != nil {
		return c, fmt.Errorf("-calls: %w", err)
	}
	if !c.calls.set {
		return c, errors.New("-calls: give a count for every language (N or N,lang=N)")
	}
	if c.maxMB, err = parsePerLang(maxMB, positiveFloat); err != nil {
		return c, fmt.Errorf("-max-mb: %w", err)
	}
	c.skip = map[string]bool{}
	for s := range strings.SplitSeq(skip, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(allPhases, s) {
			return c, fmt.Errorf("-skip: unknown phase %q (%s)", s, strings.Join(allPhases, ", "))
		}
		c.skip[s] = true
	}
	for name, v := range map[string]int{"-concurrent": c.sleeps, "-inflight": c.inflight, "-sleep-ms": c.sleepMs, "-runs": c.runs, "-runs-big": c.runsBig, "-startup-runs": c.startupRuns, "-http-conns": c.httpConns, "-morloc-elements": c.morlocElements, "-morloc-runs": c.morlocRuns,
		"-morloc-workers": c.morlocWorkers, "-morloc-sleeps": c.morlocSleeps, "-morloc-sleep-ms": c.morlocSleepMs, "-morloc-mixed": c.morlocMixed} {
		if v <= 0 {
			return c, fmt.Errorf("%s: want a positive integer, got %d", name, v)
		}
	}
	return c, nil
}

// maxFor is the largest payload lang takes, +Inf-like when unlimited.
func (c *config) maxFor(lang string) float64 {
	if v := c.maxMB.of(lang); v > 0 {
		return v
	}
	return 1e18
}

func (c *config) runsFor(mb float64) int {
	if mb >= bigMB {
		return c.runsBig
	}
	return c.runs
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
