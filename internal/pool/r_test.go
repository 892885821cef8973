package pool

// Tests of the R runtime (runtime/r/nexus.R): through Start and Call with
// the test pool testdata/r/pool.R, and frame by frame on bare pipes for
// what the Set does not show (cancel replies, exit statuses).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/ndarray/ndarraytest"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of testdata/r/pool.R.
const (
	rEcho = iota + 1
	rDescribe
	rTotal
	rCountTo
	rCountToArray
	rHalve
	rReverse
	rMonster
	rFail
	rSquare
	rProgressSteps
	rWaitFor
	rPID
	rSleepUntilCancelled
	rBusyUntilCancelled
	rValue
	rChatty
	rBytes
	rRows
	rGrid
	rNothing
	rCustomError
	rAddOne
	rSpawnChild
	rPoolMids = iota // how many functions pool.R has
)

// rSet runs an R pool; its calls take each argument as JSON text.
type rSet struct{ *poolUnderTest }

func rTestdata(t testing.TB) string { return testdataPath(t, "r") }

// startRSet starts one R pool; Exec and Dir default to the test pool, and
// Workers to 1 (not R's default of one per CPU), so output is prefixed
// "[pool r] ".
func startRSet(t *testing.T, spec Spec, opts Options) *rSet {
	t.Helper()
	testenv.NeedR(t)
	spec.Lang = "r"
	if spec.Exec == nil {
		spec.Exec = []string{"Rscript", "pool.R"}
	}
	if spec.Dir == "" {
		spec.Dir = rTestdata(t)
	}
	if spec.Workers == 0 {
		spec.Workers = 1
	}
	return &rSet{startPoolUnderTest(t, spec, opts, 60*time.Second)}
}

// rawTexts makes each JSON text one raw argument.
func rawTexts(args []string) []json.RawMessage {
	raw := make([]json.RawMessage, len(args))
	for i, a := range args {
		raw[i] = json.RawMessage(a)
	}
	return raw
}

// call passes each argument as raw JSON text.
func (s *rSet) call(t *testing.T, mid int, args ...string) (json.RawMessage, error) {
	t.Helper()
	return s.callRaw(t, mid, rawTexts(args), Hooks{})
}

func (s *rSet) mustCall(t *testing.T, mid int, args ...string) string {
	t.Helper()
	return string(s.mustCallRaw(t, mid, rawTexts(args)))
}

func TestRValues(t *testing.T) {
	s := startRSet(t, Spec{}, Options{})
	long := make([]int, 5000)
	for i := range long {
		long[i] = i * 7
	}
	longJSON := jsonText(t, long)
	bigString := strings.Repeat("héllo 🎲 \"quoted\"\n", 100000) // 2 MB: many pipe buffers each way
	tests := []struct {
		name string
		mid  int
		args []string
		want string // the exact JSON text returned
	}{
		// integers
		{"small integer", rEcho, []string{`42`}, `42`},
		{"negative integer", rEcho, []string{`-7`}, `-7`},
		{"largest R integer", rDescribe, []string{`2147483647`}, `"integer[1]"`},
		{"beyond 32 bits arrives as a double", rDescribe, []string{`2147483648`}, `"double[1]"`},
		{"-2^31 is NA as an R integer: a double", rDescribe, []string{`-2147483648`}, `"double[1]"`},
		{"2^40 is exact", rAddOne, []string{`1099511627776`}, `1099511627777`},
		{"2^53 is exact", rEcho, []string{`9007199254740992`}, `9007199254740992`},
		{"-2^53 is exact", rEcho, []string{`-9007199254740992`}, `-9007199254740992`},
		{"2^60 is exact in a double", rEcho, []string{`1152921504606846976`}, `1152921504606846976`},
		{"so is 2^64", rEcho, []string{`[18446744073709551616]`}, `18446744073709551616`},
		{"integer digits in a string are a string", rEcho, []string{`"12345678901234567890"`}, `"12345678901234567890"`},
		{"sum of an integer vector", rTotal, []string{`[1,2,3]`}, `6`},
		{"sum past 32 bits", rTotal, []string{`[2147483647,2147483647]`}, `4294967294`},
		// reals
		{"0.1", rEcho, []string{`0.1`}, `0.1`},
		{"0.1+0.2 keeps 17 digits", rEcho, []string{`0.30000000000000004`}, `0.30000000000000004`},
		{"1e308", rEcho, []string{`1e308`}, `1e+308`},
		{"tiny", rEcho, []string{`-2.5e-300`}, `-2.5e-300`},
		{"a whole real is written as an integer", rEcho, []string{`2.0`}, `2`},
		{"1e20 is written in digits", rEcho, []string{`1e20`}, `100000000000000000000`},
		{"halve", rHalve, []string{`1`}, `0.5`},
		{"mixed integers and reals are one double vector", rDescribe, []string{`[1,2.5]`}, `"double[2]"`},
		{"sum of mixed numbers", rTotal, []string{`[1,2.5]`}, `3.5`},
		// strings
		{"unicode string", rEcho, []string{`"héllo wörld 🎲 ✓ 日本"`}, `"héllo wörld 🎲 ✓ 日本"`},
		{"escapes", rEcho, []string{`"quote \" backslash \\ newline \n tab \t cr \r bell \u0007 slash /"`}, `"quote \" backslash \\ newline \n tab \t cr \r bell \u0007 slash /"`},
		{"unicode escapes arrive as characters", rEcho, []string{`"\u00e9\ud83c\udfb2"`}, `"é🎲"`},
		{"reverse by code point", rReverse, []string{`"héllo 🎲"`}, `"🎲 olléh"`},
		{"empty string", rEcho, []string{`""`}, `""`},
		{"big string", rEcho, []string{jsonText(t, bigString)}, jsonText(t, bigString)},
		// lists
		{"empty list", rEcho, []string{`[]`}, `[]`},
		{"empty list arrives as logical(0)", rDescribe, []string{`[]`}, `"logical[0]"`},
		{"sum of an empty list", rTotal, []string{`[]`}, `0`},
		{"one-element list comes back a scalar", rEcho, []string{`[7]`}, `7`},
		{"I() keeps one element an array", rCountToArray, []string{`1`}, `[1]`},
		{"a length-1 vector is a scalar", rCountTo, []string{`1`}, `1`},
		{"a length-0 vector is an array", rCountTo, []string{`0`}, `[]`},
		{"vector", rCountTo, []string{`3`}, `[1,2,3]`},
		{"long list", rEcho, []string{longJSON}, longJSON},
		{"strings", rEcho, []string{`["a","b"]`}, `["a","b"]`},
		{"booleans and null", rEcho, []string{`[true,false,null]`}, `[true,false,null]`},
		{"null in a vector is NA", rDescribe, []string{`[1,null,3]`}, `"integer[3] NA at 2"`},
		{"NA goes back as null", rEcho, []string{`["a",null]`}, `["a",null]`},
		{"mixed types stay a list", rDescribe, []string{`[1,"a",true]`}, `"list[3] {integer[1]; character[1]; logical[1]}"`},
		{"mixed list round trip", rEcho, []string{`[1,"a",true,null]`}, `[1,"a",true,null]`},
		{"a string and an integer stay a list", rDescribe, []string{`["a",1]`}, `"list[2] {character[1]; integer[1]}"`},
		{"a string and a double stay a list", rEcho, []string{`["a",2.5,null]`}, `["a",2.5,null]`},
		{"an integer and a boolean stay a list", rDescribe, []string{`[1,true]`}, `"list[2] {integer[1]; logical[1]}"`},
		{"a double and a boolean stay a list", rDescribe, []string{`[1.5,false]`}, `"list[2] {double[1]; logical[1]}"`},
		{"a long list of strings and numbers stays a list", rEcho, []string{`["a",1,"b",2,"c",3,"d",4,"e",5]`}, `["a",1,"b",2,"c",3,"d",4,"e",5]`},
		{"all nulls stay a list", rDescribe, []string{`[null,null]`}, `"list[2] {NULL; NULL}"`},
		{"nested lists", rEcho, []string{`[[1,2],[3,4,5]]`}, `[[1,2],[3,4,5]]`},
		// Lists of rows are converted in bulk: each row as it would be alone.
		{"rows of integers and doubles", rDescribe, []string{`[[1,2],[3,4.5],[5],[],[6,7],[8,9],[10,11],[12.5]]`},
			`"list[8] {integer[2]; double[2]; integer[1]; logical[0]; integer[2]; integer[2]; integer[2]; double[1]}"`},
		{"rows with a null", rDescribe, []string{`[[1,null],[2,3],[4,5],[6,7],[8,9],[10,11],[12,13],[14,15]]`},
			`"list[8] {integer[2] NA at 2; integer[2]; integer[2]; integer[2]; integer[2]; integer[2]; integer[2]; integer[2]}"`},
		{"rows of strings, one mixed", rDescribe, []string{`[["a"],["b","c"],["d"],["e"],["f"],["g"],["h"],["i",1]]`},
			`"list[8] {character[1]; character[2]; character[1]; character[1]; character[1]; character[1]; character[1]; list[2] {character[1]; integer[1]}}"`},
		{"rows round trip", rEcho, []string{`[[1,2.5],[3,4],[5,6],[7,8],[9,10],[11,12],[13,14],[],[true,false]]`}, `[[1,2.5],[3,4],[5,6],[7,8],[9,10],[11,12],[13,14],[],[true,false]]`},
		// records
		{"record", rEcho, []string{`{"name":"Goblin","hp":7,"tags":["small","green"]}`}, `{"name":"Goblin","hp":7,"tags":["small","green"]}`},
		{"record arrives as a named list", rDescribe, []string{`{"name":"Goblin","hp":7}`}, `"list[2] named name,hp {character[1]; integer[1]}"`},
		{"record built in R", rMonster, []string{`"Goblin"`, `7`}, `{"name":"Goblin","hp":7,"alive":true,"loot":[]}`},
		{"empty object", rEcho, []string{`{}`}, `{}`},
		{"null member", rEcho, []string{`{"a":null}`}, `{"a":null}`},
		{"nested", rEcho, []string{`{"party":[{"name":"a","hp":[1,2]},{"name":"b","hp":[]}],"map":{"k":{"x":1.5}}}`}, `{"party":[{"name":"a","hp":[1,2]},{"name":"b","hp":[]}],"map":{"k":{"x":1.5}}}`},
		// null and unit
		{"null", rEcho, []string{`null`}, `null`},
		{"null arrives as NULL", rDescribe, []string{`null`}, `"NULL"`},
		{"no return value is null", rNothing, nil, `null`},
		// other R values
		{"raw is base64", rBytes, nil, `"AAH/"`},
		{"data frame is rows", rRows, nil, `[{"x":1,"y":"a"},{"x":2,"y":null}]`},
		{"matrix is rows", rGrid, nil, `[[1,3,5],[2,4,6]]`},
		{"factor is its labels", rValue, []string{`"factor"`}, `["goblin","orc","goblin"]`},
		{"NaN as the wire's string", rValue, []string{`"nan"`}, `[1,"NaN"]`},
		{"infinity as the wire's string", rValue, []string{`"inf"`}, `"-Infinity"`},
		{"Date", rValue, []string{`"date"`}, `"2025-01-31"`},
		{"POSIXct", rValue, []string{`"time"`}, `"2025-01-31T12:00:00Z"`},
		{"names on a vector are dropped", rValue, []string{`"named_vector"`}, `[7,15]`},
		{"I() of a scalar is an array", rValue, []string{`"boxed_scalar"`}, `[5]`},
		{"a list of one is an array", rValue, []string{`"one_list"`}, `[5]`},
		{"as.list of a named vector is an object", rValue, []string{`"as_list"`}, `{"a":1,"b":2}`},
		{"character(0)", rValue, []string{`"empty_strings"`}, `[]`},
		{"empty named list", rValue, []string{`"empty_named"`}, `{}`},
		{"NA_real_", rValue, []string{`"na_real"`}, `null`},
		{"whole double", rValue, []string{`"whole_double"`}, `3`},
		{"2^60 computed in R", rValue, []string{`"big_double"`}, `1152921504606846976`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.mustCall(t, tt.mid, tt.args...)
			if got != tt.want {
				if len(got) > 200 {
					got = got[:200] + "..."
				}
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// Every double survives the trip to R and back bit for bit.
func TestRRealsRoundTrip(t *testing.T) {
	s := startRSet(t, Spec{}, Options{})
	r := rand.New(rand.NewPCG(1, 2))
	values := []float64{0.1, 1e308, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 2.0 / 3, 1e21, 1e22, 123456789.123456789, -0.5}
	for range 500 {
		values = append(values, math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(r.IntN(2046)+1)<<52)) // any finite
	}
	// Written as argmap writes reals: shortest form, an exponent for big
	// whole numbers. (Go's json writes 1.2345678901234568e20 as the integer
	// 123456789012345680000, which R rightly refuses: no double is that.)
	texts := make([]string, len(values))
	for i, v := range values {
		texts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	got := s.mustCall(t, rEcho, "["+strings.Join(texts, ",")+"]")
	var back []float64
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("reply %.200s: %v", got, err)
	}
	if len(back) != len(values) {
		t.Fatalf("got %d values back, want %d", len(back), len(values))
	}
	for i := range values {
		if math.Float64bits(back[i]) != math.Float64bits(values[i]) {
			t.Errorf("value %d: sent %v, got %v", i, values[i], back[i])
		}
	}
}

func TestRErrors(t *testing.T) {
	s := startRSet(t, Spec{}, Options{})
	tooBig := "integer %s cannot be represented exactly in R: integers beyond 32 bits arrive as doubles, which hold every integer only up to 2^53 = 9007199254740992"
	tests := []struct {
		name          string
		mid           int
		args          []string
		wantMessage   string
		wantTraceback string // a part of it
	}{
		{"stop", rFail, []string{`"bad AC"`}, "bad AC", "Error in check_armor(message) : bad AC\n3: stop(ac)\n2: check_armor(message)\n1: fail(message)"},
		{"custom condition class", rCustomError, nil, "armorError: too thick", "1: custom_error()"},
		{"unknown mid", 42, nil, unknownMid(42, rPoolMids), ""},
		{"too many arguments", rEcho, []string{`1`, `2`}, "unused argument (arg2)", "Error in echo(x, arg2)"},
		{"2^53+1", rEcho, []string{`9007199254740993`}, fmt.Sprintf(tooBig, "9007199254740993"), ""},
		{"-(2^53+1)", rEcho, []string{`-9007199254740993`}, fmt.Sprintf(tooBig, "-9007199254740993"), ""},
		{"2^64+1 deep in a record", rEcho, []string{`{"a":[1,{"b":18446744073709551617}]}`}, fmt.Sprintf(tooBig, "18446744073709551617"), ""},
		{"2^53+1 in rows", rEcho, []string{`[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12],[13,14],[9007199254740993,1]]`}, fmt.Sprintf(tooBig, "9007199254740993"), ""},
		{"a number beyond doubles in rows", rEcho, []string{`[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12],[13,14],[1e400,1]]`}, "a number in the arguments is beyond the range of R numbers (about 1.8e308)", ""},
		{"a number beyond doubles", rEcho, []string{`1e400`}, "a number in the arguments is beyond the range of R numbers (about 1.8e308)", ""},
		{"U+0000 in a string", rEcho, []string{`"a\u0000b"`}, "a string in the arguments holds the character U+0000, which R strings cannot hold", ""},
		{"integer overflow is no silent NA", rSquare, []string{`100000`}, "NAs produced by integer overflow (R integers hold at most 2147483647: use as.numeric() for larger numbers)", "1: square(x)"},
		{"function result", rValue, []string{`"fun"`}, "cannot encode the result as JSON: cannot encode a value of type closure as JSON", ""},
		{"partly named list", rValue, []string{`"partial"`}, "cannot encode the result as JSON: a list with some names missing cannot be encoded as JSON: name every element (an object) or none (an array)", ""},
		{"environment result", rValue, []string{`"env"`}, "cannot encode the result as JSON: cannot encode a value of type environment as JSON", ""},
		{"complex result", rValue, []string{`"complex"`}, "cannot encode the result as JSON: cannot encode a value of type complex as JSON", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.call(t, tt.mid, tt.args...)
			ce := callError(t, err)
			if ce.Message != tt.wantMessage {
				t.Errorf("message %q, want %q", ce.Message, tt.wantMessage)
			}
			if ce.Lang != "r" {
				t.Errorf("Lang %q, want r", ce.Lang)
			}
			if !strings.Contains(ce.Traceback, tt.wantTraceback) {
				t.Errorf("traceback %q does not contain %q", ce.Traceback, tt.wantTraceback)
			}
		})
	}
	// The pool survives its functions' failures.
	if got := s.mustCall(t, rAddOne, `1`); got != "2" {
		t.Errorf("after the errors, add_one(1) = %s", got)
	}
}

func TestRProgressAndLog(t *testing.T) {
	s := startRSet(t, Spec{}, Options{})
	var progress []string
	var logs []string
	h := Hooks{
		Progress: func(done float64, total *float64, message string) {
			progress = append(progress, fmt.Sprintf("%v/%v %s", done, *total, message))
		},
		Log: func(level string, data json.RawMessage) { logs = append(logs, level+" "+string(data)) },
	}
	v, err := s.Call(context.Background(), 0, rProgressSteps, []json.RawMessage{json.RawMessage(`3`)}, h)
	if err != nil || string(v) != "3" {
		t.Fatalf("progress_steps(3) = %s, %v", v, err)
	}
	if want := []string{"1/3 step 1 of 3", "2/3 step 2 of 3", "3/3 step 3 of 3"}; !slices.Equal(progress, want) {
		t.Errorf("progress %q, want %q", progress, want)
	}
	if want := []string{`info {"step":1,"of":3}`, `info {"step":2,"of":3}`, `info {"step":3,"of":3}`}; !slices.Equal(logs, want) {
		t.Errorf("logs %q, want %q", logs, want)
	}
}

// What R prints, and what its children print, reaches nexus's stderr and
// never the protocol.
func TestROutputStaysOffTheProtocol(t *testing.T) {
	s := startRSet(t, Spec{}, Options{})
	if got := s.mustCall(t, rChatty); got != `"done"` {
		t.Errorf("chatty() = %s", got)
	}
	for _, want := range []string{"[pool r] to stdout\n", "[pool r] to stderr\n", "[pool r] Warning in chatty() : careful\n", "[pool r] from-child\n"} {
		s.stderr.waitFor(t, want, 30*time.Second)
	}
}

// R runs one call at a time; with two workers one answers while the other
// is busy, and calls made together all get their answers.
func TestRWorkersShareCalls(t *testing.T) {
	s := startRSet(t, Spec{Workers: 2}, Options{})
	dir := t.TempDir()
	waitFor := func(path, tag string, h Hooks) (string, error) {
		v, err := s.Call(context.Background(), 0, rWaitFor, []json.RawMessage{json.RawMessage(jsonText(t, path)), json.RawMessage(jsonText(t, tag))}, h)
		return string(v), err
	}
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	h, started := startedHook()
	slow, slowErr := make(chan string, 1), make(chan error, 1)
	go func() {
		if v, err := waitFor(first, "slow", h); err != nil {
			slowErr <- err
		} else {
			slow <- v
		}
	}()
	waitStarted(t, started, slowErr)

	// One at a time, calls go to the idle worker and are answered while the
	// busy one waits.
	freePID := s.mustCall(t, rPID)
	for i := range 4 {
		if got := s.mustCall(t, rHalve, strconv.Itoa(2*i)); got != strconv.Itoa(i) {
			t.Errorf("halve(%d) = %s", 2*i, got)
		}
	}

	// Calls made together queue on both workers and all come back.
	var wg sync.WaitGroup
	results := make([]string, 6)
	errs := make([]error, 6)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = waitFor(second, fmt.Sprintf("tag %d", i), Hooks{}) })
	}
	time.Sleep(200 * time.Millisecond) // let them reach the pools
	for _, release := range []string{first, second} {
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i := range results {
		if want := fmt.Sprintf(`"tag %d"`, i); errs[i] != nil || results[i] != want {
			t.Errorf("call %d = %s, %v; want %s", i, results[i], errs[i], want)
		}
	}
	select {
	case v := <-slow:
		if v != `"slow"` {
			t.Errorf("the slow call returned %s", v)
		}
	case err := <-slowErr:
		t.Errorf("the slow call returned %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slow call did not end once released")
	}
	if busyPID := s.mustCall(t, rPID); busyPID == freePID {
		t.Errorf("both calls ran in process %s: there is one worker, not two", busyPID)
	}
}

// A cancelled call returns at once. One that stops at a checkpoint
// (nexus_sleep here) keeps its process; one that does not look is stuck,
// and its process is replaced after the cancel grace.
func TestRCancel(t *testing.T) {
	testenv.Long(t)
	tests := []struct {
		name         string
		mid          int
		wantReplaced bool
	}{
		{"stops in nexus_sleep", rSleepUntilCancelled, false},
		{"stops in nexus_progress", rBusyUntilCancelled, false},
		{"never looks", rWaitFor, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startRSet(t, Spec{}, Options{CancelGrace: time.Second})
			before := s.mustCall(t, rPID)
			path := filepath.Join(t.TempDir(), "marker")
			args := []json.RawMessage{json.RawMessage(jsonText(t, path))}
			if tt.mid == rWaitFor {
				args = append(args, json.RawMessage(`"never released"`))
			}
			ctx, cancel := context.WithCancel(context.Background())
			var once sync.Once
			h := Hooks{Progress: func(float64, *float64, string) { once.Do(cancel) }} // cancel once it runs
			done := make(chan error, 1)
			go func() {
				_, err := s.Call(ctx, 0, tt.mid, args, h)
				done <- err
			}()
			waitCancelled(t, done)
			time.Sleep(2 * time.Second) // past the grace
			if got := s.mustCall(t, rAddOne, `41`); got != "42" {
				t.Errorf("after the cancel, add_one(41) = %s", got)
			}
			after := s.mustCall(t, rPID)
			if replaced := after != before; replaced != tt.wantReplaced {
				t.Errorf("process %s before the cancel, %s after: replaced = %v, want %v", before, after, replaced, tt.wantReplaced)
			}
			if !tt.wantReplaced {
				if got, err := os.ReadFile(path); err != nil || string(got) != "cancelled\n" {
					t.Errorf("the marker holds %q (%v): the function did not see its cancel", got, err)
				}
			}
		})
	}
}

// The seed program's R half: intro("Goblin") through the manifest's pool.
func TestRCombatIntro(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "combat"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	type command struct {
		Name string `json:"name"`
		Mid  int    `json:"mid"`
		Pool int    `json:"pool"`
	}
	var m struct {
		Pools []struct {
			Lang string   `json:"lang"`
			Exec []string `json:"exec"`
		} `json:"pools"`
		Commands []command `json:"commands"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Commands, func(c command) bool { return c.Name == "intro" })
	if i < 0 {
		t.Fatal("combat has no intro command")
	}
	intro := m.Commands[i]
	pool := m.Pools[intro.Pool]
	if pool.Lang != "r" {
		t.Fatalf("intro runs in a %s pool, want r", pool.Lang)
	}
	s := startRSet(t, Spec{Index: intro.Pool, Exec: pool.Exec, Dir: dir}, Options{})
	if got := s.mustCall(t, intro.Mid, `"Goblin"`); got != `"A wild Goblin appears!"` {
		t.Errorf("intro(Goblin) = %s", got)
	}
}

// startRRawPool runs testdata/r/pool.R on bare pipes (see rawPool).
func startRRawPool(t *testing.T, extraEnv ...string) *rawPool {
	t.Helper()
	return startRRawPoolWith(t, func(cmd *exec.Cmd) { cmd.Env = append(cmd.Env, extraEnv...) })
}

// startRRawPoolWith lets setup change the command before it starts.
func startRRawPoolWith(t *testing.T, setup func(*exec.Cmd)) *rawPool {
	t.Helper()
	testenv.NeedR(t)
	return startRawProcess(t, &rawPool{recvWait: 60 * time.Second, exitWait: 20 * time.Second, useNumber: true},
		"r", rTestdata(t), []string{"Rscript", "pool.R"}, setup)
}

func TestRReady(t *testing.T) {
	p := startRRawPool(t)
	got := p.recv(t)
	mids := p.mids(rPoolMids)
	// Protocol 2, taking arrays of the dtypes R holds: no i8, as R has no
	// 64-bit integers (nexus narrows i8 arrays to i4 when they fit).
	want := map[string]any{"type": "ready", "protocol": json.Number("2"), "lang": "r", "pid": json.Number(strconv.Itoa(p.cmd.Process.Pid)), "mids": mids, "concurrent": false, "arrays": []any{"i4", "f8"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ready = %v, want %v", got, want)
	}
}

func TestRCallFrames(t *testing.T) {
	p := startRRawPool(t, "LC_ALL=C", "LANG=C") // strings stay UTF-8 whatever the locale
	p.recv(t)                                   // ready
	tests := []struct {
		name  string
		sends []string
		want  []string // replies, as Go re-encodes them
	}{
		{"unknown types and members are ignored",
			[]string{`{"type":"greeting","from":"a newer nexus"}`, `{"type":"call","id":1,"mid":23,"args":[1],"deadline":5}`},
			[]string{`{"id":1,"type":"result","value":2}`}},
		{"ids come back exactly",
			[]string{`{"type":"call","id":9007199254740991,"mid":1,"args":["é"]}`, `{"type":"call","id":9007199254740993,"mid":1,"args":[1]}`},
			[]string{`{"id":9007199254740991,"type":"result","value":"é"}`, `{"id":9007199254740993,"type":"result","value":1}`}},
		{"progress only when asked",
			[]string{`{"type":"call","id":2,"mid":11,"args":[1],"progress":true}`, `{"type":"call","id":3,"mid":11,"args":[1]}`},
			[]string{
				`{"id":2,"message":"step 1 of 1","progress":1,"total":1,"type":"progress"}`,
				`{"data":{"of":1,"step":1},"id":2,"level":"info","type":"log"}`,
				`{"id":2,"type":"result","value":1}`,
				`{"data":{"of":1,"step":1},"id":3,"level":"info","type":"log"}`,
				`{"id":3,"type":"result","value":1}`,
			}},
		{"a cancel for a finished call is ignored",
			[]string{`{"type":"cancel","id":3}`, `{"type":"call","id":4,"mid":7,"args":["ab"]}`},
			[]string{`{"id":4,"type":"result","value":"ba"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range tt.sends {
				p.send(t, f)
			}
			for _, want := range tt.want {
				if got := jsonText(t, p.recv(t)); got != want {
					t.Errorf("reply %s, want %s", got, want)
				}
			}
		})
	}
}

// R reads fd 3 while a call runs only at nexus_progress, nexus_cancelled
// and nexus_sleep: there a cancel ends the call.
func TestRCancelFrames(t *testing.T) {
	p := startRRawPool(t)
	p.recv(t) // ready
	dir := t.TempDir()
	sleeping, busy := filepath.Join(dir, "sleeping"), filepath.Join(dir, "busy")

	p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":[%s],"progress":true}`, rSleepUntilCancelled, jsonText(t, sleeping)))
	p.send(t, `{"type":"call","id":2,"mid":1,"args":["queued, then cancelled"]}`)
	p.send(t, `{"type":"call","id":3,"mid":1,"args":["queued"]}`)
	if got := p.recv(t); got["type"] != "progress" || got["id"] != json.Number("1") {
		t.Fatalf("first frame %v, want progress for call 1", got)
	}
	p.send(t, `{"type":"cancel","id":2}`)
	p.send(t, `{"type":"cancel","id":1}`)
	cancelled := func(id int) string {
		return fmt.Sprintf(`{"cancelled":true,"id":%d,"message":"cancelled","type":"error"}`, id)
	}
	for _, want := range []string{cancelled(1), cancelled(2), `{"id":3,"type":"result","value":"queued"}`} {
		if got := jsonText(t, p.recv(t)); got != want {
			t.Errorf("reply %s, want %s", got, want)
		}
	}

	// A call that computes and reports progress stops at nexus_progress.
	// Its first progress says it runs: cancelled before it began, it would
	// be answered cancelled without running, and write no marker.
	p.send(t, fmt.Sprintf(`{"type":"call","id":4,"mid":%d,"args":[%s],"progress":true}`, rBusyUntilCancelled, jsonText(t, busy)))
	if got := p.recv(t); got["type"] != "progress" {
		t.Fatalf("first frame %v, want progress for call 4", got)
	}
	p.send(t, `{"type":"cancel","id":4}`)
	got := p.recv(t)
	for got["type"] == "progress" { // sent before the cancel was read
		got = p.recv(t)
	}
	if got := jsonText(t, got); got != cancelled(4) {
		t.Errorf("reply %s, want %s", got, cancelled(4))
	}
	for _, marker := range []string{sleeping, busy} {
		if got, err := os.ReadFile(marker); err != nil || string(got) != "cancelled\n" {
			t.Errorf("%s holds %q (%v): the function did not see its cancel", filepath.Base(marker), got, err)
		}
	}
}

func TestRExit(t *testing.T) {
	testenv.Long(t)
	testExits(t, func(t *testing.T) *rawPool {
		p := startRRawPool(t)
		p.recv(t) // ready
		return p
	}, "", []exitCase{
		{"end of file", func(p *rawPool, t *testing.T) { p.in.Close() }, 0, ""},
		{"shutdown", func(p *rawPool, t *testing.T) { p.send(t, `{"type":"shutdown"}`) }, 0, ""},
		{"shutdown while a call sleeps", func(p *rawPool, t *testing.T) {
			p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":["/nonexistent/marker"],"progress":true}`, rSleepUntilCancelled))
			p.recv(t) // progress: the call runs
			p.send(t, `{"type":"shutdown"}`)
		}, 0, ""},
		{"end of file while a call sleeps", func(p *rawPool, t *testing.T) {
			p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":["/nonexistent/marker"],"progress":true}`, rSleepUntilCancelled))
			p.recv(t)
			p.in.Close()
		}, 0, ""},
		{"bad frame length", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0, 0, 0, 1, '1'}) }, 2, "nexus pool: protocol error: frame length 1 is outside 2..1073741824"},
		{"not an object", func(p *rawPool, t *testing.T) { p.send(t, `[1,2]`) }, 2, "nexus pool: protocol error: a message is not an object with a type"},
		{"not JSON", func(p *rawPool, t *testing.T) { p.send(t, `{"type":`) }, 2, "nexus pool: protocol error: bad message"},
		{"args not an array", func(p *rawPool, t *testing.T) { p.send(t, `{"type":"call","id":1,"mid":1,"args":5}`) }, 2, "args is not an array"},
		{"cut frame", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0, 0, 0, 9, '{'}); p.in.Close() }, 2, "end of file inside a frame of 9 bytes"},
	})
}

// When nexus goes away without a shutdown, an R pool that leads its process
// group (as under nexus) takes the children of its functions along.
func TestRLeavesNoChildren(t *testing.T) {
	p := startRRawPoolWith(t, func(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} })
	p.recv(t) // ready
	p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":[]}`, rSpawnChild))
	reply := p.recv(t)
	child, err := strconv.Atoi(fmt.Sprint(reply["value"]))
	if err != nil || child <= 0 {
		t.Fatalf("spawn_child replied %v", reply)
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	if !testenv.Running(child) {
		t.Fatalf("the child %d is not running before the pool goes", child)
	}
	p.in.Close()
	p.exitCode(t)
	for deadline := time.Now().Add(10 * time.Second); testenv.Running(child); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d outlived its pool", child)
		}
	}
}

// readBin reads a pipe in blocks of 8096 bytes, and a non-blocking read
// that finds the pipe empty after a full block fails, losing the block:
// frames that end on a block's edge must all arrive, whether read while
// the pool waits or by a poll while a call runs.
func TestRFrameEdges(t *testing.T) {
	testenv.Long(t)
	p := startRRawPool(t)
	p.recv(t) // ready
	// echo's call, its frame (header included) size bytes long.
	frame := func(id, size int) (string, int) {
		head := fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":["`, id, rEcho)
		pad := size - 4 - len(head) - len(`"]}`)
		return head + strings.Repeat("x", pad) + `"]}`, pad
	}
	check := func(id, pad int) {
		t.Helper()
		reply := p.recv(t)
		if reply["id"] != json.Number(strconv.Itoa(id)) || reply["value"] != strings.Repeat("x", pad) {
			t.Fatalf("reply %.100v, want echo's answer to call %d", reply, id)
		}
	}
	sizes := []int{4096, 4100, 8096, 8100, 8192, 16192, 16196, 3 * 8096, 1 << 20, 1<<20 + 8096}
	for i, size := range sizes {
		msg, pad := frame(i+1, size)
		p.send(t, msg)
		check(i+1, pad)
	}
	// Two at once, the first ending on an edge.
	first, pad1 := frame(50, 8096)
	second, pad2 := frame(51, 100)
	p.send(t, first)
	p.send(t, second)
	check(50, pad1)
	check(51, pad2)

	// Calls that arrive while one sleeps are read by its polls, which look
	// every 50 ms: the pause lets one find exactly a frame's bytes.
	p.send(t, fmt.Sprintf(`{"type":"call","id":100,"mid":%d,"args":[%s],"progress":true}`, rSleepUntilCancelled, jsonText(t, filepath.Join(t.TempDir(), "marker"))))
	if got := p.recv(t); got["type"] != "progress" {
		t.Fatalf("first frame %v, want progress", got)
	}
	var pads []int
	for i, size := range []int{8096, 16192, 4096, 2 << 20} {
		msg, pad := frame(101+i, size)
		pads = append(pads, pad)
		p.send(t, msg)
		time.Sleep(300 * time.Millisecond)
	}
	p.send(t, `{"type":"cancel","id":100}`)
	if got := jsonText(t, p.recv(t)); got != `{"cancelled":true,"id":100,"message":"cancelled","type":"error"}` {
		t.Fatalf("reply %s, want call 100 cancelled", got)
	}
	for i, pad := range pads {
		check(101+i, pad)
	}
}

// A call cancelled while it waits behind one that never reaches a
// checkpoint is answered cancelled without running, even when the cancel
// comes in with it in one read.
func TestRCancelBeforeStart(t *testing.T) {
	p := startRRawPool(t)
	p.recv(t) // ready
	release := filepath.Join(t.TempDir(), "release")
	p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":[%s,"slow"],"progress":true}`, rWaitFor, jsonText(t, release)))
	if got := p.recv(t); got["type"] != "progress" {
		t.Fatalf("first frame %v, want progress", got)
	}
	// Call 1 now loops without a checkpoint: calls 2 and 3 and the cancel
	// of 2 wait in the pipe until it returns.
	p.send(t, fmt.Sprintf(`{"type":"call","id":2,"mid":%d,"args":["ran"]}`, rEcho))
	p.send(t, `{"type":"cancel","id":2}`)
	p.send(t, fmt.Sprintf(`{"type":"call","id":3,"mid":%d,"args":["ran"]}`, rEcho))
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"id":1,"type":"result","value":"slow"}`,
		`{"cancelled":true,"id":2,"message":"cancelled","type":"error"}`,
		`{"id":3,"type":"result","value":"ran"}`,
	} {
		if got := jsonText(t, p.recv(t)); got != want {
			t.Errorf("reply %s, want %s", got, want)
		}
	}
}

// A blob that arrives while a call runs is kept for the call it belongs
// to, and a call with arrays queued behind a running one can be cancelled.
func TestRArraysWhileBusy(t *testing.T) {
	p := startRRawPool(t)
	p.recv(t) // ready
	marker := t.TempDir() + "/marker"
	p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":[%s],"progress":true}`, rSleepUntilCancelled, jsonText(t, marker)))
	if got := p.recv(t); got["type"] != "progress" {
		t.Fatalf("first frame %v, want progress", got)
	}
	ints := ndarraytest.I4Array([]any{0}, []int{1000}, gen(1000, func(i int) int32 { return int32(i) })...)
	for id := 2; id <= 3; id++ {
		p.sendBlob(t, ints.Data)
		p.send(t, callFrame(id, rTotal, `[null]`, []ndarray.Array{ints}, ""))
	}
	p.send(t, `{"type":"cancel","id":2}`)
	p.send(t, `{"type":"cancel","id":1}`)
	for _, want := range []string{
		`{"cancelled":true,"id":1,"message":"cancelled","type":"error"}`,
		`{"cancelled":true,"id":2,"message":"cancelled","type":"error"}`,
		`{"id":3,"type":"result","value":499500}`,
	} {
		if got := jsonText(t, p.recv(t)); got != want {
			t.Errorf("reply %s, want %s", got, want)
		}
	}
}
