package eval

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// maxIntDigits bounds the decimal digits of one integer, in a literal or
// in JSON: reading a decimal integer costs time quadratic in its length.
const maxIntDigits = 100000

// parseDecimal reads a strict decimal integer (optional '-', digits only).
func parseDecimal(s string) (*big.Int, string) {
	body := strings.TrimPrefix(s, "-")
	if body == "" {
		return nil, "integer literal has no digits"
	}
	for i := 0; i < len(body); i++ {
		if body[i] < '0' || body[i] > '9' {
			return nil, fmt.Sprintf("invalid integer literal: %s (expected decimal digits)", strconv.Quote(truncate(s)))
		}
	}
	if len(body) > maxIntDigits {
		return nil, fmt.Sprintf("integer literal has %d digits; nexus reads at most %d", len(body), maxIntDigits)
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Sprintf("invalid integer literal: %s", strconv.Quote(truncate(s)))
	}
	return n, ""
}

// decimalValue reads a strict decimal integer as a Value, without a
// big.Int when it is short enough to fit int64.
func decimalValue(s string) (Value, string) {
	if len(s) > 0 && len(s) <= 18 && s != "-" {
		ok := true
		for i := 0; i < len(s); i++ {
			if c := s[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
				ok = false
				break
			}
		}
		if ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return smallInt(n), ""
			}
		}
	}
	i, msg := parseDecimal(s)
	if msg != "" {
		return unit, msg
	}
	return intValue(i), ""
}

// intName is morloc's name of an integer type in messages.
func intName(t *Type) string {
	if t.bits == 0 {
		return "Int"
	}
	if t.signed {
		return fmt.Sprintf("I%d", t.bits)
	}
	return fmt.Sprintf("U%d", t.bits)
}

// decoder reads parsed JSON as a value of a type, with the rules of
// morloc's JSON reader (json.rs), which serves CLI arguments, @read and
// @load alike: records as objects (every field present; other keys
// ignored) or as arrays in field order, `j` also from a string of digits,
// reals also from the strings "nan", "inf" and "-inf", fixed-length lists
// checked.
type decoder struct {
	// objectMaps also reads a JSON object as a list of (Str, V) pairs, in
	// member order: nexus sends a string-keyed Map to a pool as an object.
	objectMaps bool
}

type decodeError struct {
	path []string
	msg  string
}

func (e *decodeError) Error() string {
	if len(e.path) == 0 {
		return e.msg
	}
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	return e.msg + " (at " + b.String() + ")"
}

func derr(format string, a ...any) *decodeError {
	return &decodeError{msg: fmt.Sprintf(format, a...)}
}

func (e *decodeError) at(seg string) *decodeError {
	e.path = append(e.path, seg)
	return e
}

func jshow(n *jnode) string {
	switch n.k {
	case jStr:
		return strconv.Quote(truncate(n.s))
	case jNum:
		return truncate(n.s)
	case jArr:
		return "an array"
	case jObj:
		return "an object"
	}
	return n.k.String()
}

func (d *decoder) value(n *jnode, t *Type) (Value, *decodeError) {
	t = t.resolve()
	switch t.kind {
	case kAny:
		return d.untyped(n)
	case kNil:
		if n.k != jNull {
			return unit, derr("expected null, got %s", jshow(n))
		}
		return unit, nil
	case kBool:
		switch n.k {
		case jTrue:
			return boolValue(true), nil
		case jFalse:
			return boolValue(false), nil
		}
		return unit, derr("expected bool, got %s", jshow(n))
	case kInt:
		return d.integer(n, t)
	case kFloat:
		text := n.s
		if n.k == jStr {
			switch n.s {
			case "nan", "inf", "-inf", "NaN", "Infinity", "-Infinity": // morloc's, and the pool wire's
			default:
				return unit, derr("expected F%d, got %s", t.bits, jshow(n))
			}
		} else if n.k != jNum {
			return unit, derr("expected F%d, got %s", t.bits, jshow(n))
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return unit, derr("expected F%d, got %s", t.bits, jshow(n))
		}
		return floatValue(roundFloat(t, f)), nil
	case kStr, kIFile, kOStream, kIStream:
		if n.k != jStr {
			return unit, derr("expected string, got %s", jshow(n))
		}
		return strValue(n.s), nil
	case kList:
		if n.k == jObj && d.objectMaps {
			if pair := t.elem.resolve(); pair.kind == kTuple && len(pair.items) == 2 && pair.items[0].resolve().kind == kStr {
				out := make([]Value, len(n.items))
				for i := range n.items {
					v, err := d.value(&n.items[i], pair.items[1])
					if err != nil {
						return unit, err.at("." + n.keys[i])
					}
					out[i] = seqValue([]Value{strValue(n.keys[i]), v})
				}
				return seqValue(out), nil
			}
		}
		if n.k != jArr {
			return unit, derr("expected JSON array, got %s", jshow(n))
		}
		if t.length > 0 && len(n.items) != t.length {
			return unit, derr("Array length mismatch: expected %d, got %d", t.length, len(n.items))
		}
		return d.items(n, func(int) *Type { return t.elem })
	case kTuple:
		if n.k != jArr {
			return unit, derr("expected JSON array, got %s", jshow(n))
		}
		if len(n.items) != len(t.items) {
			return unit, derr("expected %d fields, got %d", len(t.items), len(n.items))
		}
		return d.items(n, func(i int) *Type { return t.items[i] })
	case kRecord:
		switch n.k {
		case jObj:
			out := make([]Value, len(t.keys))
			for i, k := range t.keys {
				m, ok := n.get(k)
				if !ok {
					return unit, derr("missing required field '%s' in record", k)
				}
				v, err := d.value(m, t.items[i])
				if err != nil {
					return unit, err.at("." + k)
				}
				out[i] = v
			}
			return seqValue(out), nil
		case jArr:
			if len(n.items) != len(t.items) {
				return unit, derr("record array form must have exactly %d fields (one per schema field, in declaration order), got %d", len(t.items), len(n.items))
			}
			return d.items(n, func(i int) *Type { return t.items[i] })
		}
		return unit, derr("record source must be a JSON object {...} or array [...], got %s", jshow(n))
	case kOpt:
		if n.k == jNull {
			return unit, nil
		}
		return d.value(n, t.elem)
	case kTable:
		return unit, derr("Cannot load a Table from generic JSON")
	}
	return unit, derr("cannot read a value of %s", t.describe())
}

func (d *decoder) items(n *jnode, elem func(int) *Type) (Value, *decodeError) {
	out := make([]Value, len(n.items))
	for i := range n.items {
		v, err := d.value(&n.items[i], elem(i))
		if err != nil {
			return unit, err.at("[" + strconv.Itoa(i) + "]")
		}
		out[i] = v
	}
	return seqValue(out), nil
}

func (d *decoder) integer(n *jnode, t *Type) (Value, *decodeError) {
	text := n.s
	switch {
	case n.k == jNum:
	case n.k == jStr && t.bits == 0:
		text = strings.TrimSpace(n.s) // morloc reads a `j` from a string of digits too
	default:
		return unit, derr("expected integer for %s, got %s", intName(t), jshow(n))
	}
	if strings.ContainsAny(text, ".eE") {
		return unit, derr("expected integer for %s, got %s", intName(t), jshow(n))
	}
	v, msg := decimalValue(text)
	if msg != "" {
		return unit, derr("%s", msg)
	}
	if !fitsValue(t, v) {
		lo, hi := intRange(t)
		return unit, derr("value %s out of range for %s (range %s to %s)", truncate(text), intName(t), lo, hi)
	}
	return v, nil
}

// untyped reads JSON of unknown type by its shape: a number without a
// fraction or exponent is an integer, other numbers are reals.
func (d *decoder) untyped(n *jnode) (Value, *decodeError) {
	switch n.k {
	case jNull:
		return unit, nil
	case jTrue:
		return boolValue(true), nil
	case jFalse:
		return boolValue(false), nil
	case jStr:
		return strValue(n.s), nil
	case jNum:
		if !strings.ContainsAny(n.s, ".eE") {
			v, msg := decimalValue(n.s)
			if msg != "" {
				return unit, derr("%s", msg)
			}
			return v, nil
		}
		f, _ := strconv.ParseFloat(n.s, 64)
		return floatValue(f), nil
	case jArr:
		out := make([]Value, len(n.items))
		for i := range n.items {
			v, err := d.untyped(&n.items[i])
			if err != nil {
				return unit, err.at("[" + strconv.Itoa(i) + "]")
			}
			out[i] = v
		}
		return seqValue(out), nil
	}
	return unit, derr("cannot read an object as a value of unknown type")
}
