// Package jsontext scans JSON text in place, without decoding it into Go
// values: it finds where a value ends, checking its syntax as
// encoding/json does, walks the members of objects and the elements of
// arrays, and reads strings and numbers; it also writes a value's
// canonical form (Canonical), to compare values whatever their spelling.
// nexus's hot paths (arguments on their way to a pool, results on their
// way to a client, pool messages) use it to pass large values through in
// one pass with no allocation per element. It imports nothing else from
// nexus.
package jsontext

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest nesting Value accepts, as encoding/json's.
const MaxDepth = 10000

// SyntaxError is JSON text that is not valid: what and where.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// depthError is the error for a value nested deeper than MaxDepth; it
// says the bound, as encoding/json's "exceeded max depth" does not.
func depthError(i int) error {
	return errAt(i, "exceeded max depth: nested deeper than %d levels", MaxDepth)
}

func errAt(i int, format string, args ...any) error {
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf(format, args...)}
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Value checks the value starting at b[i] (no leading space) and returns
// the index just after it.
func Value(b []byte, i int) (int, error) { return value(b, i, 0) }

// ValueIn is Value for a value nested inside depth enclosing arrays and
// objects, so that MaxDepth counts from the top of the document.
func ValueIn(b []byte, i, depth int) (int, error) { return value(b, i, depth) }

func value(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errAt(i, "unexpected end of JSON input")
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := String(b, i)
		return end, err
	case c == '{':
		if depth >= MaxDepth {
			return i, depthError(i)
		}
		return Object(b, i, func(key []byte, escaped bool, start, end int) error { return nil }, depth+1)
	case c == '[':
		if depth >= MaxDepth {
			return i, depthError(i)
		}
		return array(b, i, nil, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return Number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	default:
		return i, errAt(i, "invalid character %s looking for beginning of value", quoteChar(b, i))
	}
}

// quoteChar quotes the character at b[i] for an error message: 'é', not
// the 'Ã' that quoting its first byte would show; a byte that begins no
// UTF-8 character as '\xff'.
func quoteChar(b []byte, i int) string {
	r, size := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && size == 1 {
		return fmt.Sprintf(`'\x%02x'`, b[i])
	}
	return strconv.QuoteRune(r)
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, errAt(i, "invalid literal, expected %s", word)
	}
	return i + len(word), nil
}

// Number checks the number starting at b[i] (RFC 8259's grammar) and
// returns the index just after it.
func Number(b []byte, i int) (int, error) {
	end, _, err := NumberKind(b, i)
	return end, err
}

// NumberKind is Number, also saying whether the number is a plain integer
// (no fraction, no exponent).
func NumberKind(b []byte, i int) (end int, integer bool, err error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i]-'0' < 10; i++ {
		}
	default:
		return start, false, errAt(i, "invalid number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return start, false, errAt(i, "invalid number: no digit after the decimal point")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return start, false, errAt(i, "invalid number: no digit in the exponent")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	return i, integer, nil
}

// plain marks the bytes a string holds as they are: not '"', not '\\',
// not a control character. Bytes from 0x80 up count as plain here; UTF-8
// validity is checked separately.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String checks the string starting at b[i] (a '"') and returns the index
// just after its closing quote, and whether it needs decoding: it holds an
// escape or invalid UTF-8 (which decoding replaces with U+FFFD).
func String(b []byte, i int) (end int, needsDecoding bool, err error) {
	start := i
	i++
	ascii := true
	for {
		for i < len(b) && plain[b[i]] {
			if b[i] >= utf8.RuneSelf {
				ascii = false
			}
			i++
		}
		if i >= len(b) {
			return start, false, errAt(start, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			if !ascii && !utf8.Valid(b[start+1:i]) {
				needsDecoding = true
			}
			return i + 1, needsDecoding, nil
		case c == '\\':
			needsDecoding = true
			if i+1 >= len(b) {
				return start, false, errAt(i, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return start, false, errAt(i, "invalid \\u escape")
				}
				for _, h := range b[i+2 : i+6] {
					if unhex(h) < 0 {
						return start, false, errAt(i, "invalid \\u escape")
					}
				}
				i += 6
			default:
				return start, false, errAt(i, "invalid escape character %q in string", b[i+1])
			}
		default:
			return start, false, errAt(i, "invalid control character in string")
		}
	}
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Unquote decodes a string token checked by String (quotes included), as
// encoding/json does: escapes resolved, invalid UTF-8 and lone surrogates
// replaced with U+FFFD.
func Unquote(tok []byte) string {
	s := tok[1 : len(tok)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := rune(hex4(s[i+2:]))
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := utf16.DecodeRune(r, rune(hex4(s[i+2:]))); r2 != utf8.RuneError {
							out = utf8.AppendRune(out, r2)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

func hex4(h []byte) int {
	return unhex(h[0])<<12 | unhex(h[1])<<8 | unhex(h[2])<<4 | unhex(h[3])
}

// Object checks the object starting at b[i] (a '{') and calls member for
// each member in order with its raw key token (quotes included), whether
// the key needs decoding, and the span of its value. An error from member
// stops the walk and is returned. depth is the object's nesting depth (1
// for a top-level value).
func Object(b []byte, i int, member func(key []byte, keyEscaped bool, start, end int) error, depth int) (int, error) {
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, errAt(i, "expected a string key in object")
		}
		kend, kesc, err := String(b, i)
		if err != nil {
			return i, err
		}
		key := b[i:kend]
		i = SkipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return i, errAt(i, "expected ':' after object key")
		}
		start := SkipSpace(b, i+1)
		end, err := value(b, start, depth)
		if err != nil {
			return end, err
		}
		if member != nil {
			if err := member(key, kesc, start, end); err != nil {
				return end, err
			}
		}
		i = SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return i, errAt(i, "expected ',' or '}' after object value")
	}
}

// Array checks the array starting at b[i] (a '[') and calls elem for the
// span of each element in order. An error from elem stops the walk.
func Array(b []byte, i int, elem func(start, end int) error) (int, error) {
	return array(b, i, elem, 1)
}

func array(b []byte, i int, elem func(start, end int) error, depth int) (int, error) {
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		start := i
		var end int
		var err error
		if i < len(b) && (b[i]-'0' < 10 || b[i] == '-') {
			end, err = Number(b, i) // lists of numbers are the large ones
		} else {
			end, err = value(b, start, depth)
		}
		if err != nil {
			return end, err
		}
		if elem != nil {
			if err := elem(start, end); err != nil {
				return end, err
			}
		}
		i = end
		if i < len(b) && b[i] > ' ' { // no space: the usual compact JSON
		} else {
			i = SkipSpace(b, i)
		}
		if i < len(b) && b[i] == ',' {
			i++
			if i < len(b) && b[i] <= ' ' {
				i = SkipSpace(b, i)
			}
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		return i, errAt(i, "expected ',' or ']' after array element")
	}
}

// ArrayItems walks the array at b[i] (a '[') like Array, but lets item read
// each element itself: it gets the element's start and returns its end, so
// an element is scanned once, by the reader that needs it. depth is the
// array's nesting depth.
func ArrayItems(b []byte, i int, item func(start int) (int, error), depth int) (int, error) {
	if depth > MaxDepth {
		return i, depthError(i)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return i, errAt(i, "unexpected end of JSON input")
		}
		end, err := item(i)
		if err != nil {
			return end, err
		}
		i = end
		if i < len(b) && b[i] <= ' ' {
			i = SkipSpace(b, i)
		}
		if i < len(b) && b[i] == ',' {
			i++
			if i < len(b) && b[i] <= ' ' {
				i = SkipSpace(b, i)
			}
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		return i, errAt(i, "expected ',' or ']' after array element")
	}
}

// Whole checks that b is exactly one JSON value (with optional space
// around it) and returns its span.
func Whole(b []byte) (start, end int, err error) {
	start = SkipSpace(b, 0)
	end, err = Value(b, start)
	if err != nil {
		return start, end, err
	}
	if rest := SkipSpace(b, end); rest != len(b) {
		return start, end, errAt(rest, "invalid character %s after top-level value", quoteChar(b, rest))
	}
	return start, end, nil
}

// IsIntLiteral reports whether a number token is a plain integer: no
// fraction, no exponent.
func IsIntLiteral(tok []byte) bool {
	for _, c := range tok {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// ParseInt64 reads a plain integer token; ok is false when it is not one
// or does not fit in 64 bits.
func ParseInt64(tok []byte) (int64, bool) {
	if len(tok) == 0 || len(tok) > 20 {
		return 0, false
	}
	neg := tok[0] == '-'
	digits := tok
	if neg {
		digits = tok[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if len(digits) == 19 && digits[0] > '9' {
		return 0, false
	}
	// 19 digits fit in uint64 without overflow (max 9999999999999999999 < 2^64).
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// ParseFloat reads a number token as a float64; ok is false when it is
// beyond the range of a double.
func ParseFloat(tok []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(tok), 64)
	return f, err == nil
}

// AppendCompact appends the value at b[i] (no leading space) without its
// insignificant whitespace, checking it as Value does, and returns the
// index just after it.
func AppendCompact(dst, b []byte, i int) ([]byte, int, error) {
	end, err := Value(b, i)
	if err != nil {
		return dst, end, err
	}
	span := b[i:end]
	// Pools and nexus write compact JSON: usually a plain copy.
	if !hasSpace(span) {
		return append(dst, span...), end, nil
	}
	for k := 0; k < len(span); {
		switch c := span[k]; c {
		case ' ', '\t', '\n', '\r':
			k++
		case '"':
			send, _, _ := String(span, k)
			dst = append(dst, span[k:send]...)
			k = send
		default:
			dst = append(dst, c)
			k++
		}
	}
	return dst, end, nil
}

func hasSpace(b []byte) bool {
	for _, c := range b {
		if c <= ' ' {
			return true // ' ', '\t', '\n', '\r' (other control bytes cannot be in valid JSON)
		}
	}
	return false
}

// ObjectMembers walks the object at b[i] (a '{') like Object, but lets
// member read each value itself: it gets the start of the value and
// returns its end. depth is the object's nesting depth.
// Its loop repeats Object's on purpose: factored into key and separator
// helpers (which Go does not inline) it measured some 10 % slower on
// record results (BenchmarkResultCheck/RecordRows).
func ObjectMembers(b []byte, i int, member func(key []byte, keyEscaped bool, start int) (int, error), depth int) (int, error) {
	if depth > MaxDepth {
		return i, depthError(i)
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, errAt(i, "expected a string key in object")
		}
		kend, kesc, err := String(b, i)
		if err != nil {
			return i, err
		}
		key := b[i:kend]
		i = SkipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return i, errAt(i, "expected ':' after object key")
		}
		end, err := member(key, kesc, SkipSpace(b, i+1))
		if err != nil {
			return end, err
		}
		i = SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return i, errAt(i, "expected ',' or '}' after object value")
	}
}

// AppendString appends s as a JSON string exactly as encoding/json's
// Encoder with SetEscapeHTML(false) writes it: '"', '\\' and control
// characters escaped (\b \f \n \r \t short), invalid UTF-8 as \ufffd,
// U+2028 and U+2029 as \u2028 and \u2029, everything else as it is.
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendQuoted is AppendString for a Go string. It reads s in place
// rather than copying it into a []byte: AppendStringBody only reads.
func AppendQuoted(dst []byte, s string) []byte {
	return AppendString(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Plain reports whether s goes into a JSON string as it is: ASCII from
// 0x20 up, no '"' or '\\' (AppendStringBody would copy it unchanged).
func Plain(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plainASCII8(binary.LittleEndian.Uint64(s[i:])) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !stringSafe[s[i]] {
			return false
		}
	}
	return true
}

// AppendStringBody is AppendString without the quotes: s escaped. A long
// text may be escaped in pieces, split where a rune begins.
func AppendStringBody(dst, s []byte) []byte {
	start := 0
	block := 0 // where the next test of eight bytes at once may be made
	for i := 0; i < len(s); {
		// Eight plain ASCII bytes at a time: the text of a large value is
		// mostly digits and punctuation that pass as they are. Past a block
		// that is not all plain, its bytes go one at a time before the next
		// block is tried, so that escapes and non-ASCII text pay one block
		// test per eight bytes, not one per byte.
		if i >= block {
			if i+8 <= len(s) && plainASCII8(binary.LittleEndian.Uint64(s[i:])) {
				i += 8
				continue
			}
			block = i + 8
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if stringSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"

// plainASCII8 reports whether eight bytes are all ASCII from 0x20 up and
// none is '"' or '\\' (the classic "has a zero byte" bit tricks).
// Written out, without helper closures, so that it inlines.
func plainASCII8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := w^(ones*'"'), w^(ones*'\\')
	bad := w&highs | (w-ones*0x20)&^w&highs | (q-ones)&^q&highs | (b-ones)&^b&highs
	return bad == 0
}

// stringSafe marks the ASCII bytes a JSON string holds as they are.
var stringSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// DecodeString reads a whole JSON string token (quotes included), as
// encoding/json would decode it; ok is false when tok is not one.
func DecodeString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	end, escaped, err := String(tok, 0)
	if err != nil || end != len(tok) {
		return "", false
	}
	if escaped {
		return Unquote(tok), true
	}
	return string(tok[1 : len(tok)-1]), true
}

// Skip finds the end of the value at b[i] (no leading space). An array or
// object is read by its structure alone: strings are read to their closing
// quote, brackets and braces must match, and nothing else is looked at. It
// is several times cheaper than Value, for a value that will be checked
// later (or found invalid then). A string, number or literal is read as
// Value reads it, so that the end is the value's own: "00" is a 0 and a
// stray 0 after it, as a later check from its start would see it. depth
// is the nesting of its enclosing values, as ValueIn's.
func Skip(b []byte, i, depth int) (int, error) {
	if i >= len(b) || b[i] != '[' && b[i] != '{' {
		return value(b, i, depth)
	}
	var stack []byte // the closing brackets expected, innermost last
	for j := i; j < len(b); j++ {
		// Eight bytes at a time past what matters not: the digits and
		// commas of a large list.
		for j+8 <= len(b) && !structural8(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; c {
		case '"':
			end, _, err := String(b, j)
			if err != nil {
				return end, err
			}
			j = end - 1
		case '[', '{':
			if depth+len(stack) >= MaxDepth {
				return j, depthError(j)
			}
			stack = append(stack, c+2) // ']' is '['+2, '}' is '{'+2
		case ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return j, errAt(j, "invalid character %q: brackets do not match", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, nil
			}
		}
	}
	return len(b), errAt(len(b), "unexpected end of JSON input")
}

// structural8 reports whether eight bytes hold a '"', '[', ']', '{' or '}'.
func structural8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return hasZero(w^(ones*'"'))|hasZero(w^(ones*'['))|hasZero(w^(ones*']'))|hasZero(w^(ones*'{'))|hasZero(w^(ones*'}')) != 0
}
