package pool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of testdata/cpp/pool.cpp.
const (
	cppAddOne = iota + 1
	cppEchoU64
	cppEchoI8
	cppEchoU16
	cppEchoInt
	cppEchoDouble
	cppEchoFloat
	cppShout
	cppNegate
	cppSumVec
	cppReverseStrings
	cppEchoMatrix
	cppSwapPair
	cppEchoPair
	cppRotate3
	cppMaybeDouble
	cppDoubleValues
	cppIntKeys
	cppOlder
	cppEchoTeam
	cppEchoSample
	cppFail
	cppFailOther
	cppWaitCancel
	cppLastEvent
	cppSleepMs
	cppProgressSteps
	cppCrash
	cppNotANumber
	cppBadUTF8
	cppChatty
	cppNothing
	cppReverseBytes
	cppWrapJSON
	cppPID
	cppLambda
	cppStdFunction
	cppFdsInherited
	cppPlot
	cppBlocksOnly
	cppAddInts
	cppEchoI64s
	cppEchoInts
	cppEchoDoubles
	cppEchoFloats
	cppEchoGrid
	cppEchoIntGrid
	cppEchoSeries
	cppEchoU64s
	cppEchoCube
	cppEchoBools
	cppEchoMaybeDoubles
	cppMixArgs
	cppMakeGrid
	cppWithNonFinite
	cppThreadCount
	cppMeet
	cppPoolMids = iota // how many functions pool.cpp has
)

// TestCppPool builds testdata/cpp/pool.cpp against runtime/cpp/nexus.hpp
// once, with the build line runtime/cpp/nexus.hpp gives (plus warnings as
// errors), and runs it through the real Set.
func TestCppPool(t *testing.T) {
	exe := buildCppTestPool(t)
	t.Run("values", func(t *testing.T) { testCppValues(t, exe) })
	t.Run("conversion errors", func(t *testing.T) { testCppConversionErrors(t, exe) })
	t.Run("function errors", func(t *testing.T) { testCppFunctionErrors(t, exe) })
	t.Run("calls run concurrently", func(t *testing.T) { testCppConcurrency(t, exe) })
	t.Run("cancel", func(t *testing.T) { testCppCancel(t, exe) })
	t.Run("progress and log", func(t *testing.T) { testCppProgressAndLog(t, exe) })
	t.Run("content results", func(t *testing.T) { testCppContent(t, exe) })
	t.Run("segfault", func(t *testing.T) { testCppSegfault(t, exe) })
	t.Run("stdout stays off the protocol", func(t *testing.T) { testCppOutput(t, exe) })
	t.Run("shutdown does not wait for calls", func(t *testing.T) { testCppShutdown(t, exe) })
	t.Run("refuses to run standalone", func(t *testing.T) { testCppStandalone(t, exe) })
}

// buildCppTestPool compiles the test pool into the test's temporary
// directory, skipping the test when there is no g++ or nlohmann/json.
func buildCppTestPool(t testing.TB) string {
	t.Helper()
	return buildCppProgram(t, "pool.cpp")
}

// buildCppProgram compiles testdata/cpp/<name> with the build line
// runtime/cpp/nexus.hpp gives (plus warnings as errors).
func buildCppProgram(t testing.TB, name string) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		testenv.MissingTool(t, "g++ is not installed")
	}
	probe := exec.Command(gxx, "-std=c++17", "-fsyntax-only", "-x", "c++", "-")
	probe.Stdin = strings.NewReader("#include <nlohmann/json.hpp>\n")
	if out, err := probe.CombinedOutput(); err != nil {
		testenv.MissingTool(t, fmt.Sprintf("nlohmann/json is not installed (nlohmann-json3-dev): %v\n%s", err, out))
	}
	runtimeDir, err := filepath.Abs(filepath.Join("runtime", "cpp"))
	if err != nil {
		t.Fatal(err)
	}
	source, err := filepath.Abs(filepath.Join("testdata", "cpp", name))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=c++17", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-I" + runtimeDir, source}
	cppBuilds.Lock()
	defer cppBuilds.Unlock()
	exe, key, err := cachedCppBuild(gxx, args, runtimeDir, source)
	if err != nil {
		t.Fatalf("the C++ build cache: %v", err)
	}
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	// Built afresh: to a temporary name beside the cache entry, renamed
	// when whole, so that a build cut short is never taken for one.
	tmp := exe + ".tmp-" + key[:8]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, gxx, append(args, "-o", tmp)...)
	if out, err := build.CombinedOutput(); err != nil {
		os.Remove(tmp)
		t.Fatalf("building the C++ test program %s: %v\n%s", name, err, out)
	}
	if err := os.Rename(tmp, exe); err != nil {
		t.Fatal(err)
	}
	return exe
}

// userCacheDir is the user's cache directory, as it was before TestMain
// pointed XDG_CACHE_HOME at a temporary one.
var userCacheDir string

// cppBuilds serialises C++ test builds: two tests that need the same
// program build it once.
var cppBuilds sync.Mutex

// cachedCppBuild is where the program that args build is kept between
// test runs: a g++ -O2 build of a test pool takes 10-20 s here, more than
// the tests that use it. The key covers everything the build reads that
// can change: g++'s version, the flags, the source, every file of the
// runtime, and nlohmann/json's header (by size and time). It names the
// files by their place in the repository, not on disk, so that a copy of
// the repository (scripts/self-contained.sh) reuses the builds.
func cachedCppBuild(gxx string, args []string, runtimeDir, source string) (exe, key string, err error) {
	h := sha256.New()
	version, err := exec.Command(gxx, "--version").Output()
	if err != nil {
		return "", "", err
	}
	h.Write(version)
	inRepo := strings.NewReplacer(runtimeDir, "runtime/cpp", source, "testdata/cpp/"+filepath.Base(source))
	for _, a := range args {
		fmt.Fprintf(h, "%q\n", inRepo.Replace(a))
	}
	files := []string{source}
	entries, err := os.ReadDir(runtimeDir)
	if err != nil {
		return "", "", err
	}
	for _, e := range entries {
		files = append(files, filepath.Join(runtimeDir, e.Name()))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(h, "%s %d\n", inRepo.Replace(f), len(b))
		h.Write(b)
	}
	for _, dir := range []string{"/usr/include", "/usr/local/include"} {
		if fi, err := os.Stat(filepath.Join(dir, "nlohmann", "json.hpp")); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", dir, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	key = hex.EncodeToString(h.Sum(nil))
	base := userCacheDir
	if base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "nexus-test", "cpp", key[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	return filepath.Join(dir, strings.TrimSuffix(filepath.Base(source), ".cpp")+"-cpp.out"), key, nil
}

// cppTestPool runs a C++ pool; its calls take their arguments as one JSON
// array.
type cppTestPool struct{ *poolUnderTest }

func startCppPool(t *testing.T, exe string, opts Options) *cppTestPool {
	t.Helper()
	return &cppTestPool{startPoolUnderTest(t, Spec{Index: 0, Lang: "cpp", Exec: []string{exe}, Dir: filepath.Dir(exe)}, opts, 30*time.Second)}
}

// cppArgs splits a JSON array into one raw argument per element, keeping
// each element's text exactly.
func cppArgs(t *testing.T, array string) []json.RawMessage {
	t.Helper()
	var args []json.RawMessage
	if err := json.Unmarshal([]byte(array), &args); err != nil {
		t.Fatalf("test arguments %s: %v", array, err)
	}
	return args
}

func (p *cppTestPool) call(t *testing.T, mid int, args string, h Hooks) (json.RawMessage, error) {
	t.Helper()
	return p.callRaw(t, mid, cppArgs(t, args), h)
}

func (p *cppTestPool) mustCall(t *testing.T, mid int, args string) string {
	t.Helper()
	return string(p.mustCallRaw(t, mid, cppArgs(t, args)))
}

func (p *cppTestPool) pid(t *testing.T) int {
	t.Helper()
	return p.pidOf(t, cppPID)
}

func testCppValues(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	long := "[" + strings.TrimSuffix(strings.Repeat("1,", 100000), ",") + "]"
	tests := []struct {
		name string
		mid  int
		args string // a JSON array: one element per argument
		want string // the exact JSON text returned
	}{
		{"int64 past 2^53", cppAddOne, `[9007199254740993]`, `9007199254740994`},
		{"int64 near its minimum", cppAddOne, `[-9223372036854775807]`, `-9223372036854775806`},
		{"uint64 maximum", cppEchoU64, `[18446744073709551615]`, `18446744073709551615`},
		{"int8 minimum", cppEchoI8, `[-128]`, `-128`},
		{"uint16 maximum", cppEchoU16, `[65535]`, `65535`},
		{"a whole double is an integer", cppEchoInt, `[3.0]`, `3`},
		{"double 0.1", cppEchoDouble, `[0.1]`, `0.1`},
		{"double 1e308", cppEchoDouble, `[1e308]`, `1e+308`},
		{"smallest subnormal", cppEchoDouble, `[5e-324]`, `5e-324`},
		{"largest double", cppEchoDouble, `[1.7976931348623157e308]`, `1.7976931348623157e+308`},
		{"an integer as a double", cppEchoDouble, `[2]`, `2.0`},
		{"float 0.1 keeps its short form", cppEchoFloat, `[0.1]`, `0.1`},
		{"unicode string", cppShout, `["héllo wörld 🎲"]`, `"héllo wörld 🎲!"`},
		{"escapes in a string", cppShout, `["a\"b\\c\n\u0000"]`, `"a\"b\\c\n\u0000!"`},
		{"bool", cppNegate, `[true]`, `false`},
		{"empty vector", cppSumVec, `[[]]`, `0`},
		{"vector", cppSumVec, `[[1,2,3]]`, `6`},
		{"vector of 100000", cppSumVec, "[" + long + "]", `100000`},
		{"vector of strings", cppReverseStrings, `[["a","b","c"]]`, `["c","b","a"]`},
		{"empty vector of strings", cppReverseStrings, `[[]]`, `[]`},
		{"nested vectors", cppEchoMatrix, `[[[1],[],[2,3]]]`, `[[1],[],[2,3]]`},
		{"tuple", cppSwapPair, `[["a",1]]`, `[1,"a"]`},
		{"pair", cppEchoPair, `[[true,0.5]]`, `[true,0.5]`},
		{"std::array", cppRotate3, `[[1,2,3]]`, `[2,3,1]`},
		{"optional null", cppMaybeDouble, `[null]`, `null`},
		{"optional present", cppMaybeDouble, `[21]`, `42`},
		{"string-keyed map as an object", cppDoubleValues, `[{"b":2,"a":1}]`, `{"a":2,"b":4}`},
		{"empty map", cppDoubleValues, `[{}]`, `{}`},
		{"string-keyed map as pairs", cppDoubleValues, `[[["a",1]]]`, `{"a":2}`},
		{"int-keyed map as pairs", cppIntKeys, `[[[2,"y"],[1,"x"]]]`, `[[1,"x"],[2,"y"]]`},
		{"struct", cppOlder, `[{"name":"Al","age":40}]`, `{"name":"Al","age":41}`},
		{"struct ignores unknown fields", cppOlder, `[{"age":1,"name":"B","extra":[1]}]`, `{"name":"B","age":2}`},
		{"nested struct", cppEchoTeam,
			`[{"name":"T","members":[{"name":"A","age":1},{"name":"B","age":2}],"lead":{"name":"L","age":3},"scores":{"x":1.5}}]`,
			`{"name":"T","members":[{"name":"A","age":1},{"name":"B","age":2}],"lead":{"name":"L","age":3},"scores":{"x":1.5}}`},
		{"nested struct without its optional field", cppEchoTeam,
			`[{"name":"T","members":[],"scores":{}}]`,
			`{"name":"T","members":[],"lead":null,"scores":{}}`},
		{"struct of numbers", cppEchoSample, `[{"value":1.5,"weight":0.1,"level":-3}]`, `{"value":1.5,"weight":0.1,"level":-3}`},
		{"void", cppNothing, `[]`, `null`},
		{"bytes as base64", cppReverseBytes, `["AQID"]`, `"AwIB"`},
		{"empty bytes", cppReverseBytes, `[""]`, `""`},
		{"nlohmann::json passes through", cppWrapJSON, `[{"z":1,"a":[2,null]}]`, `{"got":{"a":[2,null],"z":1}}`},
		{"lambda with a capture", cppLambda, `[1]`, `1001`},
		{"std::function", cppStdFunction, `[1,2]`, `3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.mustCall(t, tt.mid, tt.args); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func testCppConversionErrors(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	tests := []struct {
		name string
		mid  int
		args string
		want string // the CallError's message
	}{
		{"int8 too large", cppEchoI8, `[300]`, "argument 1: 300 does not fit in int8_t"},
		{"int8 too small", cppEchoI8, `[-129]`, "argument 1: -129 does not fit in int8_t"},
		{"int32 too large", cppEchoInt, `[2147483648]`, "argument 1: 2147483648 does not fit in int32_t"},
		{"negative uint64", cppEchoU64, `[-1]`, "argument 1: -1 does not fit in uint64_t"},
		{"past uint64", cppEchoU64, `[18446744073709551616]`, "argument 1: 1.8446744073709552e+19 does not fit in uint64_t"},
		{"uint16 too large", cppEchoU16, `[65536]`, "argument 1: 65536 does not fit in uint16_t"},
		{"a fraction for an integer", cppEchoInt, `[2.5]`, "argument 1: expected an integer (int32_t), got 2.5"},
		{"a string for an integer", cppEchoInt, `["x"]`, `argument 1: expected an integer (int32_t), got the string "x"`},
		{"float out of range", cppEchoFloat, `[1e300]`, "argument 1: 1e+300 does not fit in float"},
		{"a string for a double", cppEchoDouble, `["1"]`, `argument 1: expected a number (double), got the string "1"`},
		{"a number for a string", cppShout, `[1]`, "argument 1: expected a string, got 1"},
		{"a number for a bool", cppNegate, `[0]`, "argument 1: expected a boolean, got 0"},
		{"null for a bool", cppNegate, `[null]`, "argument 1: expected a boolean, got null"},
		{"an object for a vector", cppSumVec, `[{"a":1}]`, "argument 1: expected an array (vector<int64_t>), got an object"},
		{"a bad element", cppSumVec, `[[1,"a"]]`, `argument 1 at [1]: expected an integer (int64_t), got the string "a"`},
		{"a tuple too long", cppSwapPair, `[["a",1,2]]`, "argument 1: expected an array of 2 (tuple<string, int32_t>), got an array of 3"},
		{"a bad tuple element", cppSwapPair, `[[1,"a"]]`, "argument 1 at [0]: expected a string, got 1"},
		{"std::array too short", cppRotate3, `[[1,2]]`, "argument 1: expected an array of 3 (array<int32_t, 3>), got an array of 2"},
		{"a bad optional", cppMaybeDouble, `["x"]`, `argument 1: expected an integer (int32_t), got the string "x"`},
		{"a bad map value", cppDoubleValues, `[{"a":"x"}]`, `argument 1 at ["a"]: expected an integer (int32_t), got the string "x"`},
		{"a string for a map", cppDoubleValues, `["x"]`, `argument 1: expected an object (map<string, int32_t>), got the string "x"`},
		{"a bad pair", cppIntKeys, `[[[1]]]`, "argument 1 at [0]: expected a [key, value] array, got an array of 1"},
		{"a bad key", cppIntKeys, `[[["1","x"]]]`, `argument 1 at [0][0]: expected an integer (int32_t), got the string "1"`},
		{"a missing field", cppOlder, `[{"name":"Al"}]`, `argument 1: missing field "age" of Person`},
		{"an array for a struct", cppOlder, `[[]]`, "argument 1: expected an object (Person), got an array of 0"},
		{"a bad nested field", cppEchoTeam, `[{"name":"T","members":[{"name":"A","age":1},{"name":"B","age":"x"}],"scores":{}}]`,
			`argument 1 at .members[1].age: expected an integer (int32_t), got the string "x"`},
		{"a sized field", cppEchoSample, `[{"value":1,"weight":1,"level":200}]`, "argument 1 at .level: 200 does not fit in int8_t"},
		{"bad base64", cppReverseBytes, `["abc"]`, "argument 1: not base64: the length is not a multiple of 4"},
		{"the second argument", cppStdFunction, `[1,"x"]`, `argument 2: expected an integer (int32_t), got the string "x"`},
		{"too many arguments", cppAddOne, `[1,2]`, "expected 1 argument, got 2"},
		{"too few arguments", cppStdFunction, `[1]`, "expected 2 arguments, got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.call(t, tt.mid, tt.args, Hooks{})
			ce := callError(t, err)
			if ce.Message != tt.want {
				t.Errorf("message %q, want %q", ce.Message, tt.want)
			}
		})
	}
}

func testCppFunctionErrors(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	tests := []struct {
		name          string
		mid           int
		args          string
		wantMessage   string
		wantTraceback string
	}{
		{"std::exception", cppFail, `["bad AC"]`, "boom: bad AC", "C++ exception of type std::invalid_argument"},
		{"not a std::exception", cppFailOther, `[]`, "unknown C++ exception", ""},
		{"result not UTF-8", cppBadUTF8, `[]`, "result: a string is not valid UTF-8 (invalid UTF-8 byte at index 3: 0xFF)", ""},
		{"unknown mid", 99, `[]`, unknownMid(99, cppPoolMids), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.call(t, tt.mid, tt.args, Hooks{})
			ce := callError(t, err)
			if ce.Message != tt.wantMessage {
				t.Errorf("message %q, want %q", ce.Message, tt.wantMessage)
			}
			if ce.Traceback != tt.wantTraceback {
				t.Errorf("traceback %q, want %q", ce.Traceback, tt.wantTraceback)
			}
			if ce.Lang != "cpp" {
				t.Errorf("Lang %q, want cpp", ce.Lang)
			}
		})
	}
	if got := p.mustCall(t, cppAddOne, `[1]`); got != "2" {
		t.Errorf("after the errors, addOne(1) = %s", got)
	}
	// NaN is no error: it goes as the wire's string (docs/internals.md, "Values").
	if got := p.mustCall(t, cppNotANumber, `[]`); got != `"NaN"` {
		t.Errorf("notANumber() = %s, want \"NaN\"", got)
	}
}

// startedHooks reports, through the channel, the call's first progress
// message: the test pool's slow functions send one as they start.
func testCppConcurrency(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := p.startCall(t, ctx, cppSleepMs, cppArgs(t, `[20000]`))
	began := time.Now()
	if got := p.mustCall(t, cppAddOne, `[41]`); got != "42" {
		t.Errorf("addOne(41) = %s", got)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the fast call took %s", took)
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow call returned before the fast one: %v", err)
	default:
	}
	cancel()
	waitCancelled(t, slow)
}

func testCppCancel(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	tests := []struct {
		name  string
		mid   int
		event string // what lastEvent reports once the function has seen the cancel
	}{
		{"nexus::cancelled() turns true", cppWaitCancel, "wait cancelled after "},
		{"nexus::sleep_for throws nexus::Cancelled", cppSleepMs, "sleep cancelled after "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := p.startCall(t, ctx, tt.mid, cppArgs(t, `[60000]`))
			cancel()
			waitCancelled(t, done)
			var event string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if event = p.mustCall(t, cppLastEvent, `[]`); strings.Contains(event, tt.event) {
					break
				}
			}
			ms, found := strings.CutPrefix(strings.Trim(event, `"`), tt.event)
			if !found {
				t.Fatalf("lastEvent = %s, want %q...: the function did not see the cancel", event, tt.event)
			}
			if n, err := strconv.Atoi(strings.TrimSuffix(ms, "ms")); err != nil || n > 10000 {
				t.Errorf("lastEvent = %s: the function ran on long after the cancel", event)
			}
		})
	}
}

func testCppProgressAndLog(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	type report struct {
		progress, total float64
		message         string
	}
	var reports []report
	var logs []string
	h := Hooks{
		Progress: func(progress float64, total *float64, message string) {
			r := report{progress: progress, total: -1, message: message}
			if total != nil {
				r.total = *total
			}
			reports = append(reports, r)
		},
		Log: func(level string, data json.RawMessage) { logs = append(logs, level+" "+string(data)) },
	}
	v, err := p.call(t, cppProgressSteps, `[3]`, h)
	if err != nil || string(v) != "3" {
		t.Fatalf("progressSteps(3) = %s, %v", v, err)
	}
	wantReports := []report{{1, 3, "step 1 of 3"}, {2, 3, "step 2 of 3"}, {3, 3, "step 3 of 3"}}
	if len(reports) != len(wantReports) {
		t.Fatalf("progress reports %v, want %v", reports, wantReports)
	}
	for i := range reports {
		if reports[i] != wantReports[i] {
			t.Errorf("report %d = %+v, want %+v", i, reports[i], wantReports[i])
		}
	}
	wantLogs := []string{`info {"step":1}`, `info {"step":2}`, `info {"step":3}`}
	if strings.Join(logs, "\n") != strings.Join(wantLogs, "\n") {
		t.Errorf("logs %q, want %q", logs, wantLogs)
	}
	// Without hooks the pool is not asked for progress, and still answers.
	if got := p.mustCall(t, cppProgressSteps, `[2]`); got != "2" {
		t.Errorf("progressSteps(2) without hooks = %s", got)
	}
}

func testCppContent(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	tests := []struct {
		name       string
		mid        int
		args       string
		wantValue  string
		wantBlocks string // "" when the Content hook must not be called
	}{
		{"blocks and a value", cppPlot, `[2]`, `[1,1]`,
			`[{"type":"text","text":"a plot of 2"},{"type":"image","data":"iVBORw==","mimeType":"image/png"},` +
				`{"type":"resource","resource":{"uri":"data:points","mimeType":"text/csv","text":"x,y"}},` +
				`{"type":"resource","resource":{"uri":"data:raw","mimeType":"application/octet-stream","blob":"AQ=="}}]`},
		{"blocks alone", cppBlocksOnly, `[]`, `null`, `[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]`},
		{"no blocks", cppAddOne, `[1]`, `2`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var blocks []string
			h := Hooks{Content: func(b json.RawMessage) { blocks = append(blocks, string(b)) }}
			v, err := p.call(t, tt.mid, tt.args, h)
			if err != nil {
				t.Fatal(err)
			}
			if string(v) != tt.wantValue {
				t.Errorf("value %s, want %s", v, tt.wantValue)
			}
			var want []string
			if tt.wantBlocks != "" {
				want = []string{tt.wantBlocks}
			}
			if strings.Join(blocks, "\n") != strings.Join(want, "\n") || len(blocks) != len(want) {
				t.Errorf("Content hook got %q, want %q", blocks, want)
			}
		})
	}
}

func testCppSegfault(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	before := p.pid(t)
	_, err := p.call(t, cppCrash, `[]`, Hooks{})
	if err == nil {
		t.Fatal("the crashing call succeeded")
	}
	var ce *CallError
	if errors.As(err, &ce) {
		t.Errorf("a crash gave a CallError: %v", err)
	}
	for _, want := range []string{
		"pool cpp died (signal: segmentation fault); last stderr:\n",
		"about to crash\n",
		"(mid " + strconv.Itoa(cppCrash) + ") crashed: SIGSEGV (segmentation fault)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	after := p.pid(t)
	if after == before {
		t.Errorf("the pool answered from pid %d both before and after the crash", before)
	}
	if got := p.mustCall(t, cppAddOne, `[1]`); got != "2" {
		t.Errorf("after the crash, addOne(1) = %s", got)
	}
}

func testCppOutput(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	if got := p.mustCall(t, cppChatty, `[]`); got != `"done"` {
		t.Errorf("chatty() = %s", got)
	}
	for _, line := range []string{"from cout", "from printf", "from-cpp-child"} {
		p.stderr.waitFor(t, "[pool cpp] "+line+"\n", 30*time.Second)
	}
	if got := p.mustCall(t, cppFdsInherited, `[]`); got != `"closed"` {
		t.Errorf("a child of the pool sees descriptor 3 or 4: %s", got)
	}
}

func testCppShutdown(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{StopGrace: 5 * time.Second})
	pid := p.pid(t)
	done := p.startCall(t, context.Background(), cppSleepMs, cppArgs(t, `[60000]`))
	began := time.Now()
	p.Close()
	// Past the grace nexus would have signalled the pool: it must exit on
	// shutdown by itself, with its call still running.
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Close took %s: the pool waited for its running call", took)
	}
	if err := <-done; err == nil {
		t.Error("the call in flight succeeded after Close")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the pool %d is still there after Close: kill(0) = %v", pid, err)
	}
}

func testCppStandalone(t *testing.T, exe string) {
	testRefusesStandalone(t, "cpp", exec.Command(exe))
}
