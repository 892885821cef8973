package eval

import (
	"math/big"
	"strconv"
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
	n   int64    // an integer that fits int64
	i   *big.Int // an integer that does not (n is then unused)
	f   float64
	s   string
	seq []Value
}

var unit = Value{}

// valueBytes is the size of a Value, charged per list element made.
const valueBytes = 72

func boolValue(b bool) Value       { return Value{k: vBool, b: b} }
func floatValue(f float64) Value   { return Value{k: vFloat, f: f} }
func strValue(s string) Value      { return Value{k: vStr, s: s} }
func seqValue(items []Value) Value { return Value{k: vSeq, seq: items} }
func smallInt(n int64) Value       { return Value{k: vInt, n: n} }

// intValue holds an integer, inline when it fits int64.
func intValue(i *big.Int) Value {
	if i.IsInt64() {
		return Value{k: vInt, n: i.Int64()}
	}
	return Value{k: vInt, i: i}
}

// appendInt writes an integer value in decimal.
func (v Value) appendInt(b []byte) []byte {
	if v.i != nil {
		return v.i.Append(b, 10)
	}
	return strconv.AppendInt(b, v.n, 10)
}

// fitsValue reports whether an integer value is one of the type t.
func fitsValue(t *Type, v Value) bool {
	if v.i == nil {
		switch {
		case t.bits == 0 || (t.bits == 64 && t.signed):
			return true
		case t.signed:
			return v.n >= -(1<<(t.bits-1)) && v.n < 1<<(t.bits-1)
		case t.bits == 64:
			return v.n >= 0
		default:
			return v.n >= 0 && v.n < 1<<t.bits
		}
	}
	return fitsInt(t, v.i)
}

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
