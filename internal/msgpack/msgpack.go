// Package msgpack owns the MessagePack that nexus writes for morloc: each
// scalar and header in its smallest form, lengths and numbers big-endian,
// as morloc's runtimes read it and as morloc writes it itself (v0.69
// serialize.c:300-685 with libmpack; v0.98 morloc-runtime/src/mpack.rs with
// rmp). The format is small enough that nexus keeps its own writer rather
// than a dependency, which also pins the bytes to morloc's. Reading stays
// with each reader (internal/eval reads its values, internal/morlocwire
// JSON). It imports nothing from nexus.
package msgpack

import (
	"encoding/binary"
	"math"
)

// AppendNil appends nil.
func AppendNil(dst []byte) []byte { return append(dst, 0xc0) }

// AppendBool appends true or false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 0xc3)
	}
	return append(dst, 0xc2)
}

// AppendUint appends u as an unsigned int.
func AppendUint(dst []byte, u uint64) []byte {
	switch {
	case u < 0x80:
		return append(dst, byte(u))
	case u <= math.MaxUint8:
		return append(dst, 0xcc, byte(u))
	case u <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(u))
	case u <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(u))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), u)
}

// AppendInt appends v; a non-negative v as an unsigned int, as rmp writes
// it and every signed slot of both runtimes reads it (v0.69
// serialize.c:416-446; v0.98 mpack.rs:428).
func AppendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

// AppendFloat64 appends f as a float 64.
func AppendFloat64(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, 0xcb), math.Float64bits(f))
}

// AppendFloat32 appends f as a float 32.
func AppendFloat32(dst []byte, f float32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, 0xca), math.Float32bits(f))
}

// AppendStrHeader appends the header of a str of n bytes.
func AppendStrHeader(dst []byte, n int) []byte { return appendHeader(dst, n, 0xa0, 32, 0xd9) }

// AppendBinHeader appends the header of a bin of n bytes (bin has no fix
// form).
func AppendBinHeader(dst []byte, n int) []byte { return appendHeader(dst, n, 0, 0, 0xc4) }

// AppendArrayHeader appends the header of an array of n elements (an array
// has no 8-bit form).
func AppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdd), uint32(n))
}

// appendHeader appends a str or bin header: the fix form (fix|n) when n <
// fixMax, else the 8-, 16- or 32-bit form, whose markers are m8, m8+1 and
// m8+2.
func appendHeader(dst []byte, n int, fix byte, fixMax int, m8 byte) []byte {
	switch {
	case n < fixMax:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint8:
		return append(dst, m8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, m8+1), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, m8+2), uint32(n))
}
