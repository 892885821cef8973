// Package ndarraytest is test support, imported only by tests: the data
// of i8, i4 and f8 arrays (little-endian, laid out as docs/internals.md,
// "Arrays", says a blob is), and arrays of them.
package ndarraytest

import (
	"encoding/binary"
	"math"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// I8 is the data of an i8 array of vs.
func I8(vs ...int64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

// I4 is the data of an i4 array of vs.
func I4(vs ...int32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// F8 is the data of an f8 array of vs.
func F8(vs ...float64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// I8Array is the i8 array of vs at path, of shape.
func I8Array(path []any, shape []int, vs ...int64) ndarray.Array {
	return ndarray.Array{Path: path, DType: ndarray.I8, Shape: shape, Data: I8(vs...)}
}

// I4Array is the i4 array of vs at path, of shape.
func I4Array(path []any, shape []int, vs ...int32) ndarray.Array {
	return ndarray.Array{Path: path, DType: ndarray.I4, Shape: shape, Data: I4(vs...)}
}

// F8Array is the f8 array of vs at path, of shape.
func F8Array(path []any, shape []int, vs ...float64) ndarray.Array {
	return ndarray.Array{Path: path, DType: ndarray.F8, Shape: shape, Data: F8(vs...)}
}
