package jsontext

import (
	"bytes"
	"math/big"
	"slices"
	"strconv"
)

// Canonical writes the canonical form of the JSON text b (one value, space
// around it allowed) to emit, in pieces of a few KiB: two texts have the
// same canonical form exactly when they hold the same JSON value, however
// they order an object's members, space their tokens or escape their
// strings. It is nexus's own form, not RFC 8785's (JCS), which writes
// numbers as IEEE doubles and so makes 2^53+1 and 2^53 alike:
//
//   - no space between tokens; true, false and null as they are;
//   - a string as its decoded value (escapes resolved; invalid UTF-8 and
//     lone surrogates as U+FFFD, as encoding/json decodes them) written by
//     AppendString;
//   - a number as its exact decimal value: "0" or "-0", else an optional
//     '-', the significant digits (no leading or trailing zeros), 'e' and
//     the exponent in decimal, so that 100, 1e2, 100.0 and 1.00E+2 are all
//     "1e2" and no two different values are alike (-0 stays apart from 0,
//     which a double tells apart);
//   - an object's members sorted by the bytes of their decoded keys; of a
//     key given twice, only the last member (encoding/json keeps the last);
//   - an array's elements in their order.
//
// It checks the syntax as it goes, and returns a *SyntaxError for text
// that is not one JSON value. Cost: one pass over the text, plus one over
// each object's members to find them (objects nested d deep are read d
// times), and an allocation per object and per escaped key.
func Canonical(b []byte, emit func([]byte)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) {
		return errAt(i, "unexpected end of JSON input")
	}
	c := &canonicalizer{b: b, emit: emit, buf: make([]byte, 0, min(len(b)+64, canonicalChunk))}
	end, err := c.value(i, 1)
	if err != nil {
		return err
	}
	if rest := SkipSpace(b, end); rest != len(b) {
		return errAt(rest, "invalid character %q after top-level value", b[rest])
	}
	c.flush()
	return nil
}

// AppendCanonical appends the canonical form of b (see Canonical) to dst.
func AppendCanonical(dst, b []byte) ([]byte, error) {
	err := Canonical(b, func(p []byte) { dst = append(dst, p...) })
	return dst, err
}

// canonicalChunk is the size of the pieces Canonical emits.
const canonicalChunk = 4096

type canonicalizer struct {
	b    []byte
	emit func([]byte)
	buf  []byte
}

func (c *canonicalizer) flush() {
	if len(c.buf) > 0 {
		c.emit(c.buf)
		c.buf = c.buf[:0]
	}
}

func (c *canonicalizer) room() {
	if len(c.buf) >= canonicalChunk {
		c.flush()
	}
}

// value writes the value at b[i] and returns its end.
func (c *canonicalizer) value(i, depth int) (int, error) {
	b := c.b
	if depth > MaxDepth {
		return i, errAt(i, "exceeded max depth")
	}
	if i >= len(b) {
		return i, errAt(i, "unexpected end of JSON input")
	}
	c.room()
	switch b[i] {
	case '{':
		return c.object(i, depth)
	case '[':
		c.buf = append(c.buf, '[')
		first := true
		end, err := ArrayItems(b, i, func(start int) (int, error) {
			if !first {
				c.buf = append(c.buf, ',')
			}
			first = false
			return c.value(start, depth+1)
		}, depth)
		c.buf = append(c.buf, ']')
		return end, err
	case '"':
		end, escaped, err := String(b, i)
		if err != nil {
			return end, err
		}
		if escaped {
			c.buf = AppendString(c.buf, []byte(Unquote(b[i:end])))
		} else {
			c.buf = AppendString(c.buf, b[i+1:end-1])
		}
		return end, nil
	case 't':
		return c.literal(i, "true")
	case 'f':
		return c.literal(i, "false")
	case 'n':
		return c.literal(i, "null")
	}
	end, err := Number(b, i)
	if err != nil {
		return end, err
	}
	c.buf = appendCanonicalNumber(c.buf, b[i:end])
	return end, nil
}

func (c *canonicalizer) literal(i int, word string) (int, error) {
	end, err := literal(c.b, i, word)
	if err == nil {
		c.buf = append(c.buf, word...)
	}
	return end, err
}

// canonicalMember is one member of an object: its decoded key and where
// its value starts.
type canonicalMember struct {
	key        []byte
	start, end int
}

// object writes the object at b[i] with its members sorted by key.
func (c *canonicalizer) object(i, depth int) (int, error) {
	b := c.b
	var members []canonicalMember
	end, err := ObjectMembers(b, i, func(key []byte, escaped bool, start int) (int, error) {
		k := key[1 : len(key)-1]
		if escaped {
			k = []byte(Unquote(key))
		}
		end, err := Skip(b, start, depth)
		members = append(members, canonicalMember{k, start, end})
		return end, err
	}, depth)
	if err != nil {
		return end, err
	}
	slices.SortStableFunc(members, func(x, y canonicalMember) int { return bytes.Compare(x.key, y.key) })
	c.buf = append(c.buf, '{')
	first := true
	for k, m := range members {
		if k+1 < len(members) && bytes.Equal(m.key, members[k+1].key) {
			// The last of a key given twice wins; the others must still be JSON.
			if end, err := ValueIn(b, m.start, depth); err != nil || end != m.end {
				return end, memberError(end, err)
			}
			continue
		}
		if !first {
			c.buf = append(c.buf, ',')
		}
		first = false
		c.buf = AppendString(c.buf, m.key)
		c.buf = append(c.buf, ':')
		if end, err := c.value(m.start, depth+1); err != nil || end != m.end {
			return end, memberError(end, err)
		}
	}
	c.buf = append(c.buf, '}')
	return end, nil
}

// memberError is the fault of a member value that Skip took whole but
// that ends early when read (Skip reads only its structure).
func memberError(end int, err error) error {
	if err != nil {
		return err
	}
	return errAt(end, "expected ',' or '}' after object value")
}

// appendCanonicalNumber appends the exact decimal value of a number token
// (checked by Number): see Canonical.
func appendCanonicalNumber(dst, tok []byte) []byte {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	// The digits are those of the integer part then of the fraction; the
	// value is digits × 10^(exp - len(fraction)).
	intEnd := 0
	for intEnd < len(tok) && tok[intEnd]-'0' < 10 {
		intEnd++
	}
	fracStart, fracEnd := intEnd, intEnd
	if fracEnd < len(tok) && tok[fracEnd] == '.' {
		fracStart++
		fracEnd = fracStart
		for fracEnd < len(tok) && tok[fracEnd]-'0' < 10 {
			fracEnd++
		}
	}
	expText := []byte(nil)
	if fracEnd < len(tok) {
		expText = tok[fracEnd+1:] // after 'e' or 'E'
	}
	// digit k of the concatenated digits
	n := intEnd + (fracEnd - fracStart)
	digit := func(k int) byte {
		if k < intEnd {
			return tok[k]
		}
		return tok[fracStart+k-intEnd]
	}
	lo, hi := 0, n
	for lo < hi && digit(lo) == '0' {
		lo++
	}
	for hi > lo && digit(hi-1) == '0' {
		hi--
	}
	if neg {
		dst = append(dst, '-')
	}
	if lo == hi {
		return append(dst, '0')
	}
	for k := lo; k < hi; k++ {
		dst = append(dst, digit(k))
	}
	dst = append(dst, 'e')
	shift := int64(n-hi) - int64(fracEnd-fracStart) // trailing zeros dropped, fraction digits
	return appendExponent(dst, expText, shift)
}

// appendExponent appends the exponent text exp (an optional sign and
// digits, or nothing for 0) plus shift, in decimal.
func appendExponent(dst, exp []byte, shift int64) []byte {
	neg := false
	if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
		neg = exp[0] == '-'
		exp = exp[1:]
	}
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	if len(exp) <= 18 { // fits an int64 with room for shift
		var e int64
		for _, d := range exp {
			e = e*10 + int64(d-'0')
		}
		if neg {
			e = -e
		}
		return strconv.AppendInt(dst, e+shift, 10)
	}
	e, _ := new(big.Int).SetString(string(exp), 10)
	if neg {
		e.Neg(e)
	}
	return e.Add(e, big.NewInt(shift)).Append(dst, 10)
}
