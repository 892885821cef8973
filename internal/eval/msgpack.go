package eval

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/msgpack"
)

// msgpack, written as morloc writes it (mpack.rs, with rmp's smallest
// encodings, internal/msgpack): integers in the fewest bytes, reals as
// float64, strings as str, lists, tuples and records as arrays (records in
// field order), a null optional as nil, a `j` beyond i64 as bin of its
// two's-complement little-endian 64-bit limbs.

// packMsgpack encodes v of type t, within the run's bounds (see printer)
// and charges the bytes to its memory.
func (r *run) packMsgpack(v Value, t *Type) ([]byte, error) {
	pk := &packer{r: r}
	b, err := pk.value(nil, v, t)
	if err != nil {
		return nil, err
	}
	if r != nil {
		if err := r.alloc(int64(len(b))); err != nil {
			return nil, err
		}
	}
	return b, nil
}

type packer struct{ r *run }

func (pk *packer) grew(b []byte) error {
	return (&printer{buf: b, r: pk.r}).grew()
}

func (pk *packer) value(b []byte, v Value, t *Type) ([]byte, error) {
	t = t.resolve()
	switch t.kind {
	case kNil:
		return msgpack.AppendNil(b), nil
	case kBool:
		if v.k != vBool {
			return nil, mismatch(t, v)
		}
		return msgpack.AppendBool(b, v.b), nil
	case kInt:
		if v.k != vInt {
			return nil, mismatch(t, v)
		}
		switch {
		case v.i == nil:
			return msgpack.AppendInt(b, v.n), nil
		case v.i.IsUint64():
			return msgpack.AppendUint(b, v.i.Uint64()), nil
		}
		if t.bits != 0 {
			return nil, mismatch(t, v)
		}
		limbs := limbBytes(v.i)
		return append(msgpack.AppendBinHeader(b, len(limbs)), limbs...), nil
	case kFloat:
		if v.k != vFloat {
			return nil, mismatch(t, v)
		}
		return msgpack.AppendFloat64(b, v.f), nil
	case kStr, kIFile, kOStream, kIStream:
		if v.k != vStr {
			return nil, mismatch(t, v)
		}
		b = msgpack.AppendStrHeader(b, len(v.s))
		return append(b, v.s...), nil
	case kList, kTuple, kRecord:
		if v.k != vSeq || (t.kind != kList && len(v.seq) != len(t.items)) {
			return nil, mismatch(t, v)
		}
		b = msgpack.AppendArrayHeader(b, len(v.seq))
		for i, x := range v.seq {
			et := t.elem
			if t.kind != kList {
				et = t.items[i]
			}
			var err error
			if b, err = pk.value(b, x, et); err != nil {
				return nil, err
			}
			if err := pk.grew(b); err != nil {
				return nil, err
			}
		}
		return b, nil
	case kOpt:
		if v.k == vNull {
			return msgpack.AppendNil(b), nil
		}
		return pk.value(b, v, t.elem)
	case kAny:
		return nil, internal("cannot encode a value of unknown type")
	}
	return nil, internal("Cannot msgpack-encode %s", t.describe())
}

// unpackMsgpack reads msgpack as a value of type t, as morloc's reader
// does: any integer encoding for an integer, any number for a real, str
// for a string, an array for a list, tuple or record, nil for a null
// optional, bin limbs or an integer for a `j`.
func unpackMsgpack(data []byte, t *Type) (Value, error) {
	u := &unpacker{b: data}
	v, err := u.value(t, 0)
	if err != nil {
		return unit, fmt.Errorf("msgpack: %w", err)
	}
	if u.i != len(u.b) {
		return unit, fmt.Errorf("msgpack: %d bytes after the value", len(u.b)-u.i)
	}
	return v, nil
}

type unpacker struct {
	b []byte
	i int
}

var errEOF = errors.New("unexpected end of data")

func (u *unpacker) take(n int) ([]byte, error) {
	if n < 0 || len(u.b)-u.i < n {
		return nil, errEOF
	}
	s := u.b[u.i : u.i+n]
	u.i += n
	return s, nil
}

func (u *unpacker) marker() (byte, error) {
	s, err := u.take(1)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

func (u *unpacker) uintN(n int) (uint64, error) {
	s, err := u.take(n)
	if err != nil {
		return 0, err
	}
	var x uint64
	for _, c := range s {
		x = x<<8 | uint64(c)
	}
	return x, nil
}

// number reads any msgpack integer or real.
func (u *unpacker) number() (i *big.Int, f float64, isInt bool, err error) {
	m, err := u.marker()
	if err != nil {
		return nil, 0, false, err
	}
	switch {
	case m < 0x80:
		return big.NewInt(int64(m)), 0, true, nil
	case m >= 0xe0:
		return big.NewInt(int64(int8(m))), 0, true, nil
	}
	switch m {
	case 0xcc, 0xcd, 0xce, 0xcf:
		x, err := u.uintN(1 << (m - 0xcc))
		return new(big.Int).SetUint64(x), 0, true, err
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n := 1 << (m - 0xd0)
		x, err := u.uintN(n)
		shift := 64 - 8*n
		return big.NewInt(int64(x<<shift) >> shift), 0, true, err
	case 0xca:
		x, err := u.uintN(4)
		return nil, float64(math.Float32frombits(uint32(x))), false, err
	case 0xcb:
		x, err := u.uintN(8)
		return nil, math.Float64frombits(x), false, err
	}
	return nil, 0, false, fmt.Errorf("expected a number, got marker %#02x", m)
}

func (u *unpacker) length(fixBase, fixMask byte, m8, m16, m32 byte, what string) (int, error) {
	m, err := u.marker()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case fixMask != 0 && m&^fixMask == fixBase:
		n = uint64(m & fixMask)
	case m == m8 && m8 != 0:
		n, err = u.uintN(1)
	case m == m16:
		n, err = u.uintN(2)
	case m == m32:
		n, err = u.uintN(4)
	default:
		return 0, fmt.Errorf("expected %s, got marker %#02x", what, m)
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(len(u.b)-u.i) {
		return 0, errEOF // every element takes at least one byte
	}
	return int(n), nil
}

func (u *unpacker) value(t *Type, depth int) (Value, error) {
	if depth > maxJSONDepth {
		return unit, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	t = t.resolve()
	switch t.kind {
	case kNil:
		m, err := u.marker()
		if err != nil || m != 0xc0 {
			return unit, fmt.Errorf("expected nil")
		}
		return unit, nil
	case kBool:
		m, err := u.marker()
		if err != nil || (m != 0xc2 && m != 0xc3) {
			return unit, fmt.Errorf("expected a boolean")
		}
		return boolValue(m == 0xc3), nil
	case kInt:
		if t.bits == 0 && u.i < len(u.b) && u.b[u.i] >= 0xc4 && u.b[u.i] <= 0xc6 {
			n, err := u.length(0, 0, 0xc4, 0xc5, 0xc6, "bin")
			if err != nil {
				return unit, err
			}
			raw, _ := u.take(n)
			return intValue(fromLimbs(raw)), nil
		}
		i, _, isInt, err := u.number()
		if err != nil {
			return unit, err
		}
		if !isInt {
			return unit, fmt.Errorf("expected an integer for %s, got a real", intName(t))
		}
		v := intValue(i)
		if !fitsValue(t, v) {
			lo, hi := intRange(t)
			return unit, fmt.Errorf("value %s out of range for %s (range %s to %s)", i, intName(t), lo, hi)
		}
		return v, nil
	case kFloat:
		i, f, isInt, err := u.number()
		if err != nil {
			return unit, err
		}
		if isInt {
			f, _ = new(big.Float).SetInt(i).Float64()
		}
		return floatValue(roundFloat(t, f)), nil
	case kStr, kIFile, kOStream, kIStream:
		n, err := u.length(0xa0, 0x1f, 0xd9, 0xda, 0xdb, "a string")
		if err != nil {
			return unit, err
		}
		s, _ := u.take(n)
		if !utf8.Valid(s) {
			return unit, fmt.Errorf("invalid UTF-8 in a string")
		}
		return strValue(string(s)), nil
	case kList, kTuple, kRecord:
		n, err := u.length(0x90, 0x0f, 0, 0xdc, 0xdd, "an array")
		if err != nil {
			return unit, err
		}
		if t.kind == kList && t.length > 0 && n != t.length {
			return unit, fmt.Errorf("Array length mismatch: expected %d, got %d", t.length, n)
		}
		if t.kind != kList && n != len(t.items) {
			return unit, fmt.Errorf("expected %d fields, got %d", len(t.items), n)
		}
		out := make([]Value, n)
		for k := range out {
			et := t.elem
			if t.kind != kList {
				et = t.items[k]
			}
			if out[k], err = u.value(et, depth+1); err != nil {
				return unit, err
			}
		}
		return seqValue(out), nil
	case kOpt:
		if u.i < len(u.b) && u.b[u.i] == 0xc0 {
			u.i++
			return unit, nil
		}
		return u.value(t.elem, depth+1)
	}
	return unit, fmt.Errorf("cannot read %s", t.describe())
}

// fromLimbs reads two's-complement little-endian 64-bit limbs.
func fromLimbs(raw []byte) *big.Int {
	n := len(raw) / 8 * 8
	be := make([]byte, n)
	for k := 0; k < n; k++ {
		be[n-1-k] = raw[k]
	}
	x := new(big.Int).SetBytes(be)
	if n > 0 && raw[n-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return x
}
