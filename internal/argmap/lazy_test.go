package argmap

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/ndarray/ndarraytest"
)

// A result written lazily, a piece at a time, is the text ResultValue
// writes whole, byte for byte, and is refused for the same reason.
func TestLazyResultValueMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ints []int64
	for range 200_000 { // over ndarray's parallelMin: the whole text is written in parts
		ints = append(ints, rng.Int64N(2_000_000)-1_000_000)
	}
	var reals, wholes []float64
	for k := range 300 * 300 {
		f := rng.NormFloat64() * 1e3
		switch k % 997 {
		case 1:
			f = math.NaN()
		case 2:
			f = math.Inf(1)
		case 3:
			f = math.Inf(-1)
		case 4:
			f = 1e-9
		}
		reals = append(reals, f)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		wholes = append(wholes, math.Trunc(f/10)*10)
	}
	wholes[7] = 1e300
	notWhole := append([]float64(nil), wholes...)
	notWhole[1000] = 2.5
	i4 := make([]byte, 4*1000)
	for k := range 1000 {
		i4[4*k] = byte(k)
		i4[4*k+3] = byte(k % 2 * 0xff)
	}
	arr := func(path []any, dt ndarray.DType, shape []int, data []byte) ndarray.Array {
		return ndarray.Array{Path: path, DType: dt, Shape: shape, Data: data}
	}
	tests := []struct {
		name, schema, json string
		arrays             []ndarray.Array
		bad                bool // refused, by both
	}{
		{"ints", "aj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{len(ints)}, ndarraytest.I8(ints...))}, false},
		{"ints as reals", "af8", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{len(ints)}, ndarraytest.I8(ints...))}, false},
		{"reals with NaN and infinities", "aaf8", ` null `, []ndarray.Array{arr([]any{}, ndarray.F8, []int{300, 300}, ndarraytest.F8(reals...))}, false},
		{"whole reals as integers", "aaj", `null`, []ndarray.Array{arr([]any{}, ndarray.F8, []int{300, 300}, ndarraytest.F8(wholes...))}, false},
		{"nested three deep", "aaaj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{20, 100, 100}, ndarraytest.I8(ints...))}, false},
		{"i4", "aj", `null`, []ndarray.Array{arr([]any{}, ndarray.I4, []int{1000}, i4)}, false},
		{"empty rows", "aaj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{2, 0}, nil)}, false},
		{"empty", "aj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{0}, nil)}, false},
		{"in records", "am11vaf8", `[{"v":null},{"v":[1.0, 2]},{"v":null}]`, []ndarray.Array{
			arr([]any{0, "v"}, ndarray.F8, []int{300 * 300}, ndarraytest.F8(reals...)),
			arr([]any{2, "v"}, ndarray.I8, []int{len(ints)}, ndarraytest.I8(ints...))}, false},
		{"in a map", "<dict>at2saj", `{"k":null,"l":[3]}`, []ndarray.Array{arr([]any{"k"}, ndarray.I8, []int{len(ints)}, ndarraytest.I8(ints...))}, false},
		{"untyped", "*", `null`, []ndarray.Array{arr([]any{}, ndarray.F8, []int{4}, ndarraytest.F8(1, 2.5, 3, 4))}, false},
		{"no arrays", "am11vaf8", `[{"v":[1.0,2e3]}]`, nil, false},
		{"not whole", "aaj", `null`, []ndarray.Array{arr([]any{}, ndarray.F8, []int{300, 300}, ndarraytest.F8(notWhole...))}, true},
		{"NaN as an integer", "aaj", `null`, []ndarray.Array{arr([]any{}, ndarray.F8, []int{300, 300}, ndarraytest.F8(reals...))}, true},
		{"out of range", "ai2", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{len(ints)}, ndarraytest.I8(ints...))}, true},
		{"wrong rank", "aj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{2, 2}, ndarraytest.I8(1, 2, 3, 4))}, true},
		{"short blob", "aj", `null`, []ndarray.Array{arr([]any{}, ndarray.I8, []int{3}, ndarraytest.I8(1))}, true},
		{"mismatch after the array", "am11vaj", `[{"v":null},{"v":"x"}]`, []ndarray.Array{arr([]any{0, "v"}, ndarray.I8, []int{3}, ndarraytest.I8(1, 2, 3))}, true},
		{"bad JSON after the array", "aaj", `[null,[1]`, []ndarray.Array{arr([]any{0}, ndarray.I8, []int{3}, ndarraytest.I8(1, 2, 3))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ty, err := manifest.ParseType(tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			ret := &manifest.Return{T: ty}
			v := ndarray.Value{JSON: []byte(tt.json), Arrays: tt.arrays}
			whole, werr := ResultValue(ret, v)
			lazy, lerr := LazyResultValue(ret, v)
			if (werr != nil) != tt.bad {
				t.Fatalf("ResultValue: error %v, want one: %v", werr, tt.bad)
			}
			if fmt.Sprint(werr) != fmt.Sprint(lerr) {
				t.Fatalf("LazyResultValue: error %v, where ResultValue's is %v", lerr, werr)
			}
			if tt.bad {
				return
			}
			if got := lazy.Size(); len(whole) > 1000 && got < len(whole)*9/10 || got > len(whole)*12/10+64 {
				t.Errorf("Size %d, for a text of %d bytes", got, len(whole))
			}
			for _, piece := range []int{1, 7, 4096, 64 << 10} {
				var got bytes.Buffer
				largest := 0
				err := lazy.WriteTo(piece, func(p []byte) error {
					largest = max(largest, len(p))
					got.Write(p)
					return nil
				})
				if err != nil {
					t.Fatalf("piece %d: %v", piece, err)
				}
				if !bytes.Equal(got.Bytes(), whole) {
					t.Fatalf("piece %d: %d bytes differ from ResultValue's %d: %.80s… against %.80s…", piece, got.Len(), len(whole), got.Bytes(), whole)
				}
				if piece == 64<<10 && largest > 2*piece && len(whole) > 2*piece {
					t.Errorf("a piece of %d bytes, asked for %d", largest, piece)
				}
			}
			// A failed write stops the rest.
			stop := errors.New("client gone")
			n := 0
			if err := lazy.WriteTo(4096, func([]byte) error { n++; return stop }); err != stop || n != 1 {
				t.Errorf("WriteTo after a failed write: %v after %d pieces", err, n)
			}
		})
	}
}
