package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The echo check is what keeps a wrong answer from being reported as fast.
func TestEchoed(t *testing.T) {
	payload := []byte(`[[1.5,2.25],[3,4]]`)
	reply := func(text string, isError bool) []byte {
		b, _ := json.Marshal(text)
		return []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(b) + `}],"isError":` + map[bool]string{true: "true", false: "false"}[isError] + `}}`)
	}
	tests := []struct {
		name, text string
		isError    bool
		ok         bool
	}{
		{"byte for byte", `[[1.5,2.25],[3,4]]`, false, true},
		{"numbers written otherwise", `[[1.5,2.25],[3.0,4e0]]`, false, true},
		{"a number differs", `[[1.5,2.25],[3,5]]`, false, false},
		{"one element short", `[[1.5,2.25],[3]]`, false, false},
		{"one element more", `[[1.5,2.25],[3,4,5]]`, false, false},
		{"the right text in an error", `[[1.5,2.25],[3,4]]`, true, false},
		{"the shape differs", `[1.5,2.25,3,4]`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := echoed(reply(tt.text, tt.isError), payload)
			if (why == "") != tt.ok {
				t.Errorf("echoed(%s) = %q, want ok=%v", tt.text, why, tt.ok)
			}
		})
	}
	if why := echoed([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`), payload); why == "" {
		t.Error("an error reply passed the echo check")
	}
}

// The payloads have the size asked for, are valid JSON of the right shape,
// and are the same for the same seed.
func TestPayloads(t *testing.T) {
	for _, k := range payloadKinds {
		for _, target := range []int{10_000, 1_000_000} {
			a := k.gen(rand.New(rand.NewPCG(1, 2)), target)
			b := k.gen(rand.New(rand.NewPCG(1, 2)), target)
			if !bytes.Equal(a, b) {
				t.Errorf("%s %d: not reproducible", k.name, target)
			}
			if d := float64(len(a))/float64(target) - 1; d < -0.05 || d > 0.05 {
				t.Errorf("%s %d: %d bytes, more than 5%% off", k.name, target, len(a))
			}
			var v any
			if err := json.Unmarshal(a, &v); err != nil {
				t.Fatalf("%s %d: not JSON: %v", k.name, target, err)
			}
			switch k.name {
			case "ints":
				if _, ok := v.([]any)[0].(float64); !ok {
					t.Errorf("ints: first element %v", v.([]any)[0])
				}
			case "matrix":
				rows := v.([]any)
				if len(rows) != len(rows[0].([]any)) {
					t.Errorf("matrix: %d rows of %d, want a square", len(rows), len(rows[0].([]any)))
				}
			}
			// Go's shortest form of every number is the payload's text:
			// what lets the echo check compare bytes.
			again, _ := json.Marshal(v)
			if !bytes.Equal(again, a) {
				t.Errorf("%s %d: Go re-encodes the payload differently", k.name, target)
			}
		}
	}
}

func TestParsePerLang(t *testing.T) {
	p, err := parsePerLang("5000,r=2000", positiveInt)
	if err != nil || p.of("py") != 5000 || p.of("r") != 2000 || p.of("cpp") != 5000 {
		t.Errorf("5000,r=2000: %+v, %v", p, err)
	}
	for _, bad := range []string{"0", "x", "go=3", "r=-1"} {
		if _, err := parsePerLang(bad, positiveInt); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags([]string{"-tiny", "-sizes", "0.5", "-langs", "py,cpp"})
	if err != nil {
		t.Fatal(err)
	}
	// -tiny fills in what is not given; what is given wins.
	if !slices.Equal(c.sizesMB, []float64{0.5}) || c.runs != 1 || c.sleeps != 16 || c.calls.of("py") != 200 || !slices.Equal(c.langs, []string{"py", "cpp"}) {
		t.Errorf("-tiny -sizes 0.5: %+v", c)
	}
	for _, bad := range [][]string{{"-langs", "go"}, {"-skip", "everything"}, {"-sizes", "-1"}, {"-nexus-env", "NOEQUALS"}, {"stray"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestEnvFor(t *testing.T) {
	c := config{nexusEnv: []string{"NEXUS_CPUPROFILE=/tmp/cpu-{run}.out", "A=1"}}
	if got := c.envFor("http"); !slices.Equal(got, []string{"NEXUS_CPUPROFILE=/tmp/cpu-http.out", "A=1"}) {
		t.Errorf("envFor(http) = %q", got)
	}
}

// Every nexus of the large phase has a name of its own, so that a CPU
// profile per process (-nexus-env 'NEXUS_CPUPROFILE=/tmp/cpu-{run}.out')
// is not overwritten by the next size's or the next first call's.
func TestLargeRun(t *testing.T) {
	ints, matrix := payloadKinds[0], payloadKinds[1]
	tests := []struct {
		lang string
		k    payloadKind
		mb   float64
		n    int
		want string
	}{
		{"py", ints, 10, 1, "large-py-ints-10MB"},
		{"py", ints, 10, 3, "large-py-ints-10MB-3"},
		{"cpp", matrix, 0.5, 1, "large-cpp-matrix-0.5MB"},
		{"r", ints, 300, 1, "large-r-ints-300MB"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := largeRun(tt.lang, tt.k, tt.mb, tt.n)
		if got != tt.want {
			t.Errorf("largeRun(%s, %s, %v, %d) = %q, want %q", tt.lang, tt.k.name, tt.mb, tt.n, got, tt.want)
		}
		if seen[got] {
			t.Errorf("largeRun gave %q twice", got)
		}
		seen[got] = true
	}
}

func TestLatencies(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Microsecond)
	}
	l := latencies(d)
	if l.p50 != 50 || l.p90 != 90 || l.p99 != 99 || l.mean != 50.5 || l.n != 100 {
		t.Errorf("latencies(1..100 µs) = %+v", l)
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, []row{
		{section: secMemory, what: "nexus VmRSS", value: 11.5, unit: "MB", floor: none},
		{section: secSmall, lang: "py", what: "add_py × 5: p50", value: 412, unit: "µs", floor: 75, vs: ratio(412, 75)},
		{section: secMorloc, lang: "mixed", what: "wrong answers", text: "1", details: "the first: Error (pool.cpp:224):\r\nError | more\n"},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("table:\n%s", b.String())
	}
	// A pool's message in the details stays in its row and column.
	if n := strings.Count(lines[4], "|"); n != 9 || !strings.Contains(lines[4], "pool.cpp:224): Error / more") {
		t.Errorf("a row of %d bars: %s", n, lines[4])
	}
	// Sections print in their order, not the order rows were added.
	if !strings.Contains(lines[2], "small calls") || !strings.Contains(lines[2], "×5.49") || !strings.Contains(lines[3], "| nexus ") {
		t.Errorf("table:\n%s", b.String())
	}
}

// The machine's busy time grows by at least what this process burns, and
// others() is what is left of it once nexus, the pools and the driver
// are taken out.
func TestMachineTicksAndOthers(t *testing.T) {
	b0, _, err := machineTicks()
	if err != nil {
		t.Fatal(err)
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for x := 0; ; x++ { // burn at least 100 ms of CPU (10 ticks)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		if ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano() >= 100e6 {
			break
		}
	}
	b1, _, err := machineTicks()
	if err != nil {
		t.Fatal(err)
	}
	if b1-b0 < 9 { // a tick of rounding at each end
		t.Errorf("machine busy grew %d ticks while this process used 100 ms", b1-b0)
	}

	for _, c := range []struct {
		d    cpuSample
		want float64
	}{
		{cpuSample{nexus: 300, pool: 200, self: 100, machine: 1000, steal: 0}, 400},
		{cpuSample{nexus: 300, pool: 200, self: 100, machine: 1000, steal: 50}, 450},
		// ticks (nexus, pools) and rusage (self) round apart: never below 0
		{cpuSample{nexus: 600, pool: 300, self: 200, machine: 1000}, 0},
	} {
		if got := c.d.others(); got != c.want {
			t.Errorf("%+v.others() = %v, want %v", c.d, got, c.want)
		}
	}
}

// A size's linearity point is the median of its first calls, figure by
// figure; one call is its own.
func TestMedianPoint(t *testing.T) {
	one := medianPoint(10, 10, []callTime{{ms: 500, nexusMs: 300, others: 0.1}})
	if one != (linPoint{mb: 10, mbps: 20, cpuPerMB: 30, others: 0.1, n: 1}) {
		t.Errorf("one call: %+v", one)
	}
	three := medianPoint(10, 10, []callTime{
		{ms: 1000, nexusMs: 260, others: 0},
		{ms: 400, nexusMs: 600, others: 0.5},
		{ms: 500, nexusMs: 300, others: 0.1},
	})
	// MB/s 10, 25, 20 -> 20; CPU/MB 26, 60, 30 -> 30; others -> 0.1
	if three != (linPoint{mb: 10, mbps: 20, cpuPerMB: 30, others: 0.1, n: 3}) {
		t.Errorf("three calls: %+v", three)
	}
	two := medianPoint(10, 10, []callTime{{ms: 1000, nexusMs: 200}, {ms: 500, nexusMs: 400}})
	if two.mbps != 15 || two.cpuPerMB != 30 {
		t.Errorf("two calls: %+v, want the means of the middle two", two)
	}
}

// interleave drops the untimed round, swaps the order every round and
// stops at the first error.
func TestInterleave(t *testing.T) {
	var order []bool
	round := 0
	ne, fl, err := interleave(3, func(isNexus bool) ([]int, error) {
		order = append(order, isNexus)
		round++
		return []int{round}, nil
	})
	// Round -1: floor, nexus (1, 2); 0: nexus, floor (3, 4); 1: floor,
	// nexus (5, 6); 2: nexus, floor (7, 8).
	if err != nil || !slices.Equal(ne, []int{3, 6, 7}) || !slices.Equal(fl, []int{4, 5, 8}) {
		t.Errorf("nexus %v, floor %v, %v", ne, fl, err)
	}
	if want := []bool{false, true, true, false, false, true, true, false}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	calls := 0
	_, _, err = interleave(3, func(bool) ([]int, error) {
		calls++
		return nil, errors.New("boom")
	})
	if err == nil || calls != 1 {
		t.Errorf("after an error: %v, %d calls", err, calls)
	}
	lat, err := sequential(4, func(i int) error {
		if i == 2 {
			return errors.New("third")
		}
		return nil
	})
	if err == nil || lat != nil {
		t.Errorf("sequential past an error: %v %v", lat, err)
	}
	if lat, err := sequential(3, func(int) error { return nil }); err != nil || len(lat) != 3 {
		t.Errorf("sequential: %v %v", lat, err)
	}
}
