package eval

import (
	"math"
	"math/big"
)

// vkind is the runtime shape of a Value.
type vkind uint8

const (
	vNull  vkind = iota // unit, or an absent optional
	vBool               // b
	vInt                // every integer type: j, i1..i8, u1..u8
	vFloat              // f4 (held rounded to float32), f8
	vStr                // s, and the paths of F, I, O
	vSeq                // list, tuple or record (fields in schema order)
)

var vkindNames = [...]string{"null", "boolean", "integer", "real", "string", "list"}

func (k vkind) String() string { return vkindNames[k] }

// Value is one evaluated value. Its type lives in the schema of the node
// that produced it, as in morloc: a Value carries only its shape. A present
// optional is its inner value. Values are never changed once made, so they
// are shared freely.
type Value struct {
	k   vkind
	b   bool
	f   float64
	i   *big.Int
	s   string
	seq []Value
}

var unit = Value{}

// valueBytes is the size of a Value, charged per list element made.
const valueBytes = 64

func boolValue(b bool) Value         { return Value{k: vBool, b: b} }
func intValue(i *big.Int) Value      { return Value{k: vInt, i: i} }
func int64Value(i int64) Value       { return Value{k: vInt, i: big.NewInt(i)} }
func floatValue(f float64) Value     { return Value{k: vFloat, f: f} }
func strValue(s string) Value        { return Value{k: vStr, s: s} }
func seqValue(items []Value) Value   { return Value{k: vSeq, seq: items} }
func (v Value) isNull() bool         { return v.k == vNull }
func (v Value) describeKind() string { return v.k.String() }

// intRange is the range of a sized integer type.
func intRange(t *Type) (lo, hi *big.Int) {
	if t.bits == 0 {
		return nil, nil
	}
	one := big.NewInt(1)
	if t.signed {
		hi = new(big.Int).Lsh(one, uint(t.bits-1))
		lo = new(big.Int).Neg(hi)
		hi.Sub(hi, one)
		return lo, hi
	}
	hi = new(big.Int).Lsh(one, uint(t.bits))
	return new(big.Int), hi.Sub(hi, one)
}

// fitsInt reports whether n is a value of the integer type t.
func fitsInt(t *Type, n *big.Int) bool {
	lo, hi := intRange(t)
	return lo == nil || (n.Cmp(lo) >= 0 && n.Cmp(hi) <= 0)
}

// roundFloat gives f as a value of the real type t: an f4 is held rounded
// to float32.
func roundFloat(t *Type, f float64) float64 {
	if t.bits == 32 {
		return float64(float32(f))
	}
	return f
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
