package morlocwire

import (
	"encoding/binary"
	"io"
	"math"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/msgpack"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// ArrayArg is the argument packet AppendArrayArg appends for a list of
// numbers ([Real] from f8, [Int] from i4 or i8), written to a connection
// a piece at a time (WriteTo): its bytes never exist whole, so a 100 MB
// argument needs no buffer of its size, nor the page faults of filling
// one.
type ArrayArg struct {
	a      ndarray.Array
	count  int
	ints   bool
	i4     bool // the ints are i4 (else i8)
	length int  // of the whole packet, header included
}

// streamPiece is how much of an ArrayArg is written at once.
const streamPiece = 64 << 10

// NewArrayArg prepares the packet of the array a, the whole argument of
// type t. ok is false when a is not one of the lists it writes (another
// rank or dtype): AppendArrayArg writes those. An Int out of its type's
// range is refused here, as AppendArrayArg refuses it, before anything is
// written.
func NewArrayArg(t *manifest.Type, a ndarray.Array, d Dialect) (*ArrayArg, bool, error) {
	n, err := layout(t, d)
	if err != nil {
		return nil, false, err
	}
	elem, count, err := arrayPlan(n, &a)
	if err != nil {
		return nil, false, err
	}
	if len(a.Shape) != 1 {
		return nil, false, nil
	}
	x := &ArrayArg{a: a, count: count}
	body := len(msgpack.AppendArrayHeader(nil, count))
	switch {
	case a.DType == ndarray.F8 && elem.prim == pF8:
		body += 9 * count
	case elem.kind == manifest.Int && (a.DType == ndarray.I4 || a.DType == ndarray.I8):
		x.ints, x.i4 = true, a.DType == ndarray.I4
		lo, hi, sized := intRange(elem.prim)
		for k := 0; k < count; k++ {
			v := x.int(k)
			if sized && (v < lo || v > hi) {
				return nil, false, under(rangeError(elem, strconv.FormatInt(v, 10)), seg{idx: k})
			}
			body += mpIntLen(v)
		}
	default:
		return nil, false, nil
	}
	x.length = HeaderSize + body
	return x, true, nil
}

// Len is the size of the packet WriteTo writes.
func (x *ArrayArg) Len() int { return x.length }

func (x *ArrayArg) int(k int) int64 {
	if x.i4 {
		return int64(int32(binary.LittleEndian.Uint32(x.a.Data[4*k:])))
	}
	return int64(binary.LittleEndian.Uint64(x.a.Data[8*k:]))
}

// WriteTo writes the packet, the bytes AppendArrayArg would append, to w.
func (x *ArrayArg) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, 0, streamPiece+16)
	buf = appendHeader(buf, [8]byte{TypeData, SourceMesg, FormatMsgpack}, 0, uint64(x.length-HeaderSize))
	buf = msgpack.AppendArrayHeader(buf, x.count)
	var written int64
	flush := func() error {
		n, err := w.Write(buf)
		written += int64(n)
		buf = buf[:0]
		return err
	}
	for k := 0; k < x.count; k++ {
		if x.ints {
			buf = msgpack.AppendInt(buf, x.int(k))
		} else {
			buf = append(buf, 0xcb)
			buf = binary.BigEndian.AppendUint64(buf, binary.LittleEndian.Uint64(x.a.Data[8*k:]))
		}
		if len(buf) >= streamPiece {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	if len(buf) > 0 {
		if err := flush(); err != nil {
			return written, err
		}
	}
	return written, nil
}

// mpIntLen is the size of mpInt's encoding of v.
func mpIntLen(v int64) int {
	switch {
	case v >= 0 && v < 128, v < 0 && v >= -32:
		return 1
	case v >= 0 && v <= math.MaxUint8, v < 0 && v >= math.MinInt8:
		return 2
	case v >= 0 && v <= math.MaxUint16, v < 0 && v >= math.MinInt16:
		return 3
	case v >= 0 && v <= math.MaxUint32, v < 0 && v >= math.MinInt32:
		return 5
	}
	return 9
}
