package pool

// Protocol 2 in the C++ runtime (runtime/cpp/nexus.hpp): arrays in calls
// and results, frame by frame on bare pipes and through the Set, and the
// worker threads that run calls.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

func TestCppArrays(t *testing.T) {
	testenv.Long(t)
	exe := buildCppTestPool(t)
	t.Run("ready", func(t *testing.T) { testCppArraysReady(t, exe) })
	t.Run("arguments", func(t *testing.T) { testCppArrayArguments(t, exe) })
	t.Run("vectors in JSON", func(t *testing.T) { testCppVectorsInJSON(t, exe) })
	t.Run("results", func(t *testing.T) { testCppArrayResults(t, exe) })
	t.Run("through the set", func(t *testing.T) { testCppCallWith(t, exe) })
	t.Run("protocol errors", func(t *testing.T) { testCppArrayProtocolErrors(t, exe) })
	t.Run("worker threads", func(t *testing.T) { testCppWorkers(t, exe) })
}

func startRawCppPool(t *testing.T, exe string) *rawPool {
	t.Helper()
	p := startRawProcess(t, &rawPool{recvWait: 30 * time.Second, exitWait: 10 * time.Second, useNumber: true},
		"cpp", filepath.Dir(exe), []string{exe}, nil)
	return p
}

func i8Array(path []any, shape []int, values []int64) ndarray.Array {
	data := make([]byte, 0, 8*len(values))
	for _, v := range values {
		data = binary.LittleEndian.AppendUint64(data, uint64(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.I8, Shape: shape, Data: data}
}

func i4Array(path []any, shape []int, values []int32) ndarray.Array {
	data := make([]byte, 0, 4*len(values))
	for _, v := range values {
		data = binary.LittleEndian.AppendUint32(data, uint32(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.I4, Shape: shape, Data: data}
}

func f8Array(path []any, shape []int, values []float64) ndarray.Array {
	data := make([]byte, 0, 8*len(values))
	for _, v := range values {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.F8, Shape: shape, Data: data}
}

// ints is n integers counting from start by step.
func ints(n int, start, step int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = start + int64(i)*step
	}
	return out
}

// reals is n doubles that JSON writes in many forms.
func reals(n int) []float64 {
	special := []float64{0.1, -0.0, 2, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, -123456.789, 0.30000000000000004, 1e300}
	out := make([]float64, n)
	for i := range out {
		if i < len(special) {
			out[i] = special[i]
		} else {
			out[i] = float64(i)*1.25 - 100
		}
	}
	return out
}

// sendCall sends a call as nexus does: the arrays' blobs, then the message.
func (p *rawPool) sendCall(t *testing.T, id uint64, mid int, args string, arrays []ndarray.Array, ret *ndarray.Ret) {
	t.Helper()
	for _, a := range arrays {
		p.sendBlob(t, a.Data)
	}
	p.send(t, string(appendCall(id, mid, cppArgs(t, args), false, arrays, ret, false)[frameHeader:]))
}

// jsonForm is args with each array written where its null is, as nexus
// writes an array for a pool that takes none.
func jsonForm(t *testing.T, args string, arrays []ndarray.Array) string {
	t.Helper()
	raw := cppArgs(t, args)
	for i := range arrays {
		text, err := ndarray.AppendPoolJSON(nil, &arrays[i])
		if err != nil {
			t.Fatal(err)
		}
		idx := arrays[i].Path[0].(int)
		if raw[idx], err = ndarray.Place(raw[idx], arrays[i].Path[1:], text); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := json.Marshal(raw)
	return string(out)
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

func testCppArrayArguments(t *testing.T, exe string) {
	p := startRawCppPool(t, exe)
	p.recv(t) // ready
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
	badCube := append([]int64(nil), cube...)
	badCube[len(badCube)-1] = math.MinInt64
	tests := []struct {
		name   string
		mid    int
		args   string // null where an array goes
		arrays []ndarray.Array
		// the reply to both forms: the value's numbers, or the error
		wantNumbers []string
		wantError   string
	}{
		{"vector<int64_t> from i8", cppEchoI64s, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, i64s)}, intTexts(i64s), ""},
		{"vector<int64_t> from i4", cppEchoI64s, `[null]`, []ndarray.Array{i4Array([]any{0}, []int{3}, []int32{math.MinInt32, 0, math.MaxInt32})},
			[]string{"-2147483648", "0", "2147483647"}, ""},
		{"vector<int> from i8", cppEchoInts, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{4}, []int64{-2147483648, -1, 0, 2147483647})},
			[]string{"-2147483648", "-1", "0", "2147483647"}, ""},
		{"vector<int> from i8 out of range", cppEchoInts, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, outOfInt)},
			nil, "argument 1 at [7]: 2147483648 does not fit in int32_t"},
		{"vector<uint64_t> from a negative i8", cppEchoU64s, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, negative)},
			nil, "argument 1 at [299]: -1 does not fit in uint64_t"},
		{"vector<double> from f8", cppEchoDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, reals(300))}, realTexts(reals(300)), ""},
		{"vector<double> from i8", cppEchoDoubles, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{3}, []int64{-3, 0, 1 << 53})},
			[]string{"-3.0", "0.0", "9007199254740992.0"}, ""},
		{"vector<float> from f8", cppEchoFloats, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{3}, []float64{0.1, -2.5, 1e30})},
			[]string{"0.1", "-2.5", "1e+30"}, ""},
		{"vector<float> out of range", cppEchoFloats, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, floats)},
			nil, "argument 1 at [3]: 1e+300 does not fit in float"},
		{"vector<vector<double>>", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{20, 15}, grid)}, realTexts(grid), ""},
		{"vector<vector<int64_t>>", cppEchoIntGrid, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{2, 3}, []int64{1, 2, 3, 4, 5, 6})},
			[]string{"1", "2", "3", "4", "5", "6"}, ""},
		{"rank 3", cppEchoCube, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{2, 3, 4}, cube)}, intTexts(cube), ""},
		{"rank 3 out of range", cppEchoCube, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{2, 3, 4}, badCube)},
			nil, "argument 1 at [1][2][3]: -9223372036854775808 does not fit in int32_t"},
		{"empty", cppEchoDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{0}, nil)}, nil, ""},
		{"empty rows", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{2, 0}, nil)}, nil, ""},
		{"no rows", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{0, 5}, nil)}, nil, ""},
		{"a rank the parameter does not have", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{3}, []float64{1.5, 2, 3})},
			nil, "argument 1 at [0]: expected an array (vector<double>), got 1.5"},
		{"a matrix for a vector", cppEchoDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{1, 2}, []float64{1, 2})},
			nil, "argument 1 at [0]: expected a number (double), got an array of 2"},
		{"vector<bool> takes no numbers", cppEchoBools, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{2}, []int64{1, 0})},
			nil, "argument 1 at [0]: expected a boolean, got 1"},
		{"optional<vector<double>>", cppEchoMaybeDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, reals(300))}, realTexts(reals(300)), ""},
		{"arrays beside other arguments", cppMixArgs, `[null,7,null]`, []ndarray.Array{
			f8Array([]any{0}, []int{2}, []float64{0.5, 1}), i8Array([]any{2}, []int{2}, []int64{-4, 4})},
			[]string{"0.5", "1.0", "7", "-4", "4"}, ""},
		{"arrays inside a record", cppEchoSeries, `[{"name":"s","values":null,"counts":null}]`, []ndarray.Array{
			f8Array([]any{0, "values"}, []int{300}, reals(300)), i8Array([]any{0, "counts"}, []int{2, 2}, []int64{1, -2, 3, math.MaxInt64})},
			nil, ""},
		{"an array inside a record out of range", cppEchoSeries, `[{"name":"s","values":[],"counts":[[1],null]}]`, []ndarray.Array{
			f8Array([]any{0, "counts", 1}, []int{2}, []float64{1, 2.5})},
			nil, "argument 1 at .counts[1][1]: expected an integer (int64_t), got 2.5"},
		{"nlohmann::json", cppWrapJSON, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{3}, []int64{-1, 0, 1})}, nil, ""},
	}
	id := uint64(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id++
			p.sendCall(t, id, tt.mid, tt.args, tt.arrays, nil)
			withArrays := p.recv(t)
			id++
			p.send(t, string(appendCall(id, tt.mid, cppArgs(t, jsonForm(t, tt.args, tt.arrays)), false, nil, nil, false)[frameHeader:]))
			sameReplies(t, "with arrays and as JSON", withArrays, p.recv(t))
			if !isResult(t, withArrays, tt.wantError) {
				return
			}
			if tt.wantNumbers != nil {
				if got := flat(withArrays["value"]); !sameNumbers(got, tt.wantNumbers) {
					t.Errorf("numbers %v, want %v", got, tt.wantNumbers)
				}
			}
		})
	}
	// Spot checks of the replies the table compares only with JSON.
	p.sendCall(t, 100, cppEchoSeries, `[{"name":"s","values":null,"counts":null}]`, []ndarray.Array{
		f8Array([]any{0, "values"}, []int{2}, []float64{0.5, -1}), i8Array([]any{0, "counts"}, []int{2, 2}, []int64{1, -2, 3, math.MaxInt64})}, nil)
	if got, want := jsonText(t, p.recv(t)["value"]), `{"counts":[[1,-2],[3,9223372036854775807]],"name":"s","values":[0.5,-1.0]}`; got != want {
		t.Errorf("echoSeries = %s, want %s", got, want)
	}
	for _, tt := range []struct {
		mid   int
		shape []int
		want  string
	}{
		{cppEchoGrid, []int{2, 0}, `[[],[]]`},
		{cppEchoGrid, []int{0, 5}, `[]`},
		{cppEchoDoubles, []int{0}, `[]`},
	} {
		p.sendCall(t, 101, tt.mid, `[null]`, []ndarray.Array{f8Array([]any{0}, tt.shape, nil)}, nil)
		if got := jsonText(t, p.recv(t)["value"]); got != tt.want {
			t.Errorf("mid %d of shape %v = %s, want %s", tt.mid, tt.shape, got, tt.want)
		}
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

// blobOf is the bytes of an i8 or f8 array of values.
func blobOf(values any) []byte {
	var out []byte
	switch xs := values.(type) {
	case []int64:
		for _, x := range xs {
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		}
	case []float64:
		for _, x := range xs {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		}
	}
	return out
}

func testCppArrayResults(t *testing.T, exe string) {
	p := startRawCppPool(t, exe)
	p.recv(t) // ready
	grid := make([]int64, 0, 600)
	for i := int64(0); i < 20; i++ {
		for j := int64(0); j < 30; j++ {
			grid = append(grid, i*30+j-7)
		}
	}
	widened := ints(300, -150, 1)
	var floatsAsDoubles []float64
	for i := 0; i < 300; i++ {
		floatsAsDoubles = append(floatsAsDoubles, float64(i)*0.25)
	}
	tests := []struct {
		name      string
		mid       int
		args      string
		arrays    []ndarray.Array
		ret       ndarray.Ret
		wantDType string
		wantShape []any
		wantBlob  []byte
	}{
		{"vector<int64_t>", cppEchoI64s, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, ints(300, math.MinInt64, 1))},
			ndarray.Ret{Rank: 1, Number: ndarray.Int}, "i8", []any{json.Number("300")}, blobOf(ints(300, math.MinInt64, 1))},
		{"vector<int> widens to i8", cppEchoInts, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, widened)},
			ndarray.Ret{Rank: 1, Number: ndarray.Int}, "i8", []any{json.Number("300")}, blobOf(widened)},
		{"vector<double>", cppEchoDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, reals(300))},
			ndarray.Ret{Rank: 1, Number: ndarray.Real}, "f8", []any{json.Number("300")}, blobOf(reals(300))},
		{"vector<float>", cppEchoFloats, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, floatsAsDoubles)},
			ndarray.Ret{Rank: 1, Number: ndarray.Real}, "f8", []any{json.Number("300")}, blobOf(floatsAsDoubles)},
		{"vector<vector<int64_t>>", cppMakeGrid, `[20,30,false]`, nil,
			ndarray.Ret{Rank: 2, Number: ndarray.Int}, "i8", []any{json.Number("20"), json.Number("30")}, blobOf(grid)},
		{"vector<vector<double>>", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{10, 30}, reals(300))},
			ndarray.Ret{Rank: 2, Number: ndarray.Real}, "f8", []any{json.Number("10"), json.Number("30")}, blobOf(reals(300))},
		{"rank 3", cppEchoCube, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{4, 8, 10}, ints(320, -1, 3))},
			ndarray.Ret{Rank: 3, Number: ndarray.Int}, "i8", []any{json.Number("4"), json.Number("8"), json.Number("10")}, blobOf(ints(320, -1, 3))},
		{"vector<uint64_t> within int64", cppEchoU64s, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, ints(300, 0, 1<<50))},
			ndarray.Ret{Rank: 1, Number: ndarray.Int}, "i8", []any{json.Number("300")}, blobOf(ints(300, 0, 1<<50))},
		{"no NaN", cppWithNonFinite, `[300,"none"]`, nil,
			ndarray.Ret{Rank: 1, Number: ndarray.Real}, "f8", []any{json.Number("300")}, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.sendCall(t, uint64(i+1), tt.mid, tt.args, tt.arrays, &tt.ret)
			m, blobs := p.recvWithBlobs(t)
			want := map[string]any{"type": "result", "id": json.Number(strconv.Itoa(i + 1)), "value": nil,
				"arrays": []any{map[string]any{"path": []any{}, "dtype": tt.wantDType, "shape": tt.wantShape}}}
			if !reflect.DeepEqual(m, want) {
				t.Fatalf("reply %v, want %v", m, want)
			}
			if len(blobs) != 1 {
				t.Fatalf("%d blobs, want 1", len(blobs))
			}
			if tt.wantBlob != nil && !bytes.Equal(blobs[0], tt.wantBlob) {
				t.Errorf("the blob differs from the values sent")
			}
		})
	}

	// These go as JSON, with today's answer.
	jsonTests := []struct {
		name      string
		mid       int
		args      string
		arrays    []ndarray.Array
		ret       ndarray.Ret
		wantValue string // a prefix of the value's JSON
		wantError string
	}{
		{"fewer than 256 elements", cppEchoI64s, `[[1,2,3]]`, nil, ndarray.Ret{Rank: 1, Number: ndarray.Int}, `[1,2,3]`, ""},
		{"empty", cppEchoDoubles, `[[]]`, nil, ndarray.Ret{Rank: 1, Number: ndarray.Real}, `[]`, ""},
		{"ragged", cppMakeGrid, `[20,30,true]`, nil, ndarray.Ret{Rank: 2, Number: ndarray.Int}, `[[-7,-6,`, ""},
		{"another rank", cppMakeGrid, `[20,30,false]`, nil, ndarray.Ret{Rank: 1, Number: ndarray.Int}, `[[-7,-6,`, ""},
		{"a scalar", cppAddInts, `[1,2]`, nil, ndarray.Ret{Rank: 1, Number: ndarray.Int}, `3`, ""},
	}
	for i, tt := range jsonTests {
		t.Run(tt.name, func(t *testing.T) {
			p.sendCall(t, uint64(100+i), tt.mid, tt.args, tt.arrays, &tt.ret)
			m := p.recv(t)
			if tt.wantError != "" {
				if m["type"] != "error" || m["message"] != tt.wantError {
					t.Errorf("reply %v, want the error %q", m, tt.wantError)
				}
				return
			}
			if _, ok := m["arrays"]; ok || m["type"] != "result" {
				t.Fatalf("reply %v, want a JSON result", m)
			}
			if got := jsonText(t, m["value"]); !strings.HasPrefix(got, tt.wantValue) {
				t.Errorf("value %.80s, want %s...", got, tt.wantValue)
			}
		})
	}
	// An unsigned integer past int64 keeps the whole result JSON.
	p.sendCall(t, 200, cppEchoU64s, `[[18446744073709551615`+strings.Repeat(",1", 299)+`]]`, nil, &ndarray.Ret{Rank: 1, Number: ndarray.Int})
	if got := jsonText(t, p.recv(t)["value"]); !strings.HasPrefix(got, `[18446744073709551615,1,`) {
		t.Errorf("echoU64s past int64 = %.60s", got)
	}
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

func testCppCallWith(t *testing.T, exe string) {
	p := startCppPool(t, exe, Options{})
	var floats []float64
	for i := 0; i < 300; i++ {
		floats = append(floats, float64(float32(float64(i)*0.1)))
	}
	tests := []struct {
		name   string
		mid    int
		args   string
		arrays []ndarray.Array
		ret    ndarray.Ret
	}{
		{"[Int]", cppEchoI64s, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, append([]int64{math.MinInt64, math.MaxInt64}, ints(298, -9, 1)...))},
			ndarray.Ret{Rank: 1, Number: ndarray.Int}},
		{"[Int] through vector<int>", cppEchoInts, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{300}, ints(300, -100, 3))},
			ndarray.Ret{Rank: 1, Number: ndarray.Int}},
		{"[Real]", cppEchoDoubles, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, reals(300))}, ndarray.Ret{Rank: 1, Number: ndarray.Real}},
		{"[Real] through vector<float>", cppEchoFloats, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{300}, floats)}, ndarray.Ret{Rank: 1, Number: ndarray.Real}},
		{"[[Real]]", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{20, 15}, reals(300))}, ndarray.Ret{Rank: 2, Number: ndarray.Real}},
		{"[[Int]]", cppEchoIntGrid, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{16, 16}, ints(256, 1<<40, -(1<<33)))}, ndarray.Ret{Rank: 2, Number: ndarray.Int}},
		{"[[[Int]]]", cppEchoCube, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{4, 8, 10}, ints(320, -160, 1))}, ndarray.Ret{Rank: 3, Number: ndarray.Int}},
		// Rows of 4 KiB and more go out from their own memory, one piece each.
		{"[[Real]] of long rows", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{3, 600}, reals(1800))}, ndarray.Ret{Rank: 2, Number: ndarray.Real}},
		{"[[Int]] of long rows", cppEchoIntGrid, `[null]`, []ndarray.Array{i8Array([]any{0}, []int{2, 1100}, ints(2200, -1000, 7))}, ndarray.Ret{Rank: 2, Number: ndarray.Int}},
		{"[[Real]] of more long rows than one writev takes", cppEchoGrid, `[null]`, []ndarray.Array{f8Array([]any{0}, []int{1100, 520}, reals(1100*520))}, ndarray.Ret{Rank: 2, Number: ndarray.Real}},
		{"a result without array arguments", cppMakeGrid, `[20,30,false]`, nil, ndarray.Ret{Rank: 2, Number: ndarray.Int}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := p.CallWith(ctx, 0, tt.mid, cppArgs(t, tt.args), CallOptions{Arrays: tt.arrays, Ret: &tt.ret})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Arrays) != 1 || string(v.JSON) != "null" {
				t.Fatalf("the result came as %s with %d arrays, want one array", v.JSON, len(v.Arrays))
			}
			got, err := ndarray.AppendJSON(nil, &v.Arrays[0], tt.ret.Number)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := p.Call(ctx, 0, tt.mid, cppArgs(t, jsonForm(t, tt.args, tt.arrays)), Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			if want := canonical(t, plain, tt.ret.Number); string(got) != want {
				t.Errorf("with arrays the answer is\n%.300s\nas JSON\n%.300s", got, want)
			}
		})
	}
	// NaN and the infinities keep a result JSON, as the wire's strings.
	for _, c := range []struct{ what, want string }{{"nan", `"NaN"`}, {"inf", `"Infinity"`}, {"-inf", `"-Infinity"`}} {
		v, err := p.CallWith(ctx, 0, cppWithNonFinite, cppArgs(t, `[300,"`+c.what+`"]`), CallOptions{Ret: &ndarray.Ret{Rank: 1, Number: ndarray.Real}})
		var items []json.RawMessage
		if err != nil || len(v.Arrays) != 0 || json.Unmarshal(v.JSON, &items) != nil || len(items) != 300 || string(items[150]) != c.want {
			t.Errorf("withNonFinite(300, %s) = %.80s, %v; want JSON with %s at [150]", c.what, v.JSON, err, c.want)
		}
	}
}

func testCppArrayProtocolErrors(t *testing.T, exe string) {
	blob := blobOf([]int64{1, 2, 3})
	testExits(t, func(t *testing.T) *rawPool {
		p := startRawCppPool(t, exe)
		p.recv(t) // ready
		return p
	}, "nexus pool cpp: protocol error: ", []exitCase{
		{"a blob no message describes", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":41,"args":[1,2]}`)
		}, 2, "1 blobs came before a call message that describes none"},
		{"a blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "1 blobs came before a cancel message that describes none"},
		{"fewer blobs than arrays", func(p *rawPool, t *testing.T) {
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "a call message describes 1 arrays but 0 blobs came before it"},
		{"a blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[4]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8","shape":[4]}: it needs 32 bytes, the blob has 24`},
		{"an unknown dtype", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"u8","shape":[3]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"u8","shape":[3]}: unknown dtype (this pool takes i4, i8 and f8)`},
		{`array 0 {"path":[0],"dtype":"i8"}: no shape (a list of lengths)`, func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8"}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8"}: no shape (a list of lengths)`},
		{"rank 0 with more than one number", func(p *rawPool, t *testing.T) {
			// Rank 0 (shape []) is one number: a NaN or infinity argument.
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[]}]}`)
		}, 2, `array 0 {"path":[0],"dtype":"i8","shape":[]}: it needs 8 bytes, the blob has 24`},
		{"a place that is not null", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[[1]],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [0]: its place in args is not null"},
		{"a path past the arguments", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[1],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [1] names no argument"},
		{"a path to a missing member", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":48,"args":[{"name":"x"}],"arrays":[{"path":[0,"values"],"dtype":"i8","shape":[3]}]}`)
		}, 2, `call 1: array at [0,"values"]: no member "values"`},
		{"an array where a vector came in JSON", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[[1,2]],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: array at [0]: its place in args is not null"},
		{"two arrays in one place", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, blob)
			p.sendBlob(t, blob)
			p.send(t, `{"type":"call","id":1,"mid":42,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]},{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call 1: two arrays at [0]"},
		{"a blob over the limit", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF}) }, 2, "blob length 2147483647 is over 1073741824"},
		{"a cut blob", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0x80, 0, 0, 8, 1, 2}); p.in.Close() }, 2, "end of file inside a blob"},
	})
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
