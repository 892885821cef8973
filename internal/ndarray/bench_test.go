package ndarray

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkAppendJSONInts(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	a := Array{Path: []any{}, DType: I8, Shape: []int{1_000_000}}
	for i := 0; i < 1_000_000; i++ {
		a.Data = binary.LittleEndian.AppendUint64(a.Data, uint64(r.IntN(1000000)))
	}
	benchAppendJSON(b, &a, Int, 8_000_000)
}

// benchAppendJSON measures writing a as JSON numbers of kind into a buffer
// of the given capacity, reused.
func benchAppendJSON(b *testing.B, a *Array, kind Number, capacity int) {
	dst := make([]byte, 0, capacity)
	b.SetBytes(int64(len(a.Data)))
	for b.Loop() {
		var err error
		if dst, err = AppendJSON(dst[:0], a, kind); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSONReals(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	a := Array{Path: []any{}, DType: F8, Shape: []int{1000, 1000}}
	for i := 0; i < 1_000_000; i++ {
		a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(r.Float64()*1000))
	}
	benchAppendJSON(b, &a, Real, 20_000_000)
}
