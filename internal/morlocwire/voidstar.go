package morlocwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// space resolves relative pointers: where the bytes of a value are.
type space interface {
	// bytes returns the n bytes at relative pointer r, or an error saying
	// why they are not there. The slice is never longer than n.
	bytes(r, n uint64) ([]byte, error)
	// size is the number of bytes the space holds: it bounds the output.
	size() int
}

// inline is the payload of a MESG+VOIDSTAR packet: relative pointers are
// byte offsets from its start (v0.69 packet.c:716-854; v0.98
// voidstar.rs:687-890). A 0.98 packet with a VOL_INDEX block has that
// volume index in the high bits of every relptr (v0.98
// morloc-runtime/src/packet.rs:167-181): base is that index << 48.
type inline struct {
	b    []byte
	base uint64
}

func (s *inline) bytes(r, n uint64) ([]byte, error) {
	off := r - s.base
	if r < s.base || off > uint64(len(s.b)) || n > uint64(len(s.b))-off {
		return nil, fmt.Errorf("relative pointer %d (%d bytes) points outside the %d-byte payload", int64(r), n, len(s.b))
	}
	return s.b[off : off+n : off+n], nil
}

func (s *inline) size() int { return len(s.b) }

// maxLimbs bounds a j value's limbs (1 MiB of digits' worth).
const maxLimbs = 1 << 17

// maxZeroWidth bounds a list of values that take no bytes (0.98's nil),
// which nothing else bounds.
const maxZeroWidth = 1 << 24

// errExpands is a result whose JSON grows beyond its limit: relative
// pointers that point back at their own value, or a hostile packet.
var errExpands = errors.New("the value expands beyond its size limit (do its relative pointers form a cycle?)")

// decoder writes a voidstar value as JSON in nexus's conventions
// (docs/internals.md, "Values"; internal/argmap/result.go): records as
// objects in field order, tuples as arrays, an absent optional as null,
// integers as digits, reals in the shortest form that reads back the same
// (ndarray.AppendReal), NaN and the infinities as the strings "NaN",
// "Infinity" and "-Infinity".
type decoder struct {
	sp    space
	out   []byte
	limit int // the output may not grow past this
	depth int
	spell *ndarray.Spelling
	zeros int // items of zero-width lists still allowed
}

// newDecoder sizes the output to est. A value's JSON is at most about 6
// times its bytes (a control character in a string, "false" for a
// 1-byte Bool); 16 times them bounds it, except for lists of values
// that take no bytes, which add their own allowance as they come. A
// value whose relptrs loop back hits the bound instead of running on.
func newDecoder(sp space, est int) *decoder {
	limit := 16*sp.size() + 1<<20
	return &decoder{
		sp:    sp,
		out:   make([]byte, 0, min(est, limit)),
		limit: limit,
		spell: ndarray.ClientSpelling,
		zeros: maxZeroWidth,
	}
}

// value writes the value of n held in b (at least n.width bytes).
func (dec *decoder) value(n *node, b []byte) error {
	if len(dec.out) > dec.limit {
		return errExpands
	}
	if dec.depth++; dec.depth > jsontext.MaxDepth {
		return fmt.Errorf("value nested deeper than %d levels", jsontext.MaxDepth)
	}
	err := dec.dispatch(n, b[:n.width:n.width])
	dec.depth--
	return err
}

func (dec *decoder) dispatch(n *node, b []byte) error {
	switch n.kind {
	case manifest.Nil:
		dec.out = append(dec.out, "null"...)
	case manifest.Bool, manifest.Int, manifest.Float:
		if n.prim == pBig {
			return dec.bigInt(b)
		}
		dec.out = dec.appendNumber(dec.out, n.prim, b)
	case manifest.Str:
		size, rel := arrayHeader(b)
		if size == 0 {
			dec.out = append(dec.out, `""`...)
			return nil
		}
		s, err := dec.sp.bytes(rel, size)
		if err != nil {
			return fmt.Errorf("string of %d bytes: %w", size, err)
		}
		dec.out = jsontext.AppendString(dec.out, s)
	case manifest.List:
		return dec.list(n, b)
	case manifest.Tuple:
		dec.out = append(dec.out, '[')
		for k, c := range n.items {
			if k > 0 {
				dec.out = append(dec.out, ',')
			}
			if err := dec.value(c, b[n.offs[k]:]); err != nil {
				return under(err, seg{idx: k})
			}
		}
		dec.out = append(dec.out, ']')
	case manifest.Record:
		dec.out = append(dec.out, '{')
		for k, c := range n.items {
			dec.out = append(dec.out, n.jsonKeys[k]...)
			if err := dec.value(c, b[n.offs[k]:]); err != nil {
				return under(err, seg{key: n.keys[k], idx: -1})
			}
		}
		dec.out = append(dec.out, '}')
	case manifest.Optional:
		if n.offs == nil { // a relptr slot (0.98)
			r := binary.LittleEndian.Uint64(b)
			if int64(r) == -1 {
				dec.out = append(dec.out, "null"...)
				return nil
			}
			if int64(r) < 0 {
				return fmt.Errorf("optional holds the reserved relative pointer %d", int64(r))
			}
			v, err := dec.sp.bytes(r, uint64(n.elem.width))
			if err != nil {
				return fmt.Errorf("optional value: %w", err)
			}
			return dec.value(n.elem, v)
		}
		if b[0] == 0 { // an inline tag (0.69): 0 absent, else present
			dec.out = append(dec.out, "null"...)
			return nil
		}
		return dec.value(n.elem, b[n.offs[0]:])
	case manifest.BackRef:
		return dec.value(n.elem, b)
	default:
		return fmt.Errorf("cannot decode a %s", n.code)
	}
	return nil
}

// arrayHeader reads an Array {size u64, data relptr} (v0.69 schema.h:65-68).
func arrayHeader(b []byte) (size, rel uint64) {
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
}

func (dec *decoder) list(n *node, b []byte) error {
	size, rel := arrayHeader(b)
	if n.fixedLen > 0 && size != uint64(n.fixedLen) {
		return fmt.Errorf("list of %d items where its type says exactly %d", size, n.fixedLen)
	}
	if size == 0 {
		dec.out = append(dec.out, "[]"...)
		return nil
	}
	e := n.elem
	w := uint64(e.width)
	if w == 0 {
		return dec.zeroWidth(n, size)
	}
	if w > 0 && size > math.MaxUint64/w {
		return fmt.Errorf("list of %d items of %d bytes does not fit in memory", size, w)
	}
	data, err := dec.sp.bytes(rel, size*w)
	if err != nil {
		return fmt.Errorf("list of %d items: %w", size, err)
	}
	if e.kind == manifest.Int || e.kind == manifest.Float {
		if e.prim != pBig {
			dec.out = dec.appendNumbers(dec.out, e.prim, data, int(size))
			return nil
		}
	}
	dec.out = append(dec.out, '[')
	for i := uint64(0); i < size; i++ {
		if i > 0 {
			dec.out = append(dec.out, ',')
		}
		if err := dec.value(e, data[i*w:]); err != nil {
			return under(err, seg{idx: int(i)})
		}
	}
	dec.out = append(dec.out, ']')
	return nil
}

// zeroWidth writes a list of size values that take no bytes (0.98's nil,
// tuples of them): each item is the same, allowed for by the output bound.
func (dec *decoder) zeroWidth(n *node, size uint64) error {
	if size > uint64(dec.zeros) {
		return fmt.Errorf("list of %d empty values (more than %d in all)", size, maxZeroWidth)
	}
	dec.zeros -= int(size)
	dec.out = append(dec.out, '[')
	start := len(dec.out)
	if err := dec.value(n.elem, nil); err != nil {
		return under(err, seg{idx: 0})
	}
	item := dec.out[start:]
	dec.limit += int(size) * (len(item) + 1)
	for i := uint64(1); i < size; i++ {
		dec.out = append(append(dec.out, ','), item...)
	}
	dec.out = append(dec.out, ']')
	return nil
}

// appendNumber writes the fixed-width primitive p held in b.
func (dec *decoder) appendNumber(dst []byte, p prim, b []byte) []byte {
	switch p {
	case pBool:
		if b[0] != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case pI1:
		return strconv.AppendInt(dst, int64(int8(b[0])), 10)
	case pU1:
		return strconv.AppendUint(dst, uint64(b[0]), 10)
	case pI2:
		return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(b))), 10)
	case pU2:
		return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint16(b)), 10)
	case pI4:
		return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(b))), 10)
	case pU4:
		return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b)), 10)
	case pI8:
		return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(b)), 10)
	case pU8:
		return strconv.AppendUint(dst, binary.LittleEndian.Uint64(b), 10)
	case pF4:
		return appendFloat32(dst, math.Float32frombits(binary.LittleEndian.Uint32(b)), dec.spell)
	case pF8:
		return appendFloat64(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)), dec.spell)
	}
	return dst
}

func appendFloat64(dst []byte, f float64, sp *ndarray.Spelling) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return sp.Append(dst, f)
	}
	return ndarray.AppendReal(dst, f)
}

// appendFloat32 writes f as nexus's C++ runtime does (shortest_float in
// internal/pool/runtime/cpp/nexus.hpp): the double nearest the shortest
// decimal that reads back as f, so 0.1f is 0.1, not 0.10000000149011612.
func appendFloat32(dst []byte, f float32, sp *ndarray.Spelling) []byte {
	d := float64(f)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return sp.Append(dst, d)
	}
	var buf [32]byte
	short, _ := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], d, 'g', -1, 32)), 64)
	return ndarray.AppendReal(dst, short)
}

// appendNumbers writes a list of n fixed-width numbers held in data: the
// loop of every large numeric result. f8, i4 and i8 go through ndarray, as
// nexus writes every other array.
func (dec *decoder) appendNumbers(dst []byte, p prim, data []byte, n int) []byte {
	if dt, kind, ok := arrayDType(p); ok && n <= ndarray.MaxElements {
		a := &ndarray.Array{DType: dt, Shape: []int{n}, Data: data}
		if out, err := ndarray.AppendJSONSpelled(dst, a, kind, dec.spell); err == nil {
			return out
		}
	}
	w := primWidth(p)
	dst = append(dst, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = dec.appendNumber(dst, p, data[i*w:])
	}
	return append(dst, ']')
}

// arrayDType is the ndarray dtype holding p's bytes as they are, if any.
func arrayDType(p prim) (ndarray.DType, ndarray.Number, bool) {
	switch p {
	case pF8:
		return ndarray.F8, ndarray.Real, true
	case pI4:
		return ndarray.I4, ndarray.Int, true
	case pI8:
		return ndarray.I8, ndarray.Int, true
	}
	return "", ndarray.Int, false
}

// bigInt writes a j value: {size u64, value}: size 0 is 0, size 1 an i64
// in the second word, larger a relptr to size little-endian u64 limbs of a
// two's-complement integer (v0.98 voidstar.rs:738-760, json.rs:744-760).
func (dec *decoder) bigInt(b []byte) error {
	size := binary.LittleEndian.Uint64(b)
	switch {
	case size == 0:
		dec.out = append(dec.out, '0')
		return nil
	case size == 1:
		dec.out = strconv.AppendInt(dec.out, int64(binary.LittleEndian.Uint64(b[8:])), 10)
		return nil
	case size > maxLimbs:
		return fmt.Errorf("integer of %d limbs (more than %d)", size, maxLimbs)
	}
	limbs, err := dec.sp.bytes(binary.LittleEndian.Uint64(b[8:]), size*8)
	if err != nil {
		return fmt.Errorf("integer of %d limbs: %w", size, err)
	}
	dec.out = appendLimbs(dec.out, limbs)
	return nil
}

// appendLimbs writes little-endian two's-complement u64 limbs as decimal.
func appendLimbs(dst, limbs []byte) []byte {
	n := len(limbs)
	be := make([]byte, n)
	for i := 0; i < n; i++ {
		be[i] = limbs[n-1-i]
	}
	v := new(big.Int).SetBytes(be)
	if n > 0 && limbs[n-1]&0x80 != 0 { // negative: v - 2^(8n)
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return v.Append(dst, 10)
}

// estimate is about the JSON size of the value of n in b, from a sample of
// each large list's items: the output buffer is sized once from it.
func estimate(sp space, n *node, b []byte, depth int) int {
	if depth > 6 {
		return 2 * n.width
	}
	switch n.kind {
	case manifest.Nil:
		return 4
	case manifest.Bool:
		return 5
	case manifest.Int, manifest.Float:
		if n.prim == pBig {
			return 20
		}
		return 12
	case manifest.Str:
		size, rel := arrayHeader(b)
		if _, err := sp.bytes(rel, size); err != nil {
			return 2
		}
		return int(size) + 2
	case manifest.List:
		size, rel := arrayHeader(b)
		w := uint64(n.elem.width)
		if size == 0 || w == 0 || size > math.MaxUint64/w {
			return 2
		}
		data, err := sp.bytes(rel, size*w)
		if err != nil {
			return 2
		}
		e := n.elem
		if dt, kind, ok := arrayDType(e.prim); ok && size <= ndarray.MaxElements {
			return ndarray.JSONSize(&ndarray.Array{DType: dt, Shape: []int{int(size)}, Data: data}, kind)
		}
		step := max(1, size/16)
		total, sampled := 0, 0
		for i := uint64(0); i < size; i += step {
			total += estimate(sp, e, data[i*w:(i+1)*w], depth+1) + 1
			sampled++
		}
		return int(min(uint64(total/sampled)*size, 1<<34)) * 21 / 20
	case manifest.Tuple, manifest.Record:
		t := 2
		for k, c := range n.items {
			t += estimate(sp, c, b[n.offs[k]:n.offs[k]+c.width], depth+1) + 1
			if n.kind == manifest.Record {
				t += len(n.jsonKeys[k])
			}
		}
		return t
	case manifest.Optional:
		if n.offs == nil {
			r := binary.LittleEndian.Uint64(b)
			if int64(r) < 0 {
				return 4
			}
			v, err := sp.bytes(r, uint64(n.elem.width))
			if err != nil {
				return 4
			}
			return estimate(sp, n.elem, v, depth+1)
		}
		if b[0] == 0 {
			return 4
		}
		return estimate(sp, n.elem, b[n.offs[0]:n.offs[0]+n.elem.width], depth+1)
	}
	return 16
}
