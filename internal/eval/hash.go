package eval

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

// ---- xxHash64 (the public algorithm, seeded) ----

const (
	prime1 uint64 = 0x9E3779B185EBCA87
	prime2 uint64 = 0xC2B2AE3D27D4EB4F
	prime3 uint64 = 0x165667B19E3779F9
	prime4 uint64 = 0x85EBCA77C2B2AE63
	prime5 uint64 = 0x27D4EB2F165667C5
)

func xxRound(acc, input uint64) uint64 {
	acc += input * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

func xxMerge(acc, val uint64) uint64 {
	val = xxRound(0, val)
	acc ^= val
	return acc*prime1 + prime4
}

// xxh64 is xxHash64 of b with the given seed.
func xxh64(b []byte, seed uint64) uint64 {
	n := len(b)
	var h uint64
	if n >= 32 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= 32 {
			v1 = xxRound(v1, binary.LittleEndian.Uint64(b[0:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = xxMerge(h, v1)
		h = xxMerge(h, v2)
		h = xxMerge(h, v3)
		h = xxMerge(h, v4)
	} else {
		h = seed + prime5
	}
	h += uint64(n)
	for len(b) >= 8 {
		h ^= xxRound(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
		b = b[8:]
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// mix folds b into a: morloc's mix, not part of xxHash.
func mix(a, b uint64) uint64 {
	a ^= b * prime1
	a = bits.RotateLeft64(a, 31)
	return a * prime2
}

// ---- morloc's structural hash (@hash) ----

// serialCode is morloc's SerialType number of a type, which the hash
// folds in at every level.
func serialCode(t *Type) uint64 {
	switch t.kind {
	case kNil:
		return 0
	case kBool:
		return 1
	case kInt:
		switch t.code {
		case "i1":
			return 2
		case "i2":
			return 3
		case "i4":
			return 4
		case "i8":
			return 5
		case "u1":
			return 6
		case "u2":
			return 7
		case "u4":
			return 8
		case "u8":
			return 9
		}
		return 18 // j
	case kFloat:
		if t.bits == 32 {
			return 10
		}
		return 11
	case kStr:
		return 13
	case kList:
		return 14
	case kTuple:
		return 15
	case kRecord:
		return 16
	case kOpt:
		return 17
	case kTable:
		return 19
	case kIFile:
		return 21
	case kOStream:
		return 22
	case kIStream:
		return 23
	}
	return 20 // a back-reference
}

// hash is @hash: 16 hex digits of morloc's structural xxHash64 (seed 0)
// of a value as laid out in morloc's memory (cache.rs, hash_voidstar).
func (r *run) hash(v Value, t *Type) (uint64, *Error) {
	return r.hashValue(v, t, 0)
}

func (r *run) hashValue(v Value, t *Type, seed uint64) (uint64, *Error) {
	if err := r.step(1); err != nil {
		return 0, err
	}
	for t != nil && t.kind == kDecl {
		t = t.elem
	}
	if t == nil || t.kind == kAny {
		return 0, internal("@hash: the value's type is unknown")
	}
	switch t.kind {
	case kRef:
		return 0, internal("@hash: cannot hash a recursive value: morloc hashes its memory layout, which holds addresses")
	case kOpt:
		return 0, internal("@hash: cannot hash an optional value: morloc hashes its memory address, which is not reproducible")
	case kTable:
		return 0, internal("@hash: cannot hash a table")
	}
	s := mix(seed, serialCode(t))
	switch t.kind {
	case kInt:
		if v.k != vInt {
			return 0, mismatch(t, v)
		}
		if t.bits != 0 {
			return xxh64(scalarBytes(nil, v, t), s), nil
		}
		if v.i == nil {
			return xxh64(binary.LittleEndian.AppendUint64(nil, uint64(v.n)), s), nil
		}
		return xxh64(limbBytes(v.i), s), nil
	case kStr:
		if v.k != vStr {
			return 0, mismatch(t, v)
		}
		s = mix(s, uint64(len(v.s)))
		if len(v.s) == 0 {
			return xxh64(nil, s), nil
		}
		if err := r.step(int64(len(v.s)) / 64); err != nil {
			return 0, err
		}
		return xxh64([]byte(v.s), mix(s, 6)), nil // a string is an array of u1
	case kIFile, kOStream, kIStream:
		if v.k != vStr {
			return 0, mismatch(t, v)
		}
		return xxh64([]byte(v.s), s), nil
	case kList:
		if v.k != vSeq {
			return 0, mismatch(t, v)
		}
		s = mix(s, uint64(len(v.seq)))
		if len(v.seq) == 0 {
			return xxh64(nil, s), nil
		}
		if w, _, ok := t.elem.fixedWidth(); ok {
			if err := r.step(int64(len(v.seq)) * int64(1+w/8)); err != nil {
				return 0, err
			}
			if err := r.alloc(int64(w) * int64(len(v.seq))); err != nil {
				return 0, err
			}
			buf := make([]byte, 0, w*len(v.seq))
			for _, x := range v.seq {
				var err *Error
				if buf, err = layout(buf, x, t.elem); err != nil {
					return 0, err
				}
			}
			return xxh64(buf, mix(s, serialCode(t.elem.resolve()))), nil
		}
		h := s
		for _, x := range v.seq {
			var err *Error
			if h, err = r.hashValue(x, t.elem, h); err != nil {
				return 0, err
			}
		}
		return h, nil
	case kTuple, kRecord:
		if v.k != vSeq || len(v.seq) != len(t.items) {
			return 0, mismatch(t, v)
		}
		if t.kind == kTuple {
			if w, _, ok := t.fixedWidth(); ok {
				if err := r.step(int64(w / 8)); err != nil {
					return 0, err
				}
				buf, err := layout(nil, v, t)
				if err != nil {
					return 0, err
				}
				return xxh64(buf, s), nil
			}
		}
		h := s
		for i, x := range v.seq {
			var err *Error
			if h, err = r.hashValue(x, t.items[i], h); err != nil {
				return 0, err
			}
		}
		return h, nil
	case kNil:
		return xxh64(nil, s), nil
	case kBool, kFloat:
		if (t.kind == kBool) != (v.k == vBool) || (t.kind == kFloat) != (v.k == vFloat) {
			return 0, mismatch(t, v)
		}
		return xxh64(scalarBytes(nil, v, t), s), nil
	}
	return 0, internal("@hash: cannot hash %s", t.describe())
}

// scalarBytes appends a fixed-width scalar's little-endian bytes.
func scalarBytes(b []byte, v Value, t *Type) []byte {
	switch t.kind {
	case kBool:
		if v.b {
			return append(b, 1)
		}
		return append(b, 0)
	case kFloat:
		if t.bits == 32 {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v.f)))
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.f))
	case kInt:
		// Two's complement, truncated to the width.
		u := uint64(v.n)
		if v.i != nil {
			u = v.i.Uint64() // the low 64 bits of |v|: a u8 beyond int64
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], u)
		return append(b, w[:t.bits/8]...)
	}
	return b
}

// layout appends the C layout of a fixed-width value: fields at their
// natural alignment, zero padding, the whole padded to its alignment.
func layout(b []byte, v Value, t *Type) ([]byte, *Error) {
	t = t.resolve()
	switch t.kind {
	case kNil:
		return b, nil
	case kBool, kFloat, kInt:
		if (t.kind == kBool && v.k != vBool) || (t.kind == kFloat && v.k != vFloat) || (t.kind == kInt && v.k != vInt) {
			return nil, mismatch(t, v)
		}
		return scalarBytes(b, v, t), nil
	case kTuple:
		if v.k != vSeq || len(v.seq) != len(t.items) {
			return nil, mismatch(t, v)
		}
		start := len(b)
		maxAlign := 1
		for i, it := range t.items {
			_, a, _ := it.fixedWidth()
			maxAlign = max(maxAlign, a)
			for (len(b)-start)%a != 0 {
				b = append(b, 0)
			}
			var err *Error
			if b, err = layout(b, v.seq[i], it); err != nil {
				return nil, err
			}
		}
		for (len(b)-start)%maxAlign != 0 {
			b = append(b, 0)
		}
		return b, nil
	}
	return nil, internal("@hash: %s has no fixed layout", t.describe())
}

// limbBytes is morloc's form of a `j`: the 8 little-endian bytes of an
// i64 when the value fits, else its two's-complement 64-bit limbs, least
// significant first, with a sign limb when the top bit would misread.
func limbBytes(n *big.Int) []byte {
	if n.IsInt64() {
		return binary.LittleEndian.AppendUint64(nil, uint64(n.Int64()))
	}
	mag := new(big.Int).Abs(n)
	words := (mag.BitLen() + 63) / 64
	limbs := make([]uint64, words)
	m := new(big.Int).Set(mag)
	mask := new(big.Int).SetUint64(math.MaxUint64)
	for i := range limbs {
		limbs[i] = new(big.Int).And(m, mask).Uint64()
		m.Rsh(m, 64)
	}
	if n.Sign() < 0 {
		carry := uint64(1)
		for i := range limbs {
			limbs[i], carry = bits.Add64(^limbs[i], 0, carry)
		}
		if limbs[len(limbs)-1]>>63 == 0 {
			limbs = append(limbs, math.MaxUint64)
		}
	} else if limbs[len(limbs)-1]>>63 != 0 {
		limbs = append(limbs, 0)
	}
	out := make([]byte, 0, 8*len(limbs))
	for _, l := range limbs {
		out = binary.LittleEndian.AppendUint64(out, l)
	}
	return out
}
