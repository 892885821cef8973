package pool

// Arrays (protocol 2) in every runtime, as one suite: each test is a table
// whose rows name the language they run in, and runs each language's rows
// on its test pool (testdata/pools/arrays.py, testdata/r/arrays.R,
// testdata/cpp/pool.cpp), on bare pipes frame by frame or through a Set.
// What one language alone does stays a row of that language.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/ndarray/ndarraytest"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of testdata/pools/arrays.py.
const (
	arrDescribe = iota + 1
	arrEcho
	arrMake
	arrThreads
	arrSleepMS
	arrGather
	arrBusy
	arrState
)

// The mids of testdata/r/arrays.R.
const (
	raEcho = iota + 1
	raAdd
	raSame
	raText
	raSameIn
	raMake
	raJSONFloor // jsonlite's CPU time on a payload, for benchmarks
)

// arraysLang is one language's test pool for arrays.
type arraysLang struct {
	lang string
	raw  func(t *testing.T) *rawPool       // on bare pipes, past its ready message
	set  func(t *testing.T) *poolUnderTest // as pool 0 of a Set
	// protocolError begins what the pool writes when it exits on a
	// protocol error.
	protocolError string
	// slowStart: a fresh pool per case (the protocol errors) only in the
	// long tier, R taking seconds to start.
	slowStart bool
	setWithin time.Duration // how long its calls through a Set may take in all
}

var arraysLangs = []arraysLang{
	{lang: "py", raw: startArraysPool, set: func(t *testing.T) *poolUnderTest {
		return startTestSet(t, Spec{Exec: []string{"python3", "arrays.py"}}, Options{}).poolUnderTest
	}, protocolError: "nexus pool: protocol error: ", setWithin: 2 * time.Minute},
	{lang: "r", raw: func(t *testing.T) *rawPool {
		testenv.NeedR(t)
		return readyRawPool(t, &rawPool{recvWait: 60 * time.Second, exitWait: 20 * time.Second}, "r", rTestdata(t), []string{"Rscript", "arrays.R"})
	}, set: func(t *testing.T) *poolUnderTest {
		return startRSet(t, Spec{Exec: []string{"Rscript", "arrays.R"}}, Options{}).poolUnderTest
	}, protocolError: "nexus pool: protocol error: ", slowStart: true, setWithin: 2 * time.Minute},
	// The C++ pool takes a g++ -O2 build the first time: the long tier.
	{lang: "cpp", raw: func(t *testing.T) *rawPool {
		testenv.Long(t)
		exe := buildCppTestPool(t)
		return readyRawPool(t, &rawPool{recvWait: 30 * time.Second, exitWait: 10 * time.Second}, "cpp", filepath.Dir(exe), []string{exe})
	}, set: func(t *testing.T) *poolUnderTest {
		testenv.Long(t)
		return startCppPool(t, buildCppTestPool(t), Options{}).poolUnderTest
	}, protocolError: "nexus pool cpp: protocol error: ", setWithin: time.Minute},
}

// startArraysPool runs testdata/pools/arrays.py on bare pipes, past its
// ready message.
func startArraysPool(t *testing.T) *rawPool {
	t.Helper()
	testenv.NeedPython(t)
	return readyRawPool(t, &rawPool{recvWait: 20 * time.Second, exitWait: 10 * time.Second}, "py", testdataDir(t), []string{"python3", "arrays.py"})
}

// readyRawPool starts argv in dir as p, a pool of lang that keeps numbers
// as their JSON text, and reads its ready message.
func readyRawPool(t *testing.T, p *rawPool, lang, dir string, argv []string) *rawPool {
	t.Helper()
	p.useNumber = true
	startRawProcess(t, p, lang, dir, argv, nil)
	if m := p.recv(t); m["type"] != "ready" {
		t.Fatalf("first message %v, want ready", m)
	}
	return p
}

// forEachArraysLang runs test, as a subtest named for the language, for
// each language that rows (by language) have rows for, with those rows.
func forEachArraysLang[R any](t *testing.T, rows map[string][]R, test func(t *testing.T, l arraysLang, rows []R)) {
	for _, l := range arraysLangs {
		if len(rows[l.lang]) > 0 {
			t.Run(l.lang, func(t *testing.T) { test(t, l, rows[l.lang]) })
		}
	}
}

// gen is f(0), f(1), ... f(n-1).
func gen[T any](n int, f func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// ints is n integers counting from start by step.
func ints(n int, start, step int64) []int64 {
	return gen(n, func(i int) int64 { return start + int64(i)*step })
}

// reals is n doubles that JSON writes in many forms.
func reals(n int) []float64 {
	special := []float64{0.1, -0.0, 2, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, -123456.789, 0.30000000000000004, 1e300}
	return gen(n, func(i int) float64 {
		if i < len(special) {
			return special[i]
		}
		return float64(i)*1.25 - 100
	})
}

// poolJSON is an array's JSON as nexus writes it to a pool that does not
// take arrays: a Real always with a fraction or an exponent. The tests'
// arrays are well formed: an error is the test's own.
func poolJSON(a ndarray.Array) string {
	b, err := ndarray.AppendPoolJSON(nil, &a)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonForm is args with each array written where its null is, as nexus
// writes an array for a pool that takes none.
func jsonForm(t *testing.T, args string, arrays []ndarray.Array) string {
	t.Helper()
	raw := cppArgs(t, args)
	for i := range arrays {
		idx := arrays[i].Path[0].(int)
		var err error
		if raw[idx], err = ndarray.Place(raw[idx], arrays[i].Path[1:], []byte(poolJSON(arrays[i]))); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := json.Marshal(raw)
	return string(out)
}

// forEachRawRow runs each language's rows (name names one) as subtests,
// in turn on one pool of that language on bare pipes; i is the row's index
// among its language's.
func forEachRawRow[R any](t *testing.T, rows map[string][]R, name func(R) string, test func(t *testing.T, p *rawPool, i int, row R)) {
	forEachArraysLang(t, rows, func(t *testing.T, l arraysLang, rows []R) {
		p := l.raw(t)
		for i, r := range rows {
			t.Run(name(r), func(t *testing.T) { test(t, p, i, r) })
		}
	})
}

// callFrame is a call message with arrays described and ret (the "ret"
// member's text, which may carry members after it), as nexus writes them.
func callFrame(id, mid int, args string, arrays []ndarray.Array, ret string) string {
	msg := fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":%s,"progress":false`, id, mid, args)
	if len(arrays) > 0 {
		msg += `,"arrays":` + string(ndarray.AppendDescriptors(nil, arrays))
	}
	if ret != "" {
		msg += `,"ret":` + ret
	}
	return msg + "}"
}

// callWithArrays sends the arrays' blobs and the call, and returns the
// reply and the blobs before it.
func (p *rawPool) callWithArrays(t *testing.T, id, mid int, args string, arrays []ndarray.Array, ret string) (map[string]any, [][]byte) {
	t.Helper()
	for _, a := range arrays {
		p.sendBlob(t, a.Data)
	}
	p.send(t, callFrame(id, mid, args, arrays, ret))
	return p.recvWithBlobs(t)
}

// callValue sends one call and returns its reply, which must carry no blobs.
func (p *rawPool) callValue(t *testing.T, frame string) map[string]any {
	t.Helper()
	p.send(t, frame)
	return p.recv(t)
}

// quoted is s as a JSON string: the value of a function that returns text.
func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// flat is the numbers of a nest of lists, in order, as their JSON text.
func flat(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, flat(e)...)
		}
		return out
	case json.Number:
		return []string{string(x)}
	}
	return []string{fmt.Sprintf("<%T %v>", v, v)}
}

func intTexts(xs []int64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatInt(x, 10)
	}
	return out
}

// realTexts is xs as Go writes them: sameNumbers compares them by value.
func realTexts(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return out
}

// sameNumbers compares number texts: equal, or the same double.
func sameNumbers(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		g, err1 := strconv.ParseFloat(got[i], 64)
		w, err2 := strconv.ParseFloat(want[i], 64)
		if err1 != nil || err2 != nil || math.Float64bits(g) != math.Float64bits(w) {
			return false
		}
	}
	return true
}

// canonical writes a pool's JSON answer as nexus writes numbers to clients
// (as ndarray.AppendJSON writes an array's): Ints as digits, Reals as the
// shortest text that reads back.
func canonical(t *testing.T, raw []byte, kind ndarray.Number) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var write func(dst []byte, v any) []byte
	write = func(dst []byte, v any) []byte {
		switch x := v.(type) {
		case []any:
			dst = append(dst, '[')
			for i, e := range x {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = write(dst, e)
			}
			return append(dst, ']')
		case json.Number:
			if kind == ndarray.Int {
				return append(dst, x...)
			}
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				t.Fatal(err)
			}
			return ndarray.AppendReal(dst, f)
		}
		t.Fatalf("not a nest of numbers: %s", raw)
		return nil
	}
	return string(write(nil, v))
}

// argumentCase is a call with arrays in its arguments, made twice: with
// the arrays, and with them written as JSON. Both replies must be the
// same (an array argument is exactly the value its JSON gives, wherever
// it sits), and what it wants of them.
type argumentCase struct {
	name    string
	mid     int
	args    string // null where an array goes
	arrays  []ndarray.Array
	want    string   // the value's JSON text, or ""
	numbers []string // the value's numbers in order, compared by value, or nil
	error   string   // the error expected instead of a result
	// arraysOnly: the JSON form is not the same value (NaN goes as a
	// string), so only the call with arrays is made.
	arraysOnly bool
}

func argumentCases() map[string][]argumentCase {
	cases := map[string][]argumentCase{}
	// Python: describe shows its arguments as the function sees them
	// (repr tells 1 from 1.0 and lists from tuples).
	for _, c := range []struct {
		name   string
		args   string
		arrays []ndarray.Array
		repr   string
	}{
		{"top-level i8", `[null]`, []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{3}, 1, -2, 3)}, `([1, -2, 3],)`},
		{"i8 extremes", `[null]`, []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{3}, math.MinInt64, math.MaxInt64, 0)}, `([-9223372036854775808, 9223372036854775807, 0],)`},
		{"inside a record", `[{"name":"a","xs":null,"n":1}]`, []ndarray.Array{ndarraytest.I8Array([]any{0, "xs"}, []int{2}, 4, 5)}, `({'name': 'a', 'xs': [4, 5], 'n': 1},)`},
		{"inside a list", `[7,[[1.5],null]]`, []ndarray.Array{ndarraytest.F8Array([]any{1, 1}, []int{4}, 2.5, math.Copysign(0, -1), 1e300, 2)}, `(7, [[1.5], [2.5, -0.0, 1e+300, 2.0]])`},
		{"rank 2 i4", `[null]`, []ndarray.Array{ndarraytest.I4Array([]any{0}, []int{2, 3}, 1, 2, 3, 4, 5, math.MinInt32)}, `([[1, 2, 3], [4, 5, -2147483648]],)`},
		{"rank 3 f8", `[null]`, []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{2, 2, 2}, 0, 1, 2, 3, 4, 5, 6, 7)}, `([[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]],)`},
		{"empty", `[null]`, []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{0})}, `([],)`},
		{"empty rows", `[null]`, []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{2, 0})}, `([[], []],)`},
		{"no rows", `[null]`, []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{0, 3})}, `([],)`},
		{"two arrays", `[null,{"m":[null,3]}]`, []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{1}, 1), ndarraytest.F8Array([]any{1, "m", 0}, []int{1, 2}, 0.5, 0.25)}, `([1], {'m': [[[0.5, 0.25]], 3]})`},
	} {
		cases["py"] = append(cases["py"], argumentCase{name: c.name, mid: arrDescribe, args: c.args, arrays: c.arrays, want: quoted(c.repr)})
	}

	// R: same(x, y) is R's identical() of its two arguments, the array
	// first and then second beside its JSON; text(x) is R's deparse.
	odd := func(i int) int32 { return int32(i*7919%20011) - 10000 }
	real := func(i int) float64 {
		return []float64{0.1, -2.5, 3, 1e300, -0.0, 5e-324, 1.0 / 3, 123456789}[i%8] * float64(i+1)
	}
	for _, c := range []struct {
		name string
		a    ndarray.Array
	}{
		{"i4 vector", ndarraytest.I4Array(nil, []int{300}, gen(300, odd)...)},
		{"i4 extremes", ndarraytest.I4Array(nil, []int{4}, math.MaxInt32, -math.MaxInt32, 0, -1)},
		{"-2^31 makes the vector double, as its JSON does", ndarraytest.I4Array(nil, []int{3}, 1, math.MinInt32, 3)},
		{"one element", ndarraytest.I4Array(nil, []int{1}, 42)},
		{"f8 vector", ndarraytest.F8Array(nil, []int{300}, gen(300, real)...)},
		{"f8 whole numbers stay doubles", ndarraytest.F8Array(nil, []int{3}, 1, 2, 3)},
		{"i4 matrix", ndarraytest.I4Array(nil, []int{100, 3}, gen(300, odd)...)},
		{"-2^31 makes its row double", ndarraytest.I4Array(nil, []int{3, 2}, 1, 2, math.MinInt32, 4, 5, 6)},
		{"f8 matrix", ndarraytest.F8Array(nil, []int{50, 4}, gen(200, real)...)},
		{"one row", ndarraytest.F8Array(nil, []int{1, 5}, 1, 2, 3, 4, 5)},
		{"one column", ndarraytest.I4Array(nil, []int{5, 1}, 1, 2, 3, 4, 5)},
		{"rank 3", ndarraytest.I4Array(nil, []int{2, 3, 4}, gen(24, odd)...)},
		{"rank 3 f8", ndarraytest.F8Array(nil, []int{3, 1, 2}, gen(6, real)...)},
		{"rank 4", ndarraytest.I4Array(nil, []int{2, 2, 2, 2}, gen(16, odd)...)},
		{"empty", ndarraytest.I4Array(nil, []int{0})},
		{"empty f8", ndarraytest.F8Array(nil, []int{0})},
		{"empty rows", ndarraytest.F8Array(nil, []int{2, 0})},
		{"no rows", ndarraytest.I4Array(nil, []int{0, 3})},
		{"empty middle level", ndarraytest.I4Array(nil, []int{2, 0, 3})},
		{"empty inner level", ndarraytest.F8Array(nil, []int{2, 3, 0})},
	} {
		for i := range 2 {
			a := c.a
			a.Path = []any{i}
			args := []string{poolJSON(c.a), poolJSON(c.a)}
			args[i] = "null"
			cases["r"] = append(cases["r"], argumentCase{name: fmt.Sprintf("%s as argument %d", c.name, i+1), mid: raSame,
				args: "[" + strings.Join(args, ",") + "]", arrays: []ndarray.Array{a}, want: `"same"`})
		}
	}
	matrix := ndarraytest.F8Array([]any{0, "data", "xs"}, []int{2, 2}, 1, 2.5, 3, 4)
	cases["r"] = append(cases["r"],
		argumentCase{name: "in a record", mid: raSameIn, args: `[{"data":{"xs":null},"n":1},` + poolJSON(matrix) + `]`, arrays: []ndarray.Array{matrix}, want: `"same"`},
		argumentCase{name: "in a list", mid: raSame, args: `[[5,null,"x"],[5,[7,8,9],"x"]]`, arrays: []ndarray.Array{ndarraytest.I4Array([]any{0, 1}, []int{3}, 7, 8, 9)}, want: `"same"`},
		argumentCase{name: "two arrays", mid: raSame, args: `[null,null]`, arrays: []ndarray.Array{ndarraytest.I4Array([]any{0}, []int{3}, 1, 2, 3), ndarraytest.I4Array([]any{1}, []int{3}, 1, 2, 3)}, want: `"same"`},
		// A call with arrays answers as one without.
		argumentCase{name: "add", mid: raAdd, args: `[null,1]`, arrays: []ndarray.Array{ndarraytest.I4Array([]any{0}, []int{2}, 1, 2)}, want: `[2,3]`},
	)
	for _, c := range []struct {
		a    ndarray.Array
		want string
	}{
		{ndarraytest.I4Array([]any{0}, []int{3}, 1, 2, 3), "1:3"},
		{ndarraytest.I4Array([]any{0}, []int{3}, 5, -1, 7), "c(5L, -1L, 7L)"},
		{ndarraytest.F8Array([]any{0}, []int{3}, 5, -1, 0.5), "c(5, -1, 0.5)"},
		{ndarraytest.I4Array([]any{0}, []int{1}, math.MinInt32), "-2147483648"},
		{ndarraytest.F8Array([]any{0}, []int{2, 2}, 1, 2, 3, 4), "list(c(1, 2), c(3, 4))"},
		{ndarraytest.I4Array([]any{0}, []int{2, 0}), "list(logical(0), logical(0))"},
		{ndarraytest.I4Array([]any{0}, []int{0, 2}), "logical(0)"},
		{ndarraytest.I4Array([]any{0}, []int{2, 1, 2}, 1, 2, 3, 4), "list(list(1:2), list(3:4))"},
	} {
		cases["r"] = append(cases["r"], argumentCase{name: fmt.Sprintf("text of %s %v", c.a.DType, c.a.Shape), mid: raText, args: `[null]`, arrays: []ndarray.Array{c.a}, want: quoted(c.want)})
	}
	// NaN and the infinities come as arrays of rank 0: in a list of
	// numbers they are numbers, the list a double vector, however many,
	// with null beside them, and in rows of one.
	for _, c := range []struct {
		args   string
		arrays []ndarray.Array
		want   string
	}{
		{`[null]`, []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{}, math.Inf(-1))}, "-Inf"},
		{`[[1.5,null,null]]`, []ndarray.Array{ndarraytest.F8Array([]any{0, 1}, []int{}, math.NaN()), ndarraytest.F8Array([]any{0, 2}, []int{}, math.Inf(1))}, "c(1.5, NaN, Inf)"},
		{`[[null,null,2]]`, []ndarray.Array{ndarraytest.F8Array([]any{0, 1}, []int{}, math.Inf(1))}, "c(NA, Inf, 2)"},
		{`[[[1,null],[2.5]]]`, []ndarray.Array{ndarraytest.F8Array([]any{0, 0, 1}, []int{}, math.Inf(-1))}, "list(c(1, -Inf), 2.5)"},
		{`[{"x":null,"y":1}]`, []ndarray.Array{ndarraytest.F8Array([]any{0, "x"}, []int{}, math.NaN())}, "list(x = NaN, y = 1L)"},
	} {
		cases["r"] = append(cases["r"], argumentCase{name: "non-finite " + c.args, mid: raText, args: c.args, arrays: c.arrays, want: quoted(c.want), arraysOnly: true})
	}

	// C++: each parameter type converts what arrives, or says why not.
	wide := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 53, 1<<53 + 1}
	i64s := append(wide, ints(294, -1000, 7)...)
	outOfInt := ints(300, 0, 1)
	outOfInt[7] = 1 << 31
	negative := ints(300, 5, 1)
	negative[299] = -1
	floats := reals(300)
	floats[3] = 1e300 // does not fit in a float
	grid := reals(300)
	cube := ints(2*3*4, -12, 1)
	badCube := slices.Clone(cube)
	badCube[len(badCube)-1] = math.MinInt64
	cases["cpp"] = []argumentCase{
		{name: "vector<int64_t> from i8", mid: cppEchoI64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, i64s...)}, numbers: intTexts(i64s)},
		{name: "vector<int64_t> from i4", mid: cppEchoI64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I4Array([]any{0}, []int{3}, math.MinInt32, 0, math.MaxInt32)},
			numbers: []string{"-2147483648", "0", "2147483647"}},
		{name: "vector<int> from i8", mid: cppEchoInts, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{4}, -2147483648, -1, 0, 2147483647)},
			numbers: []string{"-2147483648", "-1", "0", "2147483647"}},
		{name: "vector<int> from i8 out of range", mid: cppEchoInts, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, outOfInt...)},
			error: "argument 1 at [7]: 2147483648 does not fit in int32_t"},
		{name: "vector<uint64_t> from a negative i8", mid: cppEchoU64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, negative...)},
			error: "argument 1 at [299]: -1 does not fit in uint64_t"},
		{name: "vector<double> from f8", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, reals(300)...)}, numbers: realTexts(reals(300))},
		{name: "vector<double> from i8", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{3}, -3, 0, 1<<53)},
			numbers: []string{"-3.0", "0.0", "9007199254740992.0"}},
		{name: "vector<float> from f8", mid: cppEchoFloats, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{3}, 0.1, -2.5, 1e30)},
			numbers: []string{"0.1", "-2.5", "1e+30"}},
		{name: "vector<float> out of range", mid: cppEchoFloats, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, floats...)},
			error: "argument 1 at [3]: 1e+300 does not fit in float"},
		{name: "vector<vector<double>>", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{20, 15}, grid...)}, numbers: realTexts(grid)},
		{name: "vector<vector<int64_t>>", mid: cppEchoIntGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{2, 3}, 1, 2, 3, 4, 5, 6)},
			numbers: []string{"1", "2", "3", "4", "5", "6"}},
		{name: "rank 3", mid: cppEchoCube, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{2, 3, 4}, cube...)}, numbers: intTexts(cube)},
		{name: "rank 3 out of range", mid: cppEchoCube, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{2, 3, 4}, badCube...)},
			error: "argument 1 at [1][2][3]: -9223372036854775808 does not fit in int32_t"},
		{name: "empty", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{0})}, want: `[]`},
		{name: "empty rows", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{2, 0})}, want: `[[],[]]`},
		{name: "no rows", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{0, 5})}, want: `[]`},
		{name: "a rank the parameter does not have", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{3}, 1.5, 2, 3)},
			error: "argument 1 at [0]: expected an array (vector<double>), got 1.5"},
		{name: "a matrix for a vector", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{1, 2}, 1, 2)},
			error: "argument 1 at [0]: expected a number (double), got an array of 2"},
		{name: "vector<bool> takes no numbers", mid: cppEchoBools, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{2}, 1, 0)},
			error: "argument 1 at [0]: expected a boolean, got 1"},
		{name: "optional<vector<double>>", mid: cppEchoMaybeDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, reals(300)...)}, numbers: realTexts(reals(300))},
		{name: "arrays beside other arguments", mid: cppMixArgs, args: `[null,7,null]`, arrays: []ndarray.Array{
			ndarraytest.F8Array([]any{0}, []int{2}, 0.5, 1), ndarraytest.I8Array([]any{2}, []int{2}, -4, 4)},
			numbers: []string{"0.5", "1.0", "7", "-4", "4"}},
		{name: "arrays inside a record", mid: cppEchoSeries, args: `[{"name":"s","values":null,"counts":null}]`, arrays: []ndarray.Array{
			ndarraytest.F8Array([]any{0, "values"}, []int{300}, reals(300)...), ndarraytest.I8Array([]any{0, "counts"}, []int{2, 2}, 1, -2, 3, math.MaxInt64)}},
		{name: "arrays inside a record, the value", mid: cppEchoSeries, args: `[{"name":"s","values":null,"counts":null}]`, arrays: []ndarray.Array{
			ndarraytest.F8Array([]any{0, "values"}, []int{2}, 0.5, -1), ndarraytest.I8Array([]any{0, "counts"}, []int{2, 2}, 1, -2, 3, math.MaxInt64)},
			want: `{"counts":[[1,-2],[3,9223372036854775807]],"name":"s","values":[0.5,-1.0]}`},
		{name: "an array inside a record out of range", mid: cppEchoSeries, args: `[{"name":"s","values":[],"counts":[[1],null]}]`, arrays: []ndarray.Array{
			ndarraytest.F8Array([]any{0, "counts", 1}, []int{2}, 1, 2.5)},
			error: "argument 1 at .counts[1][1]: expected an integer (int64_t), got 2.5"},
		{name: "nlohmann::json", mid: cppWrapJSON, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{3}, -1, 0, 1)}},
	}
	return cases
}

func TestArrayArguments(t *testing.T) {
	forEachRawRow(t, argumentCases(), func(c argumentCase) string { return c.name }, func(t *testing.T, p *rawPool, i int, tt argumentCase) {
		withArrays, blobs := p.callWithArrays(t, 2*i+1, tt.mid, tt.args, tt.arrays, "")
		if len(blobs) > 0 {
			t.Fatalf("%d blobs came before the reply %v", len(blobs), withArrays)
		}
		if !tt.arraysOnly {
			asJSON := p.callValue(t, callFrame(2*i+2, tt.mid, jsonForm(t, tt.args, tt.arrays), nil, ""))
			sameReplies(t, "with arrays and as JSON", withArrays, asJSON)
		}
		if !isResult(t, withArrays, tt.error) {
			return
		}
		if got := jsonText(t, withArrays["value"]); tt.want != "" && got != tt.want {
			t.Errorf("value %s, want %s", got, tt.want)
		}
		if got := flat(withArrays["value"]); tt.numbers != nil && !sameNumbers(got, tt.numbers) {
			t.Errorf("numbers %v, want %v", got, tt.numbers)
		}
	})
}

// resultCase is a call with ret on bare pipes and what must come back: a
// result that is a rectangular nest of numbers as one blob and a result
// describing it, or JSON where an array cannot say it.
type resultCase struct {
	name   string
	mid    int
	args   string
	arrays []ndarray.Array
	ret    string         // the call's ret member, or ""
	array  *ndarray.Array // the array expected at path [] (Data nil: its bytes not compared), or nil for JSON
	json   string         // the JSON value expected when array is nil
	prefix bool           // json is a prefix of the value
	// sameWithoutRet: the reply is the one the call gets without ret,
	// whatever it is (what cannot go as an array goes as JSON: the ret
	// hint never changes what the client gets).
	sameWithoutRet bool
}

// makeArgs are the arguments of make(kind, n) in arrays.py and arrays.R.
func makeArgs(kind string, n int) string { return fmt.Sprintf(`[%q,%d]`, kind, n) }

// result is the array expected back at path [].
func result(a ndarray.Array) *ndarray.Array { a.Path = []any{}; return &a }

func resultCases() map[string][]resultCase {
	cases := map[string][]resultCase{}
	intRet, realRet := `{"rank":1,"number":"int"}`, `{"rank":1,"number":"real"}`
	intMatrixRet, matrixRet := `{"rank":2,"number":"int"}`, `{"rank":2,"number":"real"}`

	// Python.
	py := func(kind string, n int, ret string, a ndarray.Array) resultCase {
		return resultCase{name: kind, mid: arrMake, args: makeArgs(kind, n), ret: ret, array: result(a)}
	}
	cases["py"] = append(cases["py"],
		py("ints", 300, intRet, ndarraytest.I8Array(nil, []int{300}, gen(300, func(i int) int64 { return int64(i*7 - 1000) })...)),
		py("int64 edges", 256, intRet, ndarraytest.I8Array(nil, []int{256}, gen(256, func(i int) int64 {
			switch i {
			case 0:
				return math.MinInt64
			case 1:
				return math.MaxInt64
			}
			return int64(i - 2)
		})...)),
		py("reals", 300, realRet, ndarraytest.F8Array(nil, []int{300}, gen(300, func(i int) float64 { return float64(i)/8 - 3 })...)),
		py("ints as reals", 300, realRet, ndarraytest.F8Array(nil, []int{300}, gen(300, func(i int) float64 { return float64(i) })...)),
		py("matrix", 100, matrixRet, ndarraytest.F8Array(nil, []int{3, 100}, gen(300, func(i int) float64 { return float64(i/100)*10.5 + float64(i%100) })...)),
		py("int cube", 50, `{"rank":3,"number":"int"}`, ndarraytest.I8Array(nil, []int{3, 2, 50}, gen(300, func(i int) int64 { return int64(i/100*100 + i%100/50*10 + i%50) })...)),
		py("tuple rows", 200, intMatrixRet, ndarraytest.I8Array(nil, []int{2, 200}, gen(400, func(i int) int64 { return int64(i % 200) })...)),
	)
	for _, c := range []struct {
		kind, ret string
		n         int
	}{
		{"ragged", intMatrixRet, 300},
		{"huge", intRet, 300},
		{"huge", intRet, 300_000}, // beyond 64 bits in the last of several pieces
		{"floats", intRet, 300},
		{"bool", intRet, 300},
		{"bool", realRet, 300},
		{"short", intRet, 3},
		{"not a list", intRet, 300},
		{"ints", intMatrixRet, 300}, // numbers where rows should be
		{"matrix", realRet, 100},    // rows where numbers should be
		{"ints", `{"rank":0,"number":"int"}`, 300},
		{"ints", `{"rank":1,"number":"complex"}`, 300},
		{"nan", realRet, 300},
		{"inf", realRet, 300},
	} {
		cases["py"] = append(cases["py"], resultCase{name: fmt.Sprintf("%s %d as JSON with %s", c.kind, c.n, c.ret), mid: arrMake, args: makeArgs(c.kind, c.n), ret: c.ret, sameWithoutRet: true})
	}
	// NaN and infinity go as the wire's strings, ret or not
	// (docs/internals.md, "Values").
	cases["py"] = append(cases["py"], resultCase{name: "NaN as a string", mid: arrMake, args: makeArgs("nan", 300), ret: realRet,
		json: "[" + strings.Repeat("0.5,", 300) + `"NaN"]`})

	// R.
	seqInts := func(n int) []int32 { return gen(n, func(i int) int32 { return int32(i + 1) }) }
	var matrixInts, matrixReals, rows, mixedRows, intRows []float64
	for i := 1; i <= 200; i++ {
		matrixInts = append(matrixInts, float64(i), float64(i+200))
	}
	for i := 1; i <= 100; i++ {
		matrixReals = append(matrixReals, float64(i)/8, float64(i+100)/8, float64(i+200)/8)
		rows = append(rows, float64(i)/2, -float64(i), float64(i)*1.5)
	}
	for i := 1; i <= 150; i++ {
		if i%2 == 1 {
			mixedRows = append(mixedRows, float64(i), -float64(i))
		} else {
			mixedRows = append(mixedRows, float64(i)/2, 0.25)
		}
		intRows = append(intRows, float64(i), -float64(i))
	}
	toInt32 := func(fs []float64) []int32 {
		return gen(len(fs), func(i int) int32 { return int32(fs[i]) })
	}
	jsonList := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i + 1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	quarter := func(i int) string { return strconv.FormatFloat(float64(i)/4, 'g', -1, 64) }
	quarters := func(n int) []float64 { return gen(n, func(i int) float64 { return float64(i+1) / 4 }) }
	lastIs := func(last string, f func(i int) string) func(i int) string {
		return func(i int) string {
			if i == 300 {
				return last
			}
			return f(i)
		}
	}
	ragged := func(boxed bool) func(i int) string {
		return func(i int) string {
			k := 1 + i%3
			if k == 1 && !boxed {
				return "1"
			}
			return jsonList(k, strconv.Itoa)
		}
	}
	r := func(name, kind string, n int, ret string, a *ndarray.Array, json string) resultCase {
		return resultCase{name: name, mid: raMake, args: makeArgs(kind, n), ret: ret, array: a, json: json}
	}
	cases["r"] = append(cases["r"],
		r("integer vector", "ints", 300, intRet, result(ndarraytest.I4Array(nil, []int{300}, seqInts(300)...)), ""),
		r("double vector", "reals", 300, realRet, result(ndarraytest.F8Array(nil, []int{300}, quarters(300)...)), ""),
		r("large doubles", "big_reals", 300, realRet, result(ndarraytest.F8Array(nil, []int{300}, gen(300, func(i int) float64 { return (float64(i+1)-150)*1e15 + 0.5 })...)), ""),
		// I() marks a value as is (class AsIs); its data go as an array all the same.
		r("I(integer vector)", "asis", 300, intRet, result(ndarraytest.I4Array(nil, []int{300}, seqInts(300)...)), ""),
		r("I(double vector)", "asis_reals", 300, realRet, result(ndarraytest.F8Array(nil, []int{300}, quarters(300)...)), ""),
		r("I(integer matrix)", "asis_matrix", 200, intMatrixRet, result(ndarraytest.I4Array(nil, []int{200, 2}, toInt32(matrixInts)...)), ""),
		r("list of I(double vector)", "asis_rows", 100, matrixRet, result(ndarraytest.F8Array(nil, []int{100, 3}, rows...)), ""),
		r("integer matrix, row by row", "matrix_ints", 200, intMatrixRet, result(ndarraytest.I4Array(nil, []int{200, 2}, toInt32(matrixInts)...)), ""),
		r("double matrix", "matrix_reals", 100, matrixRet, result(ndarraytest.F8Array(nil, []int{100, 3}, matrixReals...)), ""),
		r("list of double vectors", "rows", 100, matrixRet, result(ndarraytest.F8Array(nil, []int{100, 3}, rows...)), ""),
		r("list of integer and double vectors", "mixed_rows", 150, matrixRet, result(ndarraytest.F8Array(nil, []int{150, 2}, mixedRows...)), ""),
		r("list of integer vectors", "int_rows", 150, intMatrixRet, result(ndarraytest.I4Array(nil, []int{150, 2}, toInt32(intRows)...)), ""),
		// JSON as today where an array cannot say it.
		r("NA is null", "na_ints", 300, intRet, nil, jsonList(300, lastIs("null", strconv.Itoa))),
		r("NA_real_ is null", "na_reals", 300, realRet, nil, jsonList(300, lastIs("null", quarter))),
		// NaN and infinity go as JSON, as the wire's strings (docs/internals.md, "Values").
		r("NaN as a string", "nan", 300, realRet, nil, jsonList(300, lastIs(`"NaN"`, quarter))),
		r("Inf as a string", "inf", 300, realRet, nil, jsonList(300, lastIs(`"Infinity"`, quarter))),
		r("NA in a matrix", "na_matrix", 200, matrixRet, nil, jsonList(200, func(i int) string {
			if i == 200 {
				return "[200,null]"
			}
			return fmt.Sprintf("[%d,%d]", i, i+200)
		})),
		r("ragged rows, a length-1 row a list", "ragged", 300, matrixRet, nil, jsonList(300, ragged(true))),
		r("ragged rows without ret", "ragged", 300, "", nil, jsonList(300, ragged(false))),
		r("few ragged rows", "ragged", 6, matrixRet, nil, jsonList(6, ragged(true))),
		r("small vectors go as JSON", "ints", 10, intRet, nil, jsonList(10, strconv.Itoa)),
		r("no ret, no array", "ints", 300, "", nil, jsonList(300, strconv.Itoa)),
		// The length-1 rule: a list is declared, so a length-1 vector is one.
		r("length-1 vector under ret", "one", 1, intRet, nil, `[5]`),
		r("length-1 vector without ret", "one", 1, "", nil, `5`),
		r("length-1 double under ret", "one_real", 1, realRet, nil, `[2.5]`),
		r("NA under ret", "one_na", 1, intRet, nil, `[null]`),
		r("list of length-1 vectors, rank 2", "ones", 3, matrixRet, nil, `[[1],[2],[3]]`),
		r("list of length-1 vectors, rank 1", "ones", 3, intRet, nil, `[1,2,3]`),
		r("many length-1 vectors, rank 2", "ones", 300, matrixRet, result(ndarraytest.I4Array(nil, []int{300, 1}, seqInts(300)...)), ""),
		r("1x1 matrix", "one_by_one", 1, matrixRet, nil, `[[7]]`),
		r("empty vector", "empty", 0, intRet, nil, `[]`),
		r("NULL", "nothing", 0, intRet, nil, `null`),
		r("names dropped", "named", 2, realRet, nil, `[1,2]`),
		r("factor", "factor", 300, intRet, nil, jsonList(300, func(i int) string { return `"` + string(rune('x'+(i+1)%2)) + `"` })),
		r("data frame", "frame", 2, matrixRet, nil, `[{"x":1,"y":0.5},{"x":2,"y":1}]`),
		// Finite numbers whose sum overflows still go as an array.
		r("doubles whose sum is infinite", "huge", 300, realRet, result(ndarraytest.F8Array(nil, []int{300}, gen(300, func(i int) float64 { return []float64{1.5e308, 1.6e308}[i%2] })...)), ""),
		r("rows whose sum is infinite", "huge_rows", 300, matrixRet, result(ndarraytest.F8Array(nil, []int{300, 2}, gen(600, func(i int) float64 {
			if i%2 == 0 {
				return 1.5e308
			}
			return -float64(i/2 + 1)
		})...)), ""),
		// Arrays over a piece (131072 elements) are written in several.
		r("integer vector in pieces", "ints", 300_000, intRet, result(ndarraytest.I4Array(nil, []int{300_000}, seqInts(300_000)...)), ""),
		r("I(double vector) in pieces", "asis_reals", 300_000, realRet, result(ndarraytest.F8Array(nil, []int{300_000}, quarters(300_000)...)), ""),
		r("rows in blocks", "rows", 100_000, matrixRet, result(ndarraytest.F8Array(nil, []int{100_000, 3}, gen(300_000, func(i int) float64 {
			r := float64(i/3 + 1)
			return []float64{r / 2, -r, r * 1.5}[i%3]
		})...)), ""),
		r("integer rows in blocks", "int_rows", 140_000, matrixRet, result(ndarraytest.I4Array(nil, []int{140_000, 2}, gen(280_000, func(i int) int32 {
			if i%2 == 0 {
				return int32(i/2 + 1)
			}
			return -int32(i/2 + 1)
		})...)), ""),
		r("mixed rows in blocks", "mixed_rows", 140_000, matrixRet, result(ndarraytest.F8Array(nil, []int{140_000, 2}, gen(280_000, func(i int) float64 {
			r := i/2 + 1
			if r%2 == 1 {
				return []float64{float64(r), -float64(r)}[i%2]
			}
			return []float64{float64(r) / 2, 0.25}[i%2]
		})...)), ""),
	)

	// C++.
	grid := make([]int64, 0, 600)
	for i := int64(0); i < 20; i++ {
		for j := int64(0); j < 30; j++ {
			grid = append(grid, i*30+j-7)
		}
	}
	widened := ints(300, -150, 1)
	floatsAsDoubles := gen(300, func(i int) float64 { return float64(i) * 0.25 })
	cases["cpp"] = []resultCase{
		{name: "vector<int64_t>", mid: cppEchoI64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, ints(300, math.MinInt64, 1)...)},
			ret: intRet, array: result(ndarraytest.I8Array(nil, []int{300}, ints(300, math.MinInt64, 1)...))},
		{name: "vector<int> widens to i8", mid: cppEchoInts, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, widened...)},
			ret: intRet, array: result(ndarraytest.I8Array(nil, []int{300}, widened...))},
		{name: "vector<double>", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, reals(300)...)},
			ret: realRet, array: result(ndarraytest.F8Array(nil, []int{300}, reals(300)...))},
		{name: "vector<float>", mid: cppEchoFloats, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, floatsAsDoubles...)},
			ret: realRet, array: result(ndarraytest.F8Array(nil, []int{300}, floatsAsDoubles...))},
		{name: "vector<vector<int64_t>>", mid: cppMakeGrid, args: `[20,30,false]`,
			ret: intMatrixRet, array: result(ndarraytest.I8Array(nil, []int{20, 30}, grid...))},
		{name: "vector<vector<double>>", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{10, 30}, reals(300)...)},
			ret: matrixRet, array: result(ndarraytest.F8Array(nil, []int{10, 30}, reals(300)...))},
		{name: "rank 3", mid: cppEchoCube, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{4, 8, 10}, ints(320, -1, 3)...)},
			ret: `{"rank":3,"number":"int"}`, array: result(ndarraytest.I8Array(nil, []int{4, 8, 10}, ints(320, -1, 3)...))},
		{name: "vector<uint64_t> within int64", mid: cppEchoU64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, ints(300, 0, 1<<50)...)},
			ret: intRet, array: result(ndarraytest.I8Array(nil, []int{300}, ints(300, 0, 1<<50)...))},
		{name: "no NaN", mid: cppWithNonFinite, args: `[300,"none"]`,
			ret: realRet, array: &ndarray.Array{Path: []any{}, DType: ndarray.F8, Shape: []int{300}}},
		// These go as JSON, with today's answer.
		{name: "fewer than 256 elements", mid: cppEchoI64s, args: `[[1,2,3]]`, ret: intRet, json: `[1,2,3]`, prefix: true},
		{name: "empty", mid: cppEchoDoubles, args: `[[]]`, ret: realRet, json: `[]`, prefix: true},
		{name: "ragged", mid: cppMakeGrid, args: `[20,30,true]`, ret: intMatrixRet, json: `[[-7,-6,`, prefix: true},
		{name: "another rank", mid: cppMakeGrid, args: `[20,30,false]`, ret: intRet, json: `[[-7,-6,`, prefix: true},
		{name: "a scalar", mid: cppAddInts, args: `[1,2]`, ret: intRet, json: `3`, prefix: true},
		// An unsigned integer past int64 keeps the whole result JSON.
		{name: "uint64 past int64", mid: cppEchoU64s, args: `[[18446744073709551615` + strings.Repeat(",1", 299) + `]]`, ret: intRet,
			json: `[18446744073709551615,1,`, prefix: true},
	}
	return cases
}

func TestArrayResults(t *testing.T) {
	forEachRawRow(t, resultCases(), func(c resultCase) string { return c.name }, func(t *testing.T, p *rawPool, i int, tt resultCase) {
		id := 2*i + 1
		reply, blobs := p.callWithArrays(t, id, tt.mid, tt.args, tt.arrays, tt.ret)
		if tt.sameWithoutRet {
			plain, _ := p.callWithArrays(t, id+1, tt.mid, tt.args, tt.arrays, "")
			if plain["type"] == "error" { // the traceback names a line of the runtime
				delete(reply, "traceback")
				delete(plain, "traceback")
			}
			if len(blobs) > 0 {
				t.Errorf("%d blobs with ret", len(blobs))
			}
			sameReplies(t, "with ret and without", reply, plain)
			return
		}
		if !isResult(t, reply, "") {
			return
		}
		if tt.array == nil {
			if len(blobs) > 0 || reply["arrays"] != nil {
				t.Fatalf("reply %.300v with %d blobs, want JSON", reply, len(blobs))
			}
			got := jsonText(t, reply["value"])
			if got != tt.json && !(tt.prefix && strings.HasPrefix(got, tt.json)) {
				t.Errorf("value %.300s, want %.300s", got, tt.json)
			}
			return
		}
		shape := make([]any, len(tt.array.Shape))
		for i, n := range tt.array.Shape {
			shape[i] = json.Number(strconv.Itoa(n))
		}
		want := map[string]any{"type": "result", "id": json.Number(strconv.Itoa(id)), "value": nil,
			"arrays": []any{map[string]any{"path": []any{}, "dtype": string(tt.array.DType), "shape": shape}}}
		if !reflect.DeepEqual(reply, want) {
			t.Fatalf("reply %.300v, want %v", reply, want)
		}
		if len(blobs) != 1 {
			t.Fatalf("%d blobs, want 1", len(blobs))
		}
		if tt.array.Data != nil && !bytes.Equal(blobs[0], tt.array.Data) {
			t.Errorf("the blob's %d bytes differ from the %d expected", len(blobs[0]), len(tt.array.Data))
		}
	})
}

// protocolErrorCases are what breaks the protocol of each language's pool:
// blobs that the next message does not describe, or describes otherwise.
// The pool says what it saw and exits with status 2.
func protocolErrorCases() map[string][]exitCase {
	cases := map[string][]exitCase{}
	add := func(lang string, cs ...exitCase) { cases[lang] = append(cases[lang], cs...) }
	add("py",
		exitCase{"blob before a call without arrays", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null]}`)
		}, 2, "call message describes 0 arrays but 1 blobs came before it"},
		exitCase{"array without its blob", func(p *rawPool, t *testing.T) {
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[1]}]}`)
		}, 2, "call message describes 1 arrays but 0 blobs came before it"},
		exitCase{"blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1))
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "cancel message describes 0 arrays but 1 blobs came before it"},
		exitCase{"blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1, 2))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call message: arrays[0] of shape [3] and dtype i8 needs 24 bytes, but its blob has 16"},
		exitCase{"unknown dtype", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, []byte{1})
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"u1","shape":[1]}]}`)
		}, 2, `call message: arrays[0] has dtype "u1" (want i4, i8 or f8)`},
		exitCase{"no shape", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8"}]}`)
		}, 2, "call message: arrays[0] has shape null"},
		exitCase{"path to a value", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[5],"arrays":[{"path":[0],"dtype":"i8","shape":[1]}]}`)
		}, 2, "call 1: array path [0] holds a value, not the null placeholder"},
		exitCase{"path to nothing", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, ndarraytest.I8(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[{"a":null}],"arrays":[{"path":[0,"b"],"dtype":"i8","shape":[1]}]}`)
		}, 2, `call 1: array path [0,"b"]: nothing at step 1`},
		exitCase{"blob too long", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0xC0, 0, 0, 1}) }, 2, "blob length 1073741825 is over 1073741824"},
	)

	four := ndarraytest.I4Array([]any{0}, []int{4}, 1, 2, 3, 4)
	add("r",
		exitCase{"a blob the call does not describe", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, `{"type":"call","id":1,"mid":1,"args":[null]}`)
		}, 2, "call 1 describes 0 arrays, but 1 blobs came before it"},
		exitCase{"an array without its blob", func(p *rawPool, t *testing.T) {
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{four}, ""))
		}, 2, "call 1 describes 1 arrays, but 0 blobs came before it"},
		exitCase{"a blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data[:12])
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{four}, ""))
		}, 2, "call 1, array 1: shape [4] of i4 needs 16 bytes, but its blob has 12"},
		exitCase{"a dtype R does not take", func(p *rawPool, t *testing.T) {
			a := ndarraytest.I8Array([]any{0}, []int{2}, 1, 2)
			p.sendBlob(t, a.Data)
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{a}, ""))
		}, 2, `call 1, array 1: dtype "i8" is not one this pool takes (i4, f8)`},
		exitCase{"a path to no argument", func(p *rawPool, t *testing.T) {
			a := four
			a.Path = []any{3}
			p.sendBlob(t, a.Data)
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{a}, ""))
		}, 2, "call 1, array 1: its path leads nowhere in the arguments"},
		exitCase{"a path to a value", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, callFrame(1, raEcho, `[5]`, []ndarray.Array{four}, ""))
		}, 2, "call 1, array 1: its place in the arguments is not null"},
		exitCase{"a blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "1 blobs came before a cancel message: only a call carries arrays"},
		exitCase{"a blob over the limit", func(p *rawPool, t *testing.T) {
			p.in.Write([]byte{0xC0, 0, 0, 1})
		}, 2, "blob length 1073741825 is over 1073741824"},
	)

	blob := ndarraytest.I8(1, 2, 3)
	add("cpp",
		exitCase{"a blob no message describes", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":41,"args":[1,2]}`)
		}, 2, "1 blobs came before a call message that describes none"},
		exitCase{"a blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "1 blobs came before a cancel message that describes none"},
		exitCase{"fewer blobs than arrays", func(p *rawPool, t *testing.T) {
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "a call message describes 1 arrays but 0 blobs came before it"},
		exitCase{"a blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[4]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8","shape":[4]}: it needs 32 bytes, the blob has 24`},
		exitCase{"an unknown dtype", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"u8","shape":[3]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"u8","shape":[3]}: unknown dtype (this pool takes i4, i8 and f8)`},
		exitCase{"no shape", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8"}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8"}: no shape (a list of lengths)`},
		exitCase{"rank 0 with more than one number", func(p *rawPool, t *testing.T) {
			// Rank 0 (shape []) is one number: a NaN or infinity argument.
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8","shape":[]}: it needs 8 bytes, the blob has 24`},
		exitCase{"a place that is not null", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[[1]],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [0]: its place in args is not null"},
		exitCase{"a path past the arguments", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[1],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [1] names no argument"},
		exitCase{"a path to a missing member", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":48,"args":[{"name":"x"}],"arrays":[{"path":[0,"values"],"dtype":"i8","shape":[3]}]}`)
		}, 2, `call 1: array at [0,"values"]: no member "values"`},
		exitCase{"an array where a vector came in JSON", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[[1,2]],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [0]: its place in args is not null"},
		exitCase{"two arrays in one place", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]},{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: two arrays at [0]"},
		exitCase{"a blob over the limit", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF}) }, 2, "blob length 2147483647 is over 1073741824"},
		exitCase{"a cut blob", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0x80, 0, 0, 8, 1, 2}); p.in.Close() }, 2, "end of file inside a blob"},
	)
	return cases
}

func TestArrayProtocolErrors(t *testing.T) {
	forEachArraysLang(t, protocolErrorCases(), func(t *testing.T, l arraysLang, cases []exitCase) {
		if l.slowStart {
			testenv.Long(t)
		}
		testExits(t, l.raw, l.protocolError, cases)
	})
}

// setCase is a call through a Set with arrays, ret or both, made again
// with its arrays written as JSON and no ret: the result's numbers, read
// as JSON, are that call's answer.
type setCase struct {
	name   string
	mid    int
	args   string // null where an array goes
	arrays []ndarray.Array
	ret    *ndarray.Ret
	dtype  ndarray.DType // the result array's, or "" for a JSON result
	// spelling: the pool spells numbers its own way (2.0 for 2): the
	// answers are compared as nexus writes them.
	spelling bool
	echo     bool // the result array is the argument, byte for byte
	boxed    bool // JSON: ret makes a list of the one element the plain call gives bare
	json     string
	give     *bool // GiveArrays: whether the caller's arrays are dropped once sent
	// overLimit: the argument is an array over the frame limit, which
	// fails its call while the pool serves on.
	overLimit bool
	// check is what else the result's JSON must be, for a result with no
	// plain call to compare (NaN goes as a string, not as an argument).
	check func(t *testing.T, got string)
}

func setCases() map[string][]setCase {
	intRet := &ndarray.Ret{Rank: 1, Number: ndarray.Int}
	realRet := &ndarray.Ret{Rank: 1, Number: ndarray.Real}
	matrixRet := &ndarray.Ret{Rank: 2, Number: ndarray.Real}
	cases := map[string][]setCase{}

	// Python.
	vs := gen(1000, func(i int) int64 { return int64(i*i) - 123456789012 })
	mat := ndarraytest.F8Array([]any{0}, []int{40, 30}, gen(40*30, func(i int) float64 { return float64(i)/3 - 100 })...)
	no, yes := false, true
	small := []int64{1, -2, 3, 1 << 40}
	cases["py"] = append(cases["py"],
		setCase{name: "an i8 echo", mid: arrEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{1000}, vs...)}, ret: intRet, dtype: ndarray.I8, echo: true},
		setCase{name: "an array over the frame limit", mid: arrEcho, args: `[null]`, overLimit: true},
		setCase{name: "an f8 matrix", mid: arrEcho, args: `[null]`, arrays: []ndarray.Array{mat}, ret: matrixRet, dtype: ndarray.F8, spelling: true},
		setCase{name: "without ret the same result is JSON", mid: arrEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{1000}, vs...)}},
		// A caller's arrays are dropped once sent only when it hands them
		// over (GiveArrays): a large argument is then not in memory beside
		// its result, and arrays a caller keeps are never written to.
		setCase{name: "arrays kept", mid: arrEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{4}, small...)}, ret: intRet, give: &no},
		setCase{name: "arrays given", mid: arrEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{4}, small...)}, ret: intRet, give: &yes},
	)

	// R takes arrays (i8 narrowed to i4) and answers with arrays whose JSON
	// is the answer to the same call made with JSON.
	big := gen(1000, func(i int) int64 { return int64(i*7919%20011) - 10000 })
	wide := gen(300, func(i int) int64 { return int64(i) * 3_000_000_000 }) // beyond 32 bits: JSON to R, doubles there
	matrix := gen(300, func(i int) float64 { return float64(i*37%101)/8 - 6 })
	cases["r"] = append(cases["r"],
		setCase{name: "integers as i8, narrowed to i4", mid: raEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{1000}, big...)}, ret: intRet, dtype: ndarray.I4},
		setCase{name: "integers beyond 32 bits", mid: raEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, wide...)}, ret: intRet, dtype: ndarray.F8},
		setCase{name: "a matrix of reals", mid: raEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{100, 3}, matrix...)}, ret: matrixRet, dtype: ndarray.F8},
		setCase{name: "a small list comes back as JSON", mid: raEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{5}, 1, 2, 3, 4, 5)}, ret: intRet},
		setCase{name: "a one-element list stays a list", mid: raEcho, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{1}, 7)}, ret: intRet, boxed: true},
		// What arrives is what its JSON would make.
		setCase{name: "same as its JSON", mid: raSame, args: `[null,` + poolJSON(ndarraytest.F8Array(nil, []int{100, 3}, matrix...)) + `]`,
			arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{100, 3}, matrix...)}, json: `"same"`},
		// A NaN keeps the result JSON, with the wire's string in its place.
		setCase{name: "NaN", mid: raMake, args: makeArgs("nan", 300), ret: realRet, check: func(t *testing.T, got string) {
			if !strings.HasSuffix(got, `,74.75,"NaN"]`) {
				t.Errorf("make(nan) = %.80s, want the list with \"NaN\" last", got)
			}
		}},
	)

	// C++.
	floats := gen(300, func(i int) float64 { return float64(float32(float64(i) * 0.1)) })
	for _, c := range []setCase{
		{name: "[Int]", mid: cppEchoI64s, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, append([]int64{math.MinInt64, math.MaxInt64}, ints(298, -9, 1)...)...)}, ret: intRet, dtype: ndarray.I8},
		{name: "[Int] through vector<int>", mid: cppEchoInts, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{300}, ints(300, -100, 3)...)}, ret: intRet, dtype: ndarray.I8},
		{name: "[Real]", mid: cppEchoDoubles, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, reals(300)...)}, ret: realRet, dtype: ndarray.F8},
		{name: "[Real] through vector<float>", mid: cppEchoFloats, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{300}, floats...)}, ret: realRet, dtype: ndarray.F8},
		{name: "[[Real]]", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{20, 15}, reals(300)...)}, ret: matrixRet, dtype: ndarray.F8},
		{name: "[[Int]]", mid: cppEchoIntGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{16, 16}, ints(256, 1<<40, -(1<<33))...)}, ret: &ndarray.Ret{Rank: 2, Number: ndarray.Int}, dtype: ndarray.I8},
		{name: "[[[Int]]]", mid: cppEchoCube, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{4, 8, 10}, ints(320, -160, 1)...)}, ret: &ndarray.Ret{Rank: 3, Number: ndarray.Int}, dtype: ndarray.I8},
		// Rows of 4 KiB and more go out from their own memory, one piece each.
		{name: "[[Real]] of long rows", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{3, 600}, reals(1800)...)}, ret: matrixRet, dtype: ndarray.F8},
		{name: "[[Int]] of long rows", mid: cppEchoIntGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.I8Array([]any{0}, []int{2, 1100}, ints(2200, -1000, 7)...)}, ret: &ndarray.Ret{Rank: 2, Number: ndarray.Int}, dtype: ndarray.I8},
		{name: "[[Real]] of more long rows than one writev takes", mid: cppEchoGrid, args: `[null]`, arrays: []ndarray.Array{ndarraytest.F8Array([]any{0}, []int{1100, 520}, reals(1100*520)...)}, ret: matrixRet, dtype: ndarray.F8},
		{name: "a result without array arguments", mid: cppMakeGrid, args: `[20,30,false]`, ret: &ndarray.Ret{Rank: 2, Number: ndarray.Int}, dtype: ndarray.I8},
	} {
		c.spelling = true
		cases["cpp"] = append(cases["cpp"], c)
	}
	// NaN and the infinities keep a result JSON, as the wire's strings.
	for _, c := range []struct{ what, want string }{{"nan", `"NaN"`}, {"inf", `"Infinity"`}, {"-inf", `"-Infinity"`}} {
		cases["cpp"] = append(cases["cpp"], setCase{name: "withNonFinite " + c.what, mid: cppWithNonFinite, args: `[300,"` + c.what + `"]`, ret: realRet,
			check: func(t *testing.T, got string) {
				var items []json.RawMessage
				if json.Unmarshal([]byte(got), &items) != nil || len(items) != 300 || string(items[150]) != c.want {
					t.Errorf("withNonFinite(300, %s) = %.80s; want JSON with %s at [150]", c.what, got, c.want)
				}
			}})
	}
	return cases
}

func TestArraysThroughSet(t *testing.T) {
	forEachArraysLang(t, setCases(), func(t *testing.T, l arraysLang, cases []setCase) {
		s := l.set(t)
		ctx, cancel := context.WithTimeout(context.Background(), l.setWithin)
		defer cancel()
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				if tt.overLimit {
					// A GiB of untouched zeroes from the OS is address space,
					// not memory. The writer once refused it and the call
					// waited for ever.
					huge := []ndarray.Array{{Path: []any{0}, DType: ndarray.I8, Shape: []int{MaxFrameSize/8 + 1}, Data: make([]byte, MaxFrameSize+8)}}
					tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					defer cancel()
					_, err := s.CallWith(tctx, 0, tt.mid, cppArgs(t, tt.args), CallOptions{Arrays: huge})
					if err == nil || !strings.Contains(err.Error(), "over the 1024 MiB frame limit") {
						t.Errorf("an array of %d bytes: %v, want the frame limit's error", MaxFrameSize+8, err)
					}
					return
				}
				sent := make([]ndarray.Array, len(tt.arrays))
				for i, a := range tt.arrays {
					a.Data = slices.Clone(a.Data)
					sent[i] = a
				}
				got, err := s.CallWith(ctx, 0, tt.mid, cppArgs(t, tt.args), CallOptions{Arrays: sent, Ret: tt.ret, GiveArrays: tt.give != nil && *tt.give})
				if err != nil {
					t.Fatal(err)
				}
				if tt.give != nil {
					if dropped := sent[0].Data == nil; dropped != *tt.give {
						t.Errorf("the caller's array dropped: %v, want %v", dropped, *tt.give)
					}
					if !*tt.give && !bytes.Equal(sent[0].Data, tt.arrays[0].Data) {
						t.Error("the caller's array was written to")
					}
				}
				var text string
				if tt.dtype == "" {
					if len(got.Arrays) != 0 {
						t.Fatalf("%d arrays, want JSON", len(got.Arrays))
					}
					text = string(got.JSON)
				} else {
					if len(got.Arrays) != 1 || string(got.JSON) != "null" {
						t.Fatalf("result %.100s with %d arrays, want one array", got.JSON, len(got.Arrays))
					}
					a := got.Arrays[0]
					if a.DType != tt.dtype || len(tt.arrays) == 1 && !slices.Equal(a.Shape, tt.arrays[0].Shape) {
						t.Errorf("result array %s %v, want %s of the argument's shape", a.DType, a.Shape, tt.dtype)
					}
					if tt.echo && !bytes.Equal(a.Data, tt.arrays[0].Data) {
						t.Errorf("the echo's %d bytes differ from the %d sent", len(a.Data), len(tt.arrays[0].Data))
					}
					b, err := ndarray.AppendJSON(nil, &a, tt.ret.Number)
					if err != nil {
						t.Fatal(err)
					}
					text = string(b)
				}
				if tt.check != nil {
					tt.check(t, text)
					return
				}
				plain, err := s.Call(ctx, 0, tt.mid, cppArgs(t, jsonForm(t, tt.args, tt.arrays)), Hooks{})
				if err != nil {
					t.Fatal(err)
				}
				want := string(plain)
				if tt.boxed {
					want = "[" + want + "]"
				}
				if tt.spelling {
					want = canonical(t, plain, tt.ret.Number)
				}
				if text != want {
					t.Errorf("result %.200s, want %.200s (the same call with JSON)", text, want)
				}
				if tt.json != "" && text != tt.json {
					t.Errorf("result %.200s, want %s", text, tt.json)
				}
			})
		}
	})
}

// largeCase is calls written back to back, before any reply is read.
type largeCase struct {
	name  string
	mid   int
	calls []largeCall
}

// largeCall is one call of a large-array case: an echo of one array, or,
// without dtype, of one long string.
type largeCall struct {
	dtype, shape, ret string // ret: the call's ret and what follows it
	blob              []byte
	text              string
}

// Large arrays and messages, read in many chunks (Python's 16 MiB, R's
// 1 MiB at most) and sent back in pieces, come through byte for byte, and
// so do the frames that arrive in a chunk behind them.
func TestLargeArrays(t *testing.T) {
	big := gen(5_000_000, func(i int) int32 { return int32(i*7919 - 1<<30) })
	n := 2_500_000 // 20 MB of i8: over Python's 16 MiB chunk
	wide := gen(n, func(i int) int64 { return int64(i)*7919 - 1<<40 })
	wide[1], wide[n-1] = math.MinInt64, math.MaxInt64
	reals := gen(n, func(i int) float64 { return float64(i)*0.37 - 1e6 })
	intRet, matrixRet := `{"rank":1,"number":"int"}`, `{"rank":2,"number":"real"}`
	i4s := func(vs []int32) largeCall {
		return largeCall{dtype: "i4", shape: fmt.Sprint("[", len(vs), "]"), ret: intRet + `,"returns":{"list":"int"}`, blob: ndarraytest.I4(vs...)}
	}
	tests := map[string][]largeCase{
		"py": {
			{"i8, rank 1, 20 MB", arrEcho, []largeCall{{"i8", fmt.Sprint("[", n, "]"), intRet, ndarraytest.I8(wide...), ""}}},
			{"f8, rank 2, 20 MB", arrEcho, []largeCall{{"f8", "[1000,2500]", matrixRet, ndarraytest.F8(reals...), ""}}},
			{"i8, rank 1, under a chunk", arrEcho, []largeCall{{"i8", "[1000]", intRet, ndarraytest.I8(wide[:1000]...), ""}}},
			{"f8, rank 2, rows shorter than a piece", arrEcho, []largeCall{{"f8", "[100000,3]", matrixRet, ndarraytest.F8(reals[:300000]...), ""}}},
			{"a message over the chunk", arrEcho, []largeCall{{text: strings.Repeat("x", 17<<20)}}},
		},
		"r": {
			{"i4, rank 1, 20 MB", raEcho, []largeCall{i4s(big)}},
			{"f8, rank 2, 20 MB", raEcho, []largeCall{{"f8", "[1000,2500]", matrixRet + `,"returns":{"list":{"list":"real"}}`, ndarraytest.F8(reals...), ""}}},
			{"just over a chunk", raEcho, []largeCall{i4s(big[:300_000])}},
			{"under a chunk", raEcho, []largeCall{i4s(big[:1000])}},
			{"three back to back", raEcho, []largeCall{i4s(big[:700_000]), i4s(big[1:300]), i4s(big[2:2_000_001])}},
		},
	}
	// C++ reads what the system gives, with no chunks of its own: Python
	// and R only.
	forEachArraysLang(t, tests, func(t *testing.T, l arraysLang, tests []largeCase) {
		p := l.raw(t)
		p.recvWait = time.Minute
		id := 0
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				first := id + 1
				// All in one write, so that the read that ends a blob brings in
				// the frames behind it; the replies are read meanwhile.
				var all bytes.Buffer
				for _, c := range tt.calls {
					id++
					if c.dtype == "" {
						writeFrame(&all, []byte(callFrame(id, tt.mid, "["+quoted(c.text)+"]", nil, "")))
						continue
					}
					writeBlob(&all, c.blob)
					writeFrame(&all, []byte(fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[null],"arrays":[{"path":[0],"dtype":%q,"shape":%s}],"ret":%s}`,
						id, tt.mid, c.dtype, c.shape, c.ret)))
				}
				go p.in.Write(all.Bytes())
				for i, c := range tt.calls {
					m, blobs := p.recvWithBlobs(t)
					if m["type"] != "result" || fmt.Sprint(m["id"]) != fmt.Sprint(first+i) {
						t.Fatalf("reply %.300v, want the result of call %d", m, first+i)
					}
					if c.dtype == "" {
						if m["value"] != c.text || len(blobs) != 0 {
							t.Errorf("a %d MiB string came back as %d bytes and %d blobs", len(c.text)>>20, len(fmt.Sprint(m["value"])), len(blobs))
						}
						continue
					}
					if len(blobs) != 1 {
						t.Fatalf("reply %.300v with %d blobs, want one", m, len(blobs))
					}
					if !bytes.Equal(blobs[0], c.blob) {
						t.Errorf("call %d: the echo differs: %d bytes back for %d", first+i, len(blobs[0]), len(c.blob))
					}
				}
			})
		}
	})
}

// A sent call's arrays are kept while it could still go to a fresh
// process: in a sequential pool, behind a call that may get stuck.
func TestMayResend(t *testing.T) {
	tests := []struct {
		name      string
		mode      concurrency
		inflight  []uint64
		abandoned []uint64
		want      bool
	}{
		{"sequential, alone", sequential, []uint64{5}, nil, false},
		{"sequential, behind a call", sequential, []uint64{4, 5}, nil, true},
		{"sequential, behind an abandoned call", sequential, []uint64{5}, []uint64{3}, true},
		{"sequential, ahead of the others", sequential, []uint64{5, 6}, []uint64{7}, false},
		{"concurrent, behind a call", concurrent, []uint64{4, 5}, []uint64{3}, false},
		{"unknown, behind a call", concurrencyUnknown, []uint64{4, 5}, nil, false},
	}
	for _, tt := range tests {
		p := &process{mode: tt.mode, inflight: map[uint64]*pendingCall{}, abandoned: map[uint64]abandonedCall{}}
		for _, id := range tt.inflight {
			p.inflight[id] = &pendingCall{}
		}
		for _, id := range tt.abandoned {
			p.abandoned[id] = abandonedCall{}
		}
		if got := p.mayResend(5); got != tt.want {
			t.Errorf("%s: mayResend %v, want %v", tt.name, got, tt.want)
		}
	}
}
