package jsontext

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// intList is a JSON list of n integers from 0 to 999999, as a client sends.
func intList(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := []byte{'['}
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(r.IntN(1000000)), 10)
	}
	return append(b, ']')
}

func BenchmarkValueInts(b *testing.B) {
	list := intList(1_000_000)
	b.SetBytes(int64(len(list)))
	for b.Loop() {
		if _, err := Value(list, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendStringInts(b *testing.B) {
	list := intList(1_000_000)
	b.SetBytes(int64(len(list)))
	dst := make([]byte, 0, len(list)+16)
	for b.Loop() {
		dst = AppendString(dst[:0], list)
	}
}

func BenchmarkSkipInts(b *testing.B) {
	list := intList(1_000_000)
	b.SetBytes(int64(len(list)))
	for b.Loop() {
		if _, err := Skip(list, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
