package argmap

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// WriteCLIResult writes what CLIResultValue writes (and a newline), for
// every array it takes, across its pieces; it leaves what it does not take
// untouched, to CLIResultValue.
func TestWriteCLIResult(t *testing.T) {
	f8 := func(shape []int, f func(i int) float64) ndarray.Array {
		a := ndarray.Array{Path: []any{}, DType: ndarray.F8, Shape: shape}
		n := 1
		for _, d := range shape {
			n *= d
		}
		for i := range n {
			a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(f(i)))
		}
		return a
	}
	i8 := func(n int, f func(i int) int64) ndarray.Array {
		a := ndarray.Array{Path: []any{}, DType: ndarray.I8, Shape: []int{n}}
		for i := range n {
			a.Data = binary.LittleEndian.AppendUint64(a.Data, uint64(f(i)))
		}
		return a
	}
	ret := func(schema string) *manifest.Return {
		ty, err := manifest.ParseType(schema)
		if err != nil {
			t.Fatal(err)
		}
		return &manifest.Return{T: ty}
	}
	null := []byte("null")
	big := 3*cliPiece + 17 // several pieces and a short last one
	for _, c := range []struct {
		name  string
		ret   *manifest.Return
		v     ndarray.Value
		takes bool
	}{
		{"reals", ret("af8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{big}, func(i int) float64 { return float64(i)*0.1 - 7 })}}, true},
		{"non-finite", ret("af8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{5}, func(i int) float64 { return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.5}[i] })}}, true},
		{"one", ret("af8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{1}, func(int) float64 { return 2 })}}, true},
		{"empty", ret("af8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{0}, nil)}}, true},
		{"matrix", ret("aaf8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{700, 500}, func(i int) float64 { return float64(i) / 3 })}}, true},
		{"ints", ret("ai8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{i8(big, func(i int) int64 { return int64(i) * -12345 })}}, true},
		{"ints out of i4", ret("ai4"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{i8(3, func(i int) int64 { return int64(i) << 40 })}}, false},
		{"f8 for Ints", ret("ai4"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{2}, func(i int) float64 { return 1 })}}, false},
		{"wrong rank", ret("f8"), ndarray.Value{JSON: null, Arrays: []ndarray.Array{f8([]int{2}, func(i int) float64 { return 1 })}}, false},
		{"JSON", ret("af8"), ndarray.Value{JSON: []byte("[1,2]")}, false},
	} {
		var w bytes.Buffer
		ok, err := WriteCLIResult(&w, c.ret, c.v)
		if ok != c.takes || err != nil {
			t.Errorf("%s: ok %v, %v; want ok %v", c.name, ok, err, c.takes)
			continue
		}
		if !ok {
			if w.Len() != 0 {
				t.Errorf("%s: wrote %d bytes without taking it", c.name, w.Len())
			}
			continue
		}
		want, err := CLIResultValue(c.ret, c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(w.Bytes(), append(want, '\n')) {
			t.Errorf("%s: wrote %.80s... (%d bytes), want %.80s... (%d bytes)", c.name, w.Bytes(), w.Len(), want, len(want)+1)
		}
	}
}
