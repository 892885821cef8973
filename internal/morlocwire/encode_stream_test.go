package morlocwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// shortWriter takes at most 1000 bytes a call, so that WriteTo's pieces
// are split further.
type shortWriter struct {
	bytes.Buffer
	calls int // Write calls: more than one for a list past one piece
}

func (w *shortWriter) Write(p []byte) (int, error) {
	w.calls++
	for rest := p; len(rest) > 0; {
		n := min(len(rest), 1000)
		w.Buffer.Write(rest[:n])
		rest = rest[n:]
	}
	return len(p), nil
}

// An ArrayArg writes AppendArrayArg's bytes, of the length it says; it
// refuses what AppendArrayArg refuses, before writing, and leaves what it
// does not stream to AppendArrayArg.
func TestArrayArgStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	f8 := func(xs ...float64) ndarray.Array {
		a := ndarray.Array{DType: ndarray.F8, Shape: []int{len(xs)}}
		for _, x := range xs {
			a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(x))
		}
		return a
	}
	i8 := func(xs ...int64) ndarray.Array {
		a := ndarray.Array{DType: ndarray.I8, Shape: []int{len(xs)}}
		for _, x := range xs {
			a.Data = binary.LittleEndian.AppendUint64(a.Data, uint64(x))
		}
		return a
	}
	i4 := func(xs ...int32) ndarray.Array {
		a := ndarray.Array{DType: ndarray.I4, Shape: []int{len(xs)}}
		for _, x := range xs {
			a.Data = binary.LittleEndian.AppendUint32(a.Data, uint32(x))
		}
		return a
	}
	reals := make([]float64, 50_000) // past one piece, and an array32 header
	for i := range reals {
		reals[i] = r.NormFloat64() * 1e6
	}
	reals[7] = math.NaN()
	ints := make([]int64, 20_000)
	for i := range ints {
		// every msgpack integer width
		ints[i] = r.Int64N(1<<uint(i%63)) * int64(1-2*(i%2))
	}
	ints[3], ints[4] = math.MinInt64, math.MaxInt64
	small := []int32{0, 1, -1, 127, 128, -32, -33, 255, 256, -128, -129, 65535, 65536, -32768, -32769, math.MaxInt32, math.MinInt32}
	for _, c := range []struct {
		name, schema string
		a            ndarray.Array
		streams      bool
		d            Dialect
	}{
		{"reals", "af8", f8(reals...), true, C},
		{"empty", "af8", f8(), true, C},
		{"fifteen", "af8", f8(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), true, C},
		{"ints i8", "ai8", i8(ints...), true, C},
		{"ints as j", "aj", i8(ints...), true, Rust},
		{"small i4", "ai4", i4(small...), true, C},
		{"i4 into i8", "ai8", i4(small...), true, C},
		{"f4 from f8", "af4", f8(1.5, 2.25), false, C},
		{"ints from f8", "ai4", f8(1, 2), false, C},
		{"a matrix", "aaf8", ndarray.Array{DType: ndarray.F8, Shape: []int{1, 2}, Data: f8(1, 2).Data}, false, C},
	} {
		ty := mustType(t, c.schema)
		d := c.d
		want, werr := AppendArrayArg(nil, ty, c.a, d)
		x, ok, err := NewArrayArg(ty, c.a, d)
		if err != nil || ok != c.streams {
			t.Errorf("%s: ok %v, %v; want ok %v", c.name, ok, err, c.streams)
			continue
		}
		if !ok {
			continue
		}
		if werr != nil {
			t.Fatalf("%s: AppendArrayArg: %v", c.name, werr)
		}
		var w shortWriter
		n, err := x.WriteTo(&w)
		if err != nil || n != int64(w.Len()) {
			t.Fatalf("%s: WriteTo says %d bytes, %v; %d written", c.name, n, err, w.Len())
		}
		if x.Len() > streamPiece && w.calls < 2 {
			t.Errorf("%s: %d bytes in %d write, want it a piece at a time", c.name, x.Len(), w.calls)
		}
		if x.Len() != len(want) || !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%s: %d bytes (Len %d), want AppendArrayArg's %d", c.name, w.Len(), x.Len(), len(want))
		}
	}
	// Out of range: both refuse, with the same message.
	ty := mustType(t, "ai2")
	a := i8(1, 2, 40000)
	_, werr := AppendArrayArg(nil, ty, a, C)
	_, _, err := NewArrayArg(ty, a, C)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Errorf("out of range: %v, want %v", err, werr)
	}
	var r2 *ValueError
	if !errors.As(err, &r2) {
		t.Errorf("out of range: %T, not a refusal", err)
	}
}
