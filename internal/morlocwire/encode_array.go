package morlocwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/msgpack"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// array writes the ndarray a (row-major numbers of its shape) as the value
// of n: len(a.Shape) nested lists of numbers, or one number for shape [].
func (e *encoder) array(n *node, a *ndarray.Array) error {
	t, count, err := arrayPlan(n, a)
	if err != nil {
		return err
	}
	size := a.DType.Size()
	// The fast path: [Real] from f8.
	if len(a.Shape) == 1 && a.DType == ndarray.F8 && t.prim == pF8 {
		e.out = slices.Grow(e.out, 5+9*count)
		e.out = msgpack.AppendArrayHeader(e.out, count)
		o := len(e.out)
		e.out = e.out[:o+9*count]
		for k := 0; k < count; k++ {
			e.out[o] = 0xcb
			binary.BigEndian.PutUint64(e.out[o+1:], binary.LittleEndian.Uint64(a.Data[8*k:]))
			o += 9
		}
		return nil
	}
	// [Int] from i4 or i8: range-checked in one loop.
	if len(a.Shape) == 1 && t.kind == manifest.Int && (a.DType == ndarray.I4 || a.DType == ndarray.I8) {
		lo, hi, sized := intRange(t.prim)
		e.out = slices.Grow(e.out, 5+9*count)
		e.out = msgpack.AppendArrayHeader(e.out, count)
		for k := 0; k < count; k++ {
			var v int64
			if a.DType == ndarray.I4 {
				v = int64(int32(binary.LittleEndian.Uint32(a.Data[4*k:])))
			} else {
				v = int64(binary.LittleEndian.Uint64(a.Data[8*k:]))
			}
			if sized && (v < lo || v > hi) {
				return under(rangeError(t, strconv.FormatInt(v, 10)), seg{idx: k})
			}
			e.out = msgpack.AppendInt(e.out, v)
		}
		return nil
	}
	e.out = slices.Grow(e.out, 5*len(a.Shape)+count*(1+min(size, primWidth(t.prim))))
	k := 0
	var walk func(level int) error
	walk = func(level int) error {
		if level == len(a.Shape) {
			err := e.element(t, a, k)
			k++
			return err
		}
		e.out = msgpack.AppendArrayHeader(e.out, a.Shape[level])
		for i := 0; i < a.Shape[level]; i++ {
			if err := walk(level + 1); err != nil {
				return under(err, seg{idx: i})
			}
		}
		return nil
	}
	return walk(0)
}

// arrayPlan checks that the ndarray a can be the value of n (len(a.Shape)
// nested lists of numbers, or one number for shape []) and returns the
// number type at its bottom and its count of elements.
func arrayPlan(n *node, a *ndarray.Array) (*node, int, error) {
	size := a.DType.Size()
	if size == 0 {
		return nil, 0, refuse(fmt.Sprintf("array of unknown dtype %q", a.DType))
	}
	count := 1
	for _, d := range a.Shape {
		if d < 0 || d > 0 && count > ndarray.MaxElements/d {
			return nil, 0, refuse(fmt.Sprintf("array shape %v", a.Shape))
		}
		count *= d
	}
	if len(a.Data) != count*size {
		return nil, 0, refuse(fmt.Sprintf("array of shape %v and dtype %s has %d bytes, not %d", a.Shape, a.DType, len(a.Data), count*size))
	}
	// The type at each level: lists down to a number.
	levels := make([]*node, 0, len(a.Shape))
	t := n
	for range a.Shape {
		for t.kind == manifest.Optional || t.kind == manifest.BackRef {
			t = t.elem
		}
		if t.kind != manifest.List {
			return nil, 0, refuse(fmt.Sprintf("an array of rank %d where %s belongs", len(a.Shape), expected(n)))
		}
		levels = append(levels, t)
		t = t.elem
	}
	for t.kind == manifest.Optional {
		t = t.elem
	}
	if t.kind != manifest.Int && t.kind != manifest.Float {
		return nil, 0, refuse(fmt.Sprintf("an array of numbers where %s belongs", expected(t)))
	}
	for k, l := range levels {
		if l.fixedLen > 0 && a.Shape[k] != l.fixedLen && (k == 0 || a.Shape[k-1] > 0) {
			err := refuse(fmt.Sprintf("a list of %d items where its type says exactly %d", a.Shape[k], l.fixedLen))
			for range k {
				err = under(err, seg{idx: 0})
			}
			return nil, 0, err
		}
	}
	return t, count, nil
}

// element writes element k of a for the number t.
func (e *encoder) element(t *node, a *ndarray.Array, k int) error {
	switch a.DType {
	case ndarray.F8:
		f := math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*k:]))
		if t.kind == manifest.Float {
			return e.float(t, f)
		}
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return refuse(string(ndarray.AppendReal(nil, f)) + " is not an integer")
		}
		text := string(ndarray.AppendWhole(nil, f))
		return e.integer(t, []byte(text))
	case ndarray.I4, ndarray.I8:
		var v int64
		if a.DType == ndarray.I4 {
			v = int64(int32(binary.LittleEndian.Uint32(a.Data[4*k:])))
		} else {
			v = int64(binary.LittleEndian.Uint64(a.Data[8*k:]))
		}
		if t.kind == manifest.Float {
			return e.float(t, float64(v))
		}
		return e.int64(t, v)
	}
	return refuse(fmt.Sprintf("array of unknown dtype %q", a.DType))
}
