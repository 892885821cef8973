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
	"reflect"
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
	wantFailure(t, "the crashing call", err,
		"pool cpp died (signal: segmentation fault); last stderr:\n",
		"about to crash\n",
		"(mid "+strconv.Itoa(cppCrash)+") crashed: SIGSEGV (segmentation fault)")
	var ce *CallError
	if errors.As(err, &ce) {
		t.Errorf("a crash gave a CallError: %v", err)
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

// TestCppRuntime checks what the C++ runtime does besides converting
// values and arrays (arrays_test.go has its arrays): its ready message,
// vectors read straight from a call message, and the worker threads that
// run calls.
func TestCppRuntime(t *testing.T) {
	testenv.Long(t)
	exe := buildCppTestPool(t)
	t.Run("ready", func(t *testing.T) { testCppArraysReady(t, exe) })
	t.Run("vectors in JSON", func(t *testing.T) { testCppVectorsInJSON(t, exe) })
	t.Run("worker threads", func(t *testing.T) { testCppWorkers(t, exe) })
}

func startRawCppPool(t *testing.T, exe string) *rawPool {
	t.Helper()
	return startRawProcess(t, &rawPool{recvWait: 30 * time.Second, exitWait: 10 * time.Second, useNumber: true},
		"cpp", filepath.Dir(exe), []string{exe}, nil)
}

func testCppArraysReady(t *testing.T, exe string) {
	p := startRawCppPool(t, exe)
	got := p.recv(t)
	mids := p.mids(cppPoolMids)
	want := map[string]any{"type": "ready", "protocol": json.Number("2"), "lang": "cpp", "pid": json.Number(strconv.Itoa(p.cmd.Process.Pid)),
		"mids": mids, "concurrent": true, "arrays": []any{"i4", "i8", "f8"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ready = %v, want %v", got, want)
	}
}

// testCppVectorsInJSON checks that a vector parameter read straight from
// the message (nexus's member order: type and mid before args) gets what
// the json route gives (the same call with args first, which that route
// reads), errors included. The runtime reads only messages of 4 KiB or
// more that way: a member it ignores pads them.
func testCppVectorsInJSON(t *testing.T, exe string) {
	p := startRawCppPool(t, exe)
	p.recv(t) // ready
	pad := `"pad":"` + strings.Repeat("x", 4096) + `"`
	var long strings.Builder
	long.WriteString("[[")
	for i := 0; i < 100000; i++ {
		if i > 0 {
			long.WriteByte(',')
		}
		long.WriteString(strconv.FormatInt(int64(i)*92233720368547-4611686018427387904, 10))
	}
	long.WriteString("]]")
	tests := []struct {
		mid       int
		args      string
		wantValue string // or the error
		wantError string
	}{
		{cppEchoI64s, `[[1,-2,9223372036854775807,-9223372036854775808,0]]`, `[1,-2,9223372036854775807,-9223372036854775808,0]`, ""},
		{cppEchoI64s, `[[]]`, `[]`, ""},
		{cppEchoI64s, long.String(), "", ""},
		{cppEchoI64s, `[[9223372036854775808]]`, "", "argument 1 at [0]: 9223372036854775808 does not fit in int64_t"},
		{cppEchoI64s, `[[1.0,2]]`, `[1,2]`, ""},
		{cppEchoI64s, `[[1,1.5]]`, "", "argument 1 at [1]: expected an integer (int64_t), got 1.5"},
		{cppEchoI64s, `[[1,"x"]]`, "", `argument 1 at [1]: expected an integer (int64_t), got the string "x"`},
		{cppEchoI64s, `[null]`, "", "argument 1: expected an array (vector<int64_t>), got null"},
		{cppEchoI64s, `[[[1]]]`, "", "argument 1 at [0]: expected an integer (int64_t), got an array of 1"},
		{cppEchoI64s, `[[1,{"a":1}]]`, "", "argument 1 at [1]: expected an integer (int64_t), got an object"},
		{cppEchoI64s, `[[1],[2]]`, "", "expected 1 argument, got 2"},
		{cppEchoInts, `[[2147483647,-2147483648]]`, `[2147483647,-2147483648]`, ""},
		{cppEchoInts, `[[0,-2147483649]]`, "", "argument 1 at [1]: -2147483649 does not fit in int32_t"},
		{cppEchoU64s, `[[18446744073709551615,0]]`, `[18446744073709551615,0]`, ""},
		{cppEchoU64s, `[[-1]]`, "", "argument 1 at [0]: -1 does not fit in uint64_t"},
		{cppEchoDoubles, `[[1,-1,0.1,1e308,18446744073709551615,-0.0]]`, `[1.0,-1.0,0.1,1e+308,1.8446744073709552e+19,-0.0]`, ""},
		{cppEchoDoubles, `[[true]]`, "", "argument 1 at [0]: expected a number (double), got true"},
		{cppEchoFloats, `[[0.1,1e30,3]]`, `[0.1,1e+30,3.0]`, ""},
		{cppEchoFloats, `[[0,1e300]]`, "", "argument 1 at [1]: 1e+300 does not fit in float"},
		{cppEchoGrid, `[[[1,2],[3]]]`, `[[1.0,2.0],[3.0]]`, ""},
		{cppEchoGrid, `[[[],[]]]`, `[[],[]]`, ""},
		{cppEchoGrid, `[[]]`, `[]`, ""},
		{cppEchoGrid, `[[1,2]]`, "", "argument 1 at [0]: expected an array (vector<double>), got 1"},
		{cppEchoGrid, `[[[1],[[2]]]]`, "", "argument 1 at [1][0]: expected a number (double), got an array of 1"},
		{cppEchoGrid, `[[[1],null]]`, "", "argument 1 at [1]: expected an array (vector<double>), got null"},
		{cppEchoCube, `[[[[1,2],[3]],[[4]],[]]]`, `[[[1,2],[3]],[[4]],[]]`, ""},
		{cppEchoCube, `[[[[1,2],[2147483648]]]]`, "", "argument 1 at [0][1][0]: 2147483648 does not fit in int32_t"},
		{cppEchoIntGrid, `[[[1,2],[3,4]]]`, `[[1,2],[3,4]]`, ""},
		{cppMixArgs, `[[0.5],3,[1,2]]`, `[[0.5],3,[1,2]]`, ""},
		{cppMixArgs, `[[0.5],"x",[1,2]]`, "", `argument 2: expected an integer (int32_t), got the string "x"`},
		{cppMixArgs, `[[0.5],3,[1,"y"]]`, "", `argument 3 at [1]: expected an integer (int64_t), got the string "y"`},
		{cppMixArgs, `[[1.5]]`, "", "expected 3 arguments, got 1"},
		{cppEchoMaybeDoubles, `[[1,2]]`, `[1.0,2.0]`, ""},
		{cppSumVec, `[[1,2,3]]`, `6`, ""},
	}
	for i, tt := range tests {
		name := tt.args
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(fmt.Sprintf("%d %s", tt.mid, name), func(t *testing.T) {
			p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":%s,"progress":false,%s}`, 2*i+1, tt.mid, tt.args, pad))
			direct := p.recv(t)
			p.send(t, fmt.Sprintf(`{"args":%s,"progress":false,"id":%d,"mid":%d,"type":"call",%s}`, tt.args, 2*i+2, tt.mid, pad))
			sameReplies(t, "read directly and through json", direct, p.recv(t))
			if !isResult(t, direct, tt.wantError) {
				return
			}
			if got := jsonText(t, direct["value"]); tt.wantValue != "" && got != tt.wantValue {
				t.Errorf("value %s, want %s", got, tt.wantValue)
			}
		})
	}
	// A repeated args member: the last one counts, as json::parse has it.
	p.send(t, `{"type":"call","id":100,"mid":42,"args":[[1,2]],"args":[[3]],`+pad+`}`)
	if got := jsonText(t, p.recv(t)["value"]); got != `[3]` {
		t.Errorf("with two args members the value is %s, want [3]", got)
	}
}

func testCppWorkers(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	threads := func() int {
		t.Helper()
		n, err := strconv.Atoi(p.mustCall(t, cppThreadCount, `[]`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := threads()
	for i := 0; i < 50; i++ {
		if got := p.mustCall(t, cppAddInts, fmt.Sprintf("[%d,1]", i)); got != strconv.Itoa(i+1) {
			t.Fatalf("addInts(%d, 1) = %s", i, got)
		}
	}
	if after := threads(); after > before {
		t.Errorf("50 calls one after another grew the pool from %d threads to %d", before, after)
	}

	// 32 calls that return only once all 32 are running at once.
	const n = 32
	var wg sync.WaitGroup
	met := make([]string, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			v, err := p.Call(ctx, 0, cppMeet, cppArgs(t, fmt.Sprintf("[%d]", n)), Hooks{})
			met[i], errs[i] = string(v), err
		}()
	}
	wg.Wait()
	for i := range met {
		if errs[i] != nil || met[i] != strconv.Itoa(n) {
			t.Fatalf("call %d of meet(%d) = %s, %v: the calls did not run at once", i, n, met[i], errs[i])
		}
	}
	peak := threads()
	if peak < n+1 {
		t.Errorf("%d threads after %d calls at once", peak, n)
	}

	// A thread that ran a cancelled call runs the next one uncancelled.
	ctx, cancel := context.WithCancel(context.Background())
	done := p.startCall(t, ctx, cppWaitCancel, cppArgs(t, `[60000]`))
	cancel()
	<-done
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.mustCall(t, cppLastEvent, `[]`), "cancelled"); {
		if time.Now().After(deadline) {
			t.Fatal("waitCancel never saw its cancel")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		if got := p.mustCall(t, cppWaitCancel, `[1]`); !strings.HasPrefix(got, `"wait timeout after`) {
			t.Errorf("waitCancel(1) after a cancelled call = %s, want a timeout", got)
		}
	}

	// Idle workers end.
	for deadline := time.Now().Add(time.Minute); threads() > 3; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still %d threads a minute after %d calls at once ended", threads(), n)
		}
	}
}
