package pool

// Tests of arrays (protocol 2) in the R runtime, with the test pool
// testdata/r/arrays.R: on bare pipes, frame by frame, and through a Set.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of testdata/r/arrays.R.
const (
	raEcho = iota + 1
	raAdd
	raSame
	raText
	raSameIn
	raMake
)

func startRArraysRawPool(t *testing.T) *rawPool {
	t.Helper()
	needR(t)
	return startRawProcess(t, &rawPool{recvWait: 60 * time.Second, exitWait: 20 * time.Second, useNumber: true},
		"r", rTestdata(t), []string{"Rscript", "arrays.R"}, nil)
}

func i4Values(path []any, shape []int, values ...int32) ndarray.Array {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.I4, Shape: shape, Data: data}
}

func f8Values(path []any, shape []int, values ...float64) ndarray.Array {
	data := make([]byte, 8*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.F8, Shape: shape, Data: data}
}

func i8Values(path []any, shape []int, values ...int64) ndarray.Array {
	data := make([]byte, 8*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(v))
	}
	return ndarray.Array{Path: path, DType: ndarray.I8, Shape: shape, Data: data}
}

// poolJSON is an array's JSON as nexus writes it to a pool that does not
// take arrays: a Real always with a fraction or an exponent.
func poolJSON(t *testing.T, a ndarray.Array) string {
	t.Helper()
	b, err := ndarray.AppendPoolJSON(nil, &a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// callFrame is a call message with arrays described and ret, as nexus
// writes them.
func callFrame(id, mid int, args string, arrays []ndarray.Array, ret string) string {
	msg := fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":%s`, id, mid, args)
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

func ints32(n int, f func(i int) int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func floats(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// An array argument is the R value its JSON would be: R's identical()
// finds no difference, whatever the shape, dtype and place.
func TestRArrayArguments(t *testing.T) {
	p := startRArraysRawPool(t)
	p.recv(t) // ready
	odd := func(i int) int32 { return int32(i*7919%20011) - 10000 }
	real := func(i int) float64 {
		return []float64{0.1, -2.5, 3, 1e300, -0.0, 5e-324, 1.0 / 3, 123456789}[i%8] * float64(i+1)
	}
	tests := []struct {
		name string
		a    ndarray.Array
	}{
		{"i4 vector", i4Values(nil, []int{300}, ints32(300, odd)...)},
		{"i4 extremes", i4Values(nil, []int{4}, math.MaxInt32, -math.MaxInt32, 0, -1)},
		{"-2^31 makes the vector double, as its JSON does", i4Values(nil, []int{3}, 1, math.MinInt32, 3)},
		{"one element", i4Values(nil, []int{1}, 42)},
		{"f8 vector", f8Values(nil, []int{300}, floats(300, real)...)},
		{"f8 whole numbers stay doubles", f8Values(nil, []int{3}, 1, 2, 3)},
		{"i4 matrix", i4Values(nil, []int{100, 3}, ints32(300, odd)...)},
		{"-2^31 makes its row double", i4Values(nil, []int{3, 2}, 1, 2, math.MinInt32, 4, 5, 6)},
		{"f8 matrix", f8Values(nil, []int{50, 4}, floats(200, real)...)},
		{"one row", f8Values(nil, []int{1, 5}, 1, 2, 3, 4, 5)},
		{"one column", i4Values(nil, []int{5, 1}, 1, 2, 3, 4, 5)},
		{"rank 3", i4Values(nil, []int{2, 3, 4}, ints32(24, odd)...)},
		{"rank 3 f8", f8Values(nil, []int{3, 1, 2}, floats(6, real)...)},
		{"rank 4", i4Values(nil, []int{2, 2, 2, 2}, ints32(16, odd)...)},
		{"empty", i4Values(nil, []int{0})},
		{"empty f8", f8Values(nil, []int{0})},
		{"empty rows", f8Values(nil, []int{2, 0})},
		{"no rows", i4Values(nil, []int{0, 3})},
		{"empty middle level", i4Values(nil, []int{2, 0, 3})},
		{"empty inner level", f8Values(nil, []int{2, 3, 0})},
	}
	id := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := poolJSON(t, tt.a)
			// The array first, then second: the path's index is the argument's.
			for i, args := range []string{"[null," + text + "]", "[" + text + ",null]"} {
				a := tt.a
				a.Path = []any{i}
				id++
				reply, _ := p.callWithArrays(t, id, raSame, args, []ndarray.Array{a}, "")
				if reply["type"] != "result" || reply["value"] != "same" {
					t.Errorf("array as argument %d: %v", i+1, reply)
				}
			}
		})
	}
}

// Arrays inside an argument go at their path, and what arrives is exactly
// R's value: the deparse of a few.
func TestRArrayPlaces(t *testing.T) {
	p := startRArraysRawPool(t)
	p.recv(t) // ready
	matrix := f8Values([]any{0, "data", "xs"}, []int{2, 2}, 1, 2.5, 3, 4)
	id := 0
	call := func(mid int, args string, arrays ...ndarray.Array) any {
		t.Helper()
		id++
		reply, _ := p.callWithArrays(t, id, mid, args, arrays, "")
		if reply["type"] != "result" {
			t.Fatalf("reply %v", reply)
		}
		return reply["value"]
	}
	if got := call(raSameIn, `[{"data":{"xs":null},"n":1},`+poolJSON(t, matrix)+`]`, matrix); got != "same" {
		t.Errorf("an array in a record: %v", got)
	}
	inList := i4Values([]any{0, 1}, []int{3}, 7, 8, 9)
	if got := call(raSame, `[[5,null,"x"],[5,[7,8,9],"x"]]`, inList); got != "same" {
		t.Errorf("an array in a list: %v", got)
	}
	two := []ndarray.Array{i4Values([]any{0}, []int{3}, 1, 2, 3), i4Values([]any{1}, []int{3}, 1, 2, 3)}
	if got := call(raSame, `[null,null]`, two...); got != "same" {
		t.Errorf("two arrays: %v", got)
	}
	texts := []struct {
		a    ndarray.Array
		want string
	}{
		{i4Values([]any{0}, []int{3}, 1, 2, 3), "1:3"},
		{i4Values([]any{0}, []int{3}, 5, -1, 7), "c(5L, -1L, 7L)"},
		{f8Values([]any{0}, []int{3}, 5, -1, 0.5), "c(5, -1, 0.5)"},
		{i4Values([]any{0}, []int{1}, math.MinInt32), "-2147483648"},
		{f8Values([]any{0}, []int{2, 2}, 1, 2, 3, 4), "list(c(1, 2), c(3, 4))"},
		{i4Values([]any{0}, []int{2, 0}), "list(logical(0), logical(0))"},
		{i4Values([]any{0}, []int{0, 2}), "logical(0)"},
		{i4Values([]any{0}, []int{2, 1, 2}, 1, 2, 3, 4), "list(list(1:2), list(3:4))"},
	}
	for _, tt := range texts {
		if got := call(raText, `[null]`, tt.a); got != tt.want {
			t.Errorf("shape %v of %s arrives as %v, want %s", tt.a.Shape, tt.a.DType, got, tt.want)
		}
	}
	// NaN and the infinities come as arrays of rank 0 (issue 18 §3): in a
	// list of numbers they are numbers, the list a double vector, however
	// many, with null beside them, and in rows of one.
	scalars := []struct {
		args   string
		arrays []ndarray.Array
		want   string
	}{
		{`[null]`, []ndarray.Array{f8Values([]any{0}, []int{}, math.Inf(-1))}, "-Inf"},
		{`[[1.5,null,null]]`, []ndarray.Array{f8Values([]any{0, 1}, []int{}, math.NaN()), f8Values([]any{0, 2}, []int{}, math.Inf(1))}, "c(1.5, NaN, Inf)"},
		{`[[null,null,2]]`, []ndarray.Array{f8Values([]any{0, 1}, []int{}, math.Inf(1))}, "c(NA, Inf, 2)"},
		{`[[[1,null],[2.5]]]`, []ndarray.Array{f8Values([]any{0, 0, 1}, []int{}, math.Inf(-1))}, "list(c(1, -Inf), 2.5)"},
		{`[{"x":null,"y":1}]`, []ndarray.Array{f8Values([]any{0, "x"}, []int{}, math.NaN())}, "list(x = NaN, y = 1L)"},
	}
	for _, tt := range scalars {
		if got := call(raText, tt.args, tt.arrays...); got != tt.want {
			t.Errorf("%s with NaN or infinities arrives as %v, want %s", tt.args, got, tt.want)
		}
	}
	// A call with arrays answers as one without.
	if got := call(raAdd, `[null,1]`, i4Values([]any{0}, []int{2}, 1, 2)); !reflectJSON(got, `[2,3]`) {
		t.Errorf("add(c(1L, 2L), 1L) = %v", got)
	}
}

func reflectJSON(v any, want string) bool {
	b, err := json.Marshal(v)
	return err == nil && string(b) == want
}

// resultCase is one make(kind, n) call and what must come back.
type resultCase struct {
	name  string
	kind  string
	n     int
	ret   string         // the call's ret, or ""
	array *ndarray.Array // the array expected (path, dtype, shape, data), or nil for JSON
	json  string         // the JSON value expected when array is nil
	error string         // or the error message expected
}

func TestRArrayResults(t *testing.T) {
	p := startRArraysRawPool(t)
	p.recv(t) // ready
	intRet, realRet := `{"rank":1,"number":"int"}`, `{"rank":1,"number":"real"}`
	matrixRet := `{"rank":2,"number":"real"}`
	seqInts := func(n int) []int32 { return ints32(n, func(i int) int32 { return int32(i + 1) }) }
	arr := func(a ndarray.Array) *ndarray.Array { a.Path = []any{}; return &a }
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
		return ints32(len(fs), func(i int) int32 { return int32(fs[i]) })
	}
	jsonList := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i + 1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	quarter := func(i int) string { return strconv.FormatFloat(float64(i)/4, 'g', -1, 64) }
	ragged := func(boxed bool) func(i int) string {
		return func(i int) string {
			k := 1 + i%3
			if k == 1 && !boxed {
				return "1"
			}
			return jsonList(k, strconv.Itoa)
		}
	}
	tests := []resultCase{
		{name: "integer vector", kind: "ints", n: 300, ret: intRet, array: arr(i4Values(nil, []int{300}, seqInts(300)...))},
		{name: "double vector", kind: "reals", n: 300, ret: realRet, array: arr(f8Values(nil, []int{300}, floats(300, func(i int) float64 { return float64(i+1) / 4 })...))},
		{name: "large doubles", kind: "big_reals", n: 300, ret: realRet, array: arr(f8Values(nil, []int{300}, floats(300, func(i int) float64 { return (float64(i+1)-150)*1e15 + 0.5 })...))},
		// I() marks a value as is (class AsIs); its data go as an array all the same.
		{name: "I(integer vector)", kind: "asis", n: 300, ret: intRet, array: arr(i4Values(nil, []int{300}, seqInts(300)...))},
		{name: "I(double vector)", kind: "asis_reals", n: 300, ret: realRet, array: arr(f8Values(nil, []int{300}, floats(300, func(i int) float64 { return float64(i+1) / 4 })...))},
		{name: "I(integer matrix)", kind: "asis_matrix", n: 200, ret: `{"rank":2,"number":"int"}`, array: arr(i4Values(nil, []int{200, 2}, toInt32(matrixInts)...))},
		{name: "list of I(double vector)", kind: "asis_rows", n: 100, ret: matrixRet, array: arr(f8Values(nil, []int{100, 3}, rows...))},
		{name: "integer matrix, row by row", kind: "matrix_ints", n: 200, ret: `{"rank":2,"number":"int"}`, array: arr(i4Values(nil, []int{200, 2}, toInt32(matrixInts)...))},
		{name: "double matrix", kind: "matrix_reals", n: 100, ret: matrixRet, array: arr(f8Values(nil, []int{100, 3}, matrixReals...))},
		{name: "list of double vectors", kind: "rows", n: 100, ret: matrixRet, array: arr(f8Values(nil, []int{100, 3}, rows...))},
		{name: "list of integer and double vectors", kind: "mixed_rows", n: 150, ret: matrixRet, array: arr(f8Values(nil, []int{150, 2}, mixedRows...))},
		{name: "list of integer vectors", kind: "int_rows", n: 150, ret: `{"rank":2,"number":"int"}`, array: arr(i4Values(nil, []int{150, 2}, toInt32(intRows)...))},
		// JSON as today where an array cannot say it.
		{name: "NA is null", kind: "na_ints", n: 300, ret: intRet, json: jsonList(300, func(i int) string {
			if i == 300 {
				return "null"
			}
			return strconv.Itoa(i)
		})},
		{name: "NA_real_ is null", kind: "na_reals", n: 300, ret: realRet, json: jsonList(300, func(i int) string {
			if i == 300 {
				return "null"
			}
			return quarter(i)
		})},
		// NaN and infinity go as JSON, as the wire's strings (docs/pool-protocol.md, "NaN and infinity").
		{name: "NaN as a string", kind: "nan", n: 300, ret: realRet, json: jsonList(300, func(i int) string {
			if i == 300 {
				return `"NaN"`
			}
			return quarter(i)
		})},
		{name: "Inf as a string", kind: "inf", n: 300, ret: realRet, json: jsonList(300, func(i int) string {
			if i == 300 {
				return `"Infinity"`
			}
			return quarter(i)
		})},
		{name: "NA in a matrix", kind: "na_matrix", n: 200, ret: matrixRet, json: jsonList(200, func(i int) string {
			if i == 200 {
				return "[200,null]"
			}
			return fmt.Sprintf("[%d,%d]", i, i+200)
		})},
		{name: "ragged rows, a length-1 row a list", kind: "ragged", n: 300, ret: matrixRet, json: jsonList(300, ragged(true))},
		{name: "ragged rows without ret", kind: "ragged", n: 300, json: jsonList(300, ragged(false))},
		{name: "few ragged rows", kind: "ragged", n: 6, ret: matrixRet, json: jsonList(6, ragged(true))},
		{name: "small vectors go as JSON", kind: "ints", n: 10, ret: intRet, json: jsonList(10, strconv.Itoa)},
		{name: "no ret, no array", kind: "ints", n: 300, json: jsonList(300, strconv.Itoa)},
		// The length-1 rule: a list is declared, so a length-1 vector is one.
		{name: "length-1 vector under ret", kind: "one", n: 1, ret: intRet, json: `[5]`},
		{name: "length-1 vector without ret", kind: "one", n: 1, json: `5`},
		{name: "length-1 double under ret", kind: "one_real", n: 1, ret: realRet, json: `[2.5]`},
		{name: "NA under ret", kind: "one_na", n: 1, ret: intRet, json: `[null]`},
		{name: "list of length-1 vectors, rank 2", kind: "ones", n: 3, ret: matrixRet, json: `[[1],[2],[3]]`},
		{name: "list of length-1 vectors, rank 1", kind: "ones", n: 3, ret: intRet, json: `[1,2,3]`},
		{name: "many length-1 vectors, rank 2", kind: "ones", n: 300, ret: matrixRet, array: arr(i4Values(nil, []int{300, 1}, seqInts(300)...))},
		{name: "1x1 matrix", kind: "one_by_one", n: 1, ret: matrixRet, json: `[[7]]`},
		{name: "empty vector", kind: "empty", n: 0, ret: intRet, json: `[]`},
		{name: "NULL", kind: "nothing", n: 0, ret: intRet, json: `null`},
		{name: "names dropped", kind: "named", n: 2, ret: realRet, json: `[1,2]`},
		{name: "factor", kind: "factor", n: 300, ret: intRet, json: jsonList(300, func(i int) string { return `"` + string(rune('x'+(i+1)%2)) + `"` })},
		{name: "data frame", kind: "frame", n: 2, ret: matrixRet, json: `[{"x":1,"y":0.5},{"x":2,"y":1}]`},
		// Finite numbers whose sum overflows still go as an array.
		{name: "doubles whose sum is infinite", kind: "huge", n: 300, ret: realRet, array: arr(f8Values(nil, []int{300}, floats(300, func(i int) float64 { return []float64{1.5e308, 1.6e308}[i%2] })...))},
		{name: "rows whose sum is infinite", kind: "huge_rows", n: 300, ret: matrixRet, array: arr(f8Values(nil, []int{300, 2}, floats(600, func(i int) float64 {
			if i%2 == 0 {
				return 1.5e308
			}
			return -float64(i/2 + 1)
		})...))},
		// Arrays over a piece (131072 elements) are written in several.
		{name: "integer vector in pieces", kind: "ints", n: 300_000, ret: intRet, array: arr(i4Values(nil, []int{300_000}, seqInts(300_000)...))},
		{name: "I(double vector) in pieces", kind: "asis_reals", n: 300_000, ret: realRet, array: arr(f8Values(nil, []int{300_000}, floats(300_000, func(i int) float64 { return float64(i+1) / 4 })...))},
		{name: "rows in blocks", kind: "rows", n: 100_000, ret: matrixRet, array: arr(f8Values(nil, []int{100_000, 3}, floats(300_000, func(i int) float64 {
			r := float64(i/3 + 1)
			return []float64{r / 2, -r, r * 1.5}[i%3]
		})...))},
		{name: "integer rows in blocks", kind: "int_rows", n: 140_000, ret: matrixRet, array: arr(i4Values(nil, []int{140_000, 2}, ints32(280_000, func(i int) int32 {
			if i%2 == 0 {
				return int32(i/2 + 1)
			}
			return -int32(i/2 + 1)
		})...))},
		{name: "mixed rows in blocks", kind: "mixed_rows", n: 140_000, ret: matrixRet, array: arr(f8Values(nil, []int{140_000, 2}, floats(280_000, func(i int) float64 {
			r := i/2 + 1
			if r%2 == 1 {
				return []float64{float64(r), -float64(r)}[i%2]
			}
			return []float64{float64(r) / 2, 0.25}[i%2]
		})...))},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, blobs := p.callWithArrays(t, i+1, raMake, fmt.Sprintf(`[%q,%d]`, tt.kind, tt.n), nil, tt.ret)
			if !isResult(t, reply, tt.error) {
				return
			}
			if tt.array == nil {
				if len(blobs) > 0 || reply["arrays"] != nil {
					t.Fatalf("reply %v with %d blobs, want JSON", reply, len(blobs))
				}
				if got := jsonText(t, reply["value"]); got != tt.json {
					t.Errorf("value %.300s, want %.300s", got, tt.json)
				}
				return
			}
			arrays, err := ndarray.ParseDescriptors(json.RawMessage(jsonText(t, reply["arrays"])))
			if err != nil || len(arrays) != 1 || len(blobs) != 1 {
				t.Fatalf("reply %v with %d blobs: want one array (%v)", reply, len(blobs), err)
			}
			got := arrays[0]
			got.Data = blobs[0]
			if reply["value"] != nil {
				t.Errorf("value %v, want null where the array goes", reply["value"])
			}
			if jsonText(t, got.Path) != "[]" || got.DType != tt.array.DType || !slicesEqual(got.Shape, tt.array.Shape) {
				t.Errorf("array at %v, %s %v; want at [], %s %v", got.Path, got.DType, got.Shape, tt.array.DType, tt.array.Shape)
			}
			if string(got.Data) != string(tt.array.Data) {
				t.Errorf("the blob's %d bytes differ from the %d expected", len(got.Data), len(tt.array.Data))
			}
		})
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Blobs that do not match the call's arrays break the protocol: the pool
// says what it saw and exits with status 2.
func TestRArrayProtocolErrors(t *testing.T) {
	testenv.Long(t)
	four := i4Values([]any{0}, []int{4}, 1, 2, 3, 4)
	testExits(t, func(t *testing.T) *rawPool {
		p := startRArraysRawPool(t)
		p.recv(t) // ready
		return p
	}, "nexus pool: protocol error: ", []exitCase{
		{"a blob the call does not describe", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, `{"type":"call","id":1,"mid":1,"args":[null]}`)
		}, 2, "call 1 describes 0 arrays, but 1 blobs came before it"},
		{"an array without its blob", func(p *rawPool, t *testing.T) {
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{four}, ""))
		}, 2, "call 1 describes 1 arrays, but 0 blobs came before it"},
		{"a blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data[:12])
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{four}, ""))
		}, 2, "call 1, array 1: shape [4] of i4 needs 16 bytes, but its blob has 12"},
		{"a dtype R does not take", func(p *rawPool, t *testing.T) {
			a := i8Values([]any{0}, []int{2}, 1, 2)
			p.sendBlob(t, a.Data)
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{a}, ""))
		}, 2, `call 1, array 1: dtype "i8" is not one this pool takes (i4, f8)`},
		{"a path to no argument", func(p *rawPool, t *testing.T) {
			a := four
			a.Path = []any{3}
			p.sendBlob(t, a.Data)
			p.send(t, callFrame(1, raEcho, `[null]`, []ndarray.Array{a}, ""))
		}, 2, "call 1, array 1: its path leads nowhere in the arguments"},
		{"a path to a value", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, callFrame(1, raEcho, `[5]`, []ndarray.Array{four}, ""))
		}, 2, "call 1, array 1: its place in the arguments is not null"},
		{"a blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, four.Data)
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "1 blobs came before a cancel message: only a call carries arrays"},
		{"a blob over the limit", func(p *rawPool, t *testing.T) {
			p.in.Write([]byte{0xC0, 0, 0, 1})
		}, 2, "blob length 1073741825 is over 1073741824"},
	})
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
	ints := i4Values([]any{0}, []int{1000}, ints32(1000, func(i int) int32 { return int32(i) })...)
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

// startRArraysSet runs testdata/r/arrays.R as pool 0 of a Set.
func startRArraysSet(t *testing.T) *rSet {
	t.Helper()
	return startRSet(t, Spec{Exec: []string{"Rscript", "arrays.R"}}, Options{})
}

// Through a Set: an R pool takes arrays (i8 narrowed to i4) and answers
// with arrays whose JSON is the answer to the same call made with JSON.
func TestRArraysThroughSet(t *testing.T) {
	s := startRArraysSet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	big := make([]int64, 1000)
	wide := make([]int64, 300)
	for i := range big {
		big[i] = int64(i*7919%20011) - 10000
	}
	for i := range wide {
		wide[i] = int64(i) * 3_000_000_000 // beyond 32 bits: JSON to R, doubles there
	}
	matrix := floats(300, func(i int) float64 { return float64(i*37%101)/8 - 6 })
	tests := []struct {
		name      string
		array     ndarray.Array
		ret       ndarray.Ret
		wantDType ndarray.DType // of the result; "" for JSON
	}{
		{"integers as i8, narrowed to i4", i8Values([]any{0}, []int{1000}, big...), ndarray.Ret{Rank: 1, Number: ndarray.Int}, ndarray.I4},
		{"integers beyond 32 bits", i8Values([]any{0}, []int{300}, wide...), ndarray.Ret{Rank: 1, Number: ndarray.Int}, ndarray.F8},
		{"a matrix of reals", f8Values([]any{0}, []int{100, 3}, matrix...), ndarray.Ret{Rank: 2, Number: ndarray.Real}, ndarray.F8},
		{"a small list comes back as JSON", i8Values([]any{0}, []int{5}, 1, 2, 3, 4, 5), ndarray.Ret{Rank: 1, Number: ndarray.Int}, ""},
		{"a one-element list stays a list", i8Values([]any{0}, []int{1}, 7), ndarray.Ret{Rank: 1, Number: ndarray.Int}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := tt.ret
			got, err := s.CallWith(ctx, 0, raEcho, []json.RawMessage{json.RawMessage("null")}, CallOptions{Arrays: []ndarray.Array{tt.array}, Ret: &ret})
			if err != nil {
				t.Fatal(err)
			}
			asJSON := poolJSON(t, tt.array)
			want, err := s.Call(ctx, 0, raEcho, []json.RawMessage{json.RawMessage(asJSON)}, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			text := string(got.JSON)
			if tt.wantDType == "" {
				if len(got.Arrays) != 0 {
					t.Fatalf("got %d arrays, want JSON", len(got.Arrays))
				}
				if tt.array.Len() == 1 {
					want = json.RawMessage("[" + string(want) + "]") // boxed by ret; without it, a scalar
				}
			} else {
				if len(got.Arrays) != 1 || string(got.JSON) != "null" {
					t.Fatalf("result %s with %d arrays, want one array", got.JSON, len(got.Arrays))
				}
				a := got.Arrays[0]
				if a.DType != tt.wantDType || !slicesEqual(a.Shape, tt.array.Shape) {
					t.Errorf("result array %s %v, want %s %v", a.DType, a.Shape, tt.wantDType, tt.array.Shape)
				}
				b, err := ndarray.AppendJSON(nil, &a, tt.ret.Number)
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			if text != string(want) {
				t.Errorf("result %.200s, want %.200s (the same call with JSON)", text, want)
			}
		})
	}
	// What arrives is what its JSON would make.
	a := f8Values([]any{0}, []int{100, 3}, matrix...)
	v, err := s.CallWith(ctx, 0, raSame, []json.RawMessage{json.RawMessage("null"), json.RawMessage(poolJSON(t, a))}, CallOptions{Arrays: []ndarray.Array{a}})
	if err != nil || string(v.JSON) != `"same"` {
		t.Errorf("same(array, JSON) = %s, %v", v.JSON, err)
	}
	// A NaN keeps the result JSON, with the wire's string in its place.
	v, err = s.CallWith(ctx, 0, raMake, []json.RawMessage{json.RawMessage(`"nan"`), json.RawMessage("300")}, CallOptions{Ret: &ndarray.Ret{Rank: 1, Number: ndarray.Real}})
	if err != nil || len(v.Arrays) != 0 || !strings.HasSuffix(string(v.JSON), `,74.75,"NaN"]`) {
		t.Errorf("make(nan) = %.80s, %d arrays, %v", v.JSON, len(v.Arrays), err)
	}
}

// Large arrays, read in many chunks (1 MiB at most each), come through
// byte for byte, and so do the frames that arrive in a chunk behind them.
func TestRLargeArrays(t *testing.T) {
	p := startRArraysRawPool(t)
	p.recv(t) // ready
	big := ints32(5_000_000, func(i int) int32 { return int32(i*7919 - 1<<30) })
	reals := floats(2_500_000, func(i int) float64 { return float64(i)*0.37 - 1e6 })
	type call struct {
		dtype, shape, ret string // ret: the call's ret and returns
		blob              []byte
	}
	ints := func(vs []int32) call {
		return call{"i4", fmt.Sprint("[", len(vs), "]"), `{"rank":1,"number":"int"},"returns":{"list":"int"}`, i4Values(nil, nil, vs...).Data}
	}
	tests := []struct {
		name  string
		calls []call // written back to back, before any reply is read
	}{
		{"i4, rank 1, 20 MB", []call{ints(big)}},
		{"f8, rank 2, 20 MB", []call{{"f8", "[1000,2500]", `{"rank":2,"number":"real"},"returns":{"list":{"list":"real"}}`, f8Values(nil, nil, reals...).Data}}},
		{"just over a chunk", []call{ints(big[:300_000])}},
		{"under a chunk", []call{ints(big[:1000])}},
		{"three back to back", []call{ints(big[:700_000]), ints(big[1:300]), ints(big[2:2_000_001])}},
	}
	id := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := id + 1
			msgs := make([]string, len(tt.calls))
			for i, c := range tt.calls {
				id++
				msgs[i] = fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[null],"arrays":[{"path":[0],"dtype":%q,"shape":%s}],"ret":%s}`,
					id, raEcho, c.dtype, c.shape, c.ret)
			}
			// All in one write, so that the read that ends a blob brings in
			// the frames behind it; the replies are read meanwhile.
			var all bytes.Buffer
			for i, c := range tt.calls {
				writeBlob(&all, c.blob)
				writeFrame(&all, []byte(msgs[i]))
			}
			go p.in.Write(all.Bytes())
			for i, c := range tt.calls {
				m, blobs := p.recvWithBlobs(t)
				if m["type"] != "result" || fmt.Sprint(m["id"]) != fmt.Sprint(first+i) || len(blobs) != 1 {
					t.Fatalf("reply %v with %d blobs, want the result of call %d with one", m, len(blobs), first+i)
				}
				if !bytes.Equal(blobs[0], c.blob) {
					t.Errorf("call %d: the echo differs: %d bytes back for %d", first+i, len(blobs[0]), len(c.blob))
				}
			}
		})
	}
}
