package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The scientific program (testdata/scientific) returns what scientific code
// returns: numpy arrays and scalars in Python, R's vectors, matrices,
// factors, data frames and NA, C++'s standard containers, and NaN and the
// infinities everywhere. Each answer must be the declared value, the same in
// every language: over MCP (text and structuredContent) with NaN and
// infinity as "NaN", "Infinity", "-Infinity", and on the CLI as morloc
// prints them, "nan", "inf", "-inf".

var scientificLangs = []string{"py", "r", "cpp"}

// requireScientific skips (under -short) or fails when a pool's language
// is missing: Debian's numpy for /usr/bin/python3, R, or the built C++ pool.
func requireScientific(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		testenv.MissingTool(t, "/usr/bin/python3 has no numpy (Debian: apt-get install python3-numpy; make deps)")
	}
	if why := rAvailable(); why != "" {
		testenv.MissingTool(t, why)
	}
	if _, err := os.Stat(filepath.Join(program("scientific"), "pools", "cpp", "pool-cpp.out")); err != nil {
		testenv.MissingTool(t, "testdata/scientific's C++ pool is not built (needs g++ and nlohmann-json3-dev; run make deps)")
	}
}

type scientificCase struct {
	fn      string   // without the language suffix
	args    string   // MCP arguments
	cliArgs []string // the same on the CLI
	want    string   // MCP text (and structuredContent for a record)
	cli     string   // CLI stdout, without its newline; want when empty
	record  bool
}

func scientificCases() []scientificCase {
	// ramp(300): 0, 0.5, ... with NaN at 3 and infinity at 5, long enough
	// to travel as an array where the runtime sends one.
	ramp := make([]string, 300)
	cliRamp := make([]string, 300)
	for i := range ramp {
		ramp[i] = fmt.Sprint(float64(i) * 0.5)
		cliRamp[i] = ramp[i]
	}
	ramp[3], ramp[5] = `"NaN"`, `"Infinity"`
	cliRamp[3], cliRamp[5] = `"nan"`, `"inf"`
	// 300 numbers with NaN among them, long enough to travel to the pool
	// as an array, and the same doubled.
	nanRamp, nanRamp2 := make([]string, 300), make([]string, 300)
	for i := range nanRamp {
		nanRamp[i], nanRamp2[i] = fmt.Sprint(i), fmt.Sprint(2*i)
	}
	nanRamp[3], nanRamp2[3] = `"NaN"`, `"NaN"`
	nanRamp[7], nanRamp2[7] = `"-Infinity"`, `"-Infinity"`
	return []scientificCase{
		{fn: "doubled", args: `{"_1":[1,2.5]}`, cliArgs: []string{"[1,2.5]"}, want: `[2,5]`},
		{fn: "count", args: `{"_1":[1,2.5]}`, cliArgs: []string{"[1,2.5]"}, want: `2`},
		{fn: "eye", args: `{"_1":3}`, cliArgs: []string{"3"}, want: `[[1,0,0],[0,1,0],[0,0,1]]`},
		{fn: "one", args: `{}`, want: `[1.5]`},
		{fn: "notANumber", args: `{}`, want: `"NaN"`, cli: `"nan"`},
		{fn: "specials", args: `{}`, want: `[1,"Infinity","-Infinity","NaN"]`, cli: `[1,"inf","-inf","nan"]`},
		{fn: "inRecord", args: `{}`, want: `{"x":"NaN","y":"-Infinity"}`, cli: `{"x":"nan","y":"-inf"}`, record: true},
		{fn: "idReal", args: `{"_1":2.5}`, cliArgs: []string{"2.5"}, want: `2.5`},
		{fn: "ramp", args: `{"_1":8}`, cliArgs: []string{"8"}, want: `[0,0.5,1,"NaN",2,"Infinity",3,3.5]`, cli: `[0,0.5,1,"nan",2,"inf",3,3.5]`},
		{fn: "ramp", args: `{"_1":300}`, cliArgs: []string{"300"}, want: "[" + strings.Join(ramp, ",") + "]", cli: "[" + strings.Join(cliRamp, ",") + "]"},
		{fn: "pair", args: `{}`, want: `["a",1]`},
		{fn: "point", args: `{}`, want: `{"x":1.5,"y":-2}`, record: true},
		{fn: "tags", args: `{}`, want: `["solo"]`},
		{fn: "noInts", args: `{}`, want: `[]`},
		{fn: "noStrs", args: `{}`, want: `[]`},
		{fn: "grid", args: `{}`, want: `[[1,3,5],[2,4,6]]`},
		{fn: "rows", args: `{}`, want: `[{"name":"a","score":0.5},{"name":"b","score":null}]`},
		{fn: "levels", args: `{}`, want: `["lo","hi","lo"]`},
		{fn: "missing", args: `{}`, want: `null`},
		{fn: "tally", args: `{}`, want: `[["a",2]]`},
		{fn: "uniq", args: `{}`, want: `[1,2,3]`},
		{fn: "triple", args: `{}`, want: `[7,8,9]`},
		// NaN in lists of records, in a record holding one, and as arguments
		// where a Real is declared (the schemas admit "NaN", "Infinity",
		// "-Infinity" there).
		{fn: "inRecords", args: `{}`, want: `[{"x":"NaN","y":1.5},{"x":"Infinity","y":"-Infinity"}]`, cli: `[{"x":"nan","y":1.5},{"x":"inf","y":"-inf"}]`},
		{fn: "inCloud", args: `{}`, want: `{"points":[{"x":"NaN","y":0.5},{"x":1,"y":"Infinity"}],"scale":"NaN"}`,
			cli: `{"points":[{"x":"nan","y":0.5},{"x":1,"y":"inf"}],"scale":"nan"}`, record: true},
		{fn: "swap", args: `{"_1":{"x":"NaN","y":-2}}`, cliArgs: []string{`{"x":1.5,"y":-2}`}, want: `{"x":-2,"y":"NaN"}`, cli: `{"x":-2,"y":1.5}`, record: true},
		{fn: "idReal", args: `{"_1":"Infinity"}`, cliArgs: []string{"inf"}, want: `"Infinity"`, cli: `"inf"`},
		{fn: "doubled", args: `{"_1":[1,"NaN","-Infinity"]}`, cliArgs: []string{"[1,2.5]"}, want: `[2,"NaN","-Infinity"]`, cli: `[2,5]`},
		{fn: "doubled", args: `{"_1":[` + strings.Join(nanRamp, ",") + `]}`, cliArgs: []string{"[1,2.5]"}, want: "[" + strings.Join(nanRamp2, ",") + "]", cli: `[2,5]`},
	}
}

// Every function gives its declared value in every language, over MCP
// and on the CLI.
func TestScientificValues(t *testing.T) {
	requireScientific(t)
	s := startServer(t, program("scientific"))
	s.handshake()
	id := 0
	for _, c := range scientificCases() {
		results := s.callInEachLanguage(&id, c.fn, c.args, scientificLangs)
		for _, lang := range scientificLangs {
			name, got := c.fn+"_"+lang, results[lang]
			if got.isError || got.text != c.want {
				t.Errorf("%s %s = %q (isError %v), want %q", name, brief(c.args), brief(got.text), got.isError, brief(c.want))
			}
			if c.record && string(got.structuredContent) != c.want {
				t.Errorf("%s: structuredContent %s, want %s (the same as the text)", name, got.structuredContent, c.want)
			}
		}
		// Byte for byte the same reply in every language, as the fidelity
		// program's.
		sameInEachLanguage(t, c.fn, c.args, results, scientificLangs)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
	// The CLI: one language is enough for the long cases, each process
	// costs a pool's start; the fast tier (-short) runs C++'s alone, whose
	// pool starts in milliseconds.
	for _, c := range scientificCases() {
		for _, lang := range scientificLangs {
			if strings.HasPrefix(c.want, "[0,0.5") && len(c.want) > 100 && lang != "py" {
				continue
			}
			if testing.Short() && lang != "cpp" {
				continue
			}
			name := c.fn + "_" + lang
			want := c.cli
			if want == "" {
				want = c.want
			}
			// --keep-null: a null result (missing_*) prints as null.
			out, errOut, code := runNexus(t, append([]string{"run", program("scientific"), "--keep-null", lang, name}, c.cliArgs...)...)
			if code != 0 || out != want+"\n" {
				t.Errorf("run %s %v: exit %d, stdout %q, stderr %s; want %s", name, c.cliArgs, code, brief(out), brief(errOut), brief(want))
			}
		}
	}
}

// The results whose language's own type says they are not the declared
// type fail the call, naming the mismatch; the others of each language
// come out as their declared type.
func TestScientificLanguageCases(t *testing.T) {
	requireScientific(t)
	s := startServer(t, program("scientific"))
	s.handshake()
	for i, c := range []struct {
		name, want string
		isError    bool
	}{
		{"floatsAsInts_py", "TypeError: the result is a numpy array of float64 where its type says [Int]", true},
		{"named_py", `{"x":1.5,"y":-2}`, false},
		{"squares_py", `[0,1,4]`, false},
		{"scalarFromList_r", "cannot encode the result as JSON: the result is a list where its type says Real", true},
		{"oneRowFrame_r", `{"x":1.5,"y":-2}`, false},
		// pandas (Debian's python3-pandas), imported by the functions themselves.
		{"series_py", `[1.5,2.5,"NaN"]`, false},
		{"frame_py", `[{"x":1.5,"y":-2},{"x":0,"y":1}]`, false},
	} {
		if strings.HasSuffix(c.name, "series_py") || strings.HasSuffix(c.name, "frame_py") {
			if err := exec.Command("/usr/bin/python3", "-c", "import pandas").Run(); err != nil {
				testenv.MissingTool(t, "/usr/bin/python3 has no pandas (Debian: apt-get install python3-pandas; make deps)")
			}
		}
		got := s.callRaw(i+1, c.name, `{}`)
		if got.isError != c.isError || got.text != c.want {
			t.Errorf("%s = %q (isError %v), want %q (isError %v)", c.name, got.text, got.isError, c.want, c.isError)
		}
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// The CLI takes nan, inf and -inf where a Real is declared, as morloc's
// does, and every language gets the number itself.
func TestScientificNonFiniteArguments(t *testing.T) {
	requireScientific(t)
	for _, lang := range scientificLangs {
		if testing.Short() && lang != "cpp" {
			continue // a process per case: the fast tier runs the quickest pool's
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"nan"}, `"nan"`},
			{[]string{"inf"}, `"inf"`},
			{[]string{"-inf"}, `"-inf"`},
			{[]string{"--", "-Infinity"}, `"-inf"`},
		} {
			name := "idReal_" + lang
			out, errOut, code := runNexus(t, append([]string{"run", program("scientific"), lang, name}, c.args...)...)
			if code != 0 || out != c.want+"\n" {
				t.Errorf("run %s %v: exit %d, stdout %q, stderr %s; want %s", name, c.args, code, out, brief(errOut), c.want)
			}
		}
	}
}

// A pool whose manifest says "arrays": "numpy" gets its numeric list
// arguments as ndarrays, small (JSON) and large (an array) alike; what
// numpy cannot hold in that shape stays a list.
func TestScientificNumpyArguments(t *testing.T) {
	requireScientific(t)
	long := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 300), ",") + "]"
	s := startServer(t, program("scientific"))
	s.handshake()
	for i, c := range []struct{ name, args, want string }{
		{"argKinds_npy", `{"_1":[1,2],"_2":[[1,2],[3,4]],"_3":"s"}`, `["ndarray float64 [2]","ndarray int64 [2, 2]","str"]`},
		{"argKinds_npy", `{"_1":` + long + `,"_2":[[1],[2,3]],"_3":"s"}`, `["ndarray float64 [300]","list","str"]`},
		{"argKinds_npy", `{"_1":[],"_2":[],"_3":"s"}`, `["ndarray float64 [0]","ndarray int64 [0, 0]","str"]`},
		{"total_npy", `{"_1":[1,2.5]}`, `3.5`},
		{"total_npy", `{"_1":` + long + `}`, `150`},
	} {
		got := s.callRaw(i+1, c.name, c.args)
		if got.isError || got.text != c.want {
			t.Errorf("%s %s = %q (isError %v), want %q", c.name, brief(c.args), got.text, got.isError, c.want)
		}
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
	out, errOut, code := runNexus(t, "run", program("scientific"), "npy", "argKinds_npy", "[1]", "[[1]]", "x")
	if want := `["ndarray float64 [1]","ndarray int64 [1, 1]","str"]`; code != 0 || out != want+"\n" {
		t.Errorf("run argKinds_npy: exit %d, stdout %q, stderr %s; want %s", code, out, errOut, want)
	}
}
