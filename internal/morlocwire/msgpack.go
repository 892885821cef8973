package morlocwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// MessagePack, as morloc's pools read it, is written by internal/msgpack;
// what is here reads a pool's.

// mpReader decodes a msgpack result (FILE+MSGPACK, MESG+MSGPACK) into
// JSON by its schema, as voidstar is decoded.
type mpReader struct {
	b     []byte
	i     int
	out   []byte
	depth int
	spell *ndarray.Spelling
}

func (r *mpReader) fail(format string, a ...any) error {
	return fmt.Errorf("msgpack at byte %d: %s", r.i, fmt.Sprintf(format, a...))
}

func (r *mpReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.i {
		return nil, r.fail("%d bytes wanted, %d left", n, len(r.b)-r.i)
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s, nil
}

func (r *mpReader) byte1() (byte, error) {
	if r.i >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// length reads the big-endian length of width w.
func (r *mpReader) length(w int) (int, error) {
	s, err := r.take(w)
	if err != nil {
		return 0, err
	}
	switch w {
	case 1:
		return int(s[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(s)), nil
	}
	return int(binary.BigEndian.Uint32(s)), nil
}

// integer reads any msgpack integer: as a signed value, or (big) as an
// unsigned one above MaxInt64.
func (r *mpReader) integer(c byte) (v int64, big uint64, isBig bool, err error) {
	switch {
	case c < 0x80:
		return int64(c), 0, false, nil
	case c >= 0xe0:
		return int64(int8(c)), 0, false, nil
	}
	var s []byte
	switch c {
	case 0xcc, 0xd0:
		s, err = r.take(1)
	case 0xcd, 0xd1:
		s, err = r.take(2)
	case 0xce, 0xd2:
		s, err = r.take(4)
	case 0xcf, 0xd3:
		s, err = r.take(8)
	default:
		return 0, 0, false, r.fail("marker %#02x where an integer belongs", c)
	}
	if err != nil {
		return 0, 0, false, err
	}
	switch c {
	case 0xcc:
		return int64(s[0]), 0, false, nil
	case 0xcd:
		return int64(binary.BigEndian.Uint16(s)), 0, false, nil
	case 0xce:
		return int64(binary.BigEndian.Uint32(s)), 0, false, nil
	case 0xcf:
		u := binary.BigEndian.Uint64(s)
		if u > math.MaxInt64 {
			return 0, u, true, nil
		}
		return int64(u), 0, false, nil
	case 0xd0:
		return int64(int8(s[0])), 0, false, nil
	case 0xd1:
		return int64(int16(binary.BigEndian.Uint16(s))), 0, false, nil
	case 0xd2:
		return int64(int32(binary.BigEndian.Uint32(s))), 0, false, nil
	}
	return int64(binary.BigEndian.Uint64(s)), 0, false, nil
}

func (r *mpReader) value(n *node) error {
	if r.depth++; r.depth > jsontext.MaxDepth {
		return fmt.Errorf("value nested deeper than %d levels", jsontext.MaxDepth)
	}
	err := r.dispatch(n)
	r.depth--
	return err
}

func (r *mpReader) dispatch(n *node) error {
	c, err := r.byte1()
	if err != nil {
		return err
	}
	switch n.kind {
	case manifest.Nil:
		if c != 0xc0 {
			return r.fail("marker %#02x where nil belongs", c)
		}
		r.out = append(r.out, "null"...)
	case manifest.Bool:
		if c != 0xc2 && c != 0xc3 {
			return r.fail("marker %#02x where a boolean belongs", c)
		}
		r.out = mpBoolJSON(r.out, c == 0xc3)
	case manifest.Int:
		if n.prim == pBig && c >= 0xc4 && c <= 0xc6 { // bin of limbs (v0.98 mpack.rs:91-106)
			size, err := r.length(1 << (c - 0xc4))
			if err != nil {
				return err
			}
			limbs, err := r.take(size)
			if err != nil {
				return err
			}
			if size == 0 || size%8 != 0 {
				return r.fail("integer of %d bytes (limbs are 8 bytes)", size)
			}
			r.out = appendLimbs(r.out, limbs)
			return nil
		}
		v, u, isBig, err := r.integer(c)
		if err != nil {
			return err
		}
		if isBig {
			if n.prim != pU8 && n.prim != pBig {
				return r.fail("%d does not fit %s", u, n.code)
			}
			r.out = strconv.AppendUint(r.out, u, 10)
			return nil
		}
		if lo, hi, ok := intRange(n.prim); ok && (v < lo || (v > hi && n.prim != pU8)) {
			return r.fail("%d does not fit %s", v, n.code)
		}
		r.out = strconv.AppendInt(r.out, v, 10)
	case manifest.Float:
		var f float64
		switch c {
		case 0xca:
			s, err := r.take(4)
			if err != nil {
				return err
			}
			f = float64(math.Float32frombits(binary.BigEndian.Uint32(s)))
		case 0xcb:
			s, err := r.take(8)
			if err != nil {
				return err
			}
			f = math.Float64frombits(binary.BigEndian.Uint64(s))
		default: // an integer where a float belongs: read as one (v0.98 mpack.rs:484-519)
			v, u, isBig, err := r.integer(c)
			if err != nil {
				return err
			}
			f = float64(v)
			if isBig {
				f = float64(u)
			}
		}
		if n.prim == pF4 {
			r.out = appendFloat32(r.out, float32(f), r.spell)
		} else {
			r.out = appendFloat64(r.out, f, r.spell)
		}
	case manifest.Str:
		var size int
		switch {
		case c >= 0xa0 && c <= 0xbf:
			size = int(c & 0x1f)
		case c == 0xd9 || c == 0xda || c == 0xdb:
			size, err = r.length(1 << (c - 0xd9))
		case c >= 0xc4 && c <= 0xc6:
			size, err = r.length(1 << (c - 0xc4))
		default:
			return r.fail("marker %#02x where a string belongs", c)
		}
		if err != nil {
			return err
		}
		s, err := r.take(size)
		if err != nil {
			return err
		}
		r.out = jsontext.AppendString(r.out, s)
	case manifest.List, manifest.Tuple, manifest.Record:
		var size int
		switch {
		case c >= 0x90 && c <= 0x9f:
			size = int(c & 0x0f)
		case c == 0xdc:
			size, err = r.length(2)
		case c == 0xdd:
			size, err = r.length(4)
		default:
			return r.fail("marker %#02x where a %s belongs", c, n.code)
		}
		if err != nil {
			return err
		}
		return r.sequence(n, size)
	case manifest.Optional:
		if c == 0xc0 {
			r.out = append(r.out, "null"...)
			return nil
		}
		r.i--
		return r.value(n.elem)
	case manifest.BackRef:
		r.i--
		return r.value(n.elem)
	default:
		return fmt.Errorf("cannot decode a %s", n.code)
	}
	return nil
}

func (r *mpReader) sequence(n *node, size int) error {
	if n.kind != manifest.List && size != len(n.items) {
		return r.fail("array of %d items where a %s of %d belongs", size, n.code, len(n.items))
	}
	if n.kind == manifest.List && n.fixedLen > 0 && size != n.fixedLen {
		return r.fail("list of %d items where its type says exactly %d", size, n.fixedLen)
	}
	if size > len(r.b)-r.i { // every item takes at least a byte
		return r.fail("array of %d items in %d bytes", size, len(r.b)-r.i)
	}
	open, close := byte('['), byte(']')
	if n.kind == manifest.Record {
		open, close = '{', '}'
	}
	r.out = append(r.out, open)
	for k := 0; k < size; k++ {
		e := n.elem
		if n.kind != manifest.List {
			e = n.items[k]
		}
		if n.kind == manifest.Record {
			r.out = append(r.out, n.jsonKeys[k]...)
		} else if k > 0 {
			r.out = append(r.out, ',')
		}
		if err := r.value(e); err != nil {
			if n.kind == manifest.Record {
				return under(err, seg{key: n.keys[k], idx: -1})
			}
			return under(err, seg{idx: k})
		}
	}
	r.out = append(r.out, close)
	return nil
}

func mpBoolJSON(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// intRange is the range of a sized integer (u8's top is MaxInt64 here;
// callers handle larger u8 values apart).
func intRange(p prim) (lo, hi int64, sized bool) {
	switch p {
	case pI1:
		return math.MinInt8, math.MaxInt8, true
	case pI2:
		return math.MinInt16, math.MaxInt16, true
	case pI4:
		return math.MinInt32, math.MaxInt32, true
	case pI8:
		return math.MinInt64, math.MaxInt64, true
	case pU1:
		return 0, math.MaxUint8, true
	case pU2:
		return 0, math.MaxUint16, true
	case pU4:
		return 0, math.MaxUint32, true
	case pU8:
		return 0, math.MaxInt64, true
	}
	return 0, 0, false
}
