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
	dst := make([]byte, 0, 8_000_000)
	b.SetBytes(int64(len(a.Data)))
	for b.Loop() {
		var err error
		if dst, err = AppendJSON(dst[:0], &a, Int); err != nil {
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
	dst := make([]byte, 0, 20_000_000)
	b.SetBytes(int64(len(a.Data)))
	for b.Loop() {
		var err error
		if dst, err = AppendJSON(dst[:0], &a, Real); err != nil {
			b.Fatal(err)
		}
	}
}
