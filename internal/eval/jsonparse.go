package eval

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jkind is the kind of a parsed JSON value.
type jkind uint8

const (
	jNull jkind = iota
	jTrue
	jFalse
	jNum
	jStr
	jArr
	jObj
)

var jkindNames = [...]string{"null", "true", "false", "number", "string", "array", "object"}

func (k jkind) String() string { return jkindNames[k] }

// jnode is a parsed JSON value that keeps object members in their order:
// expression trees, arguments, @read text and loaded files are all parsed
// into it before they are checked against a schema.
type jnode struct {
	k     jkind
	s     string  // a string's value, a number's text
	items []jnode // array items, object member values
	keys  []string
}

// get returns an object's member (the last one, if a key repeats).
func (n *jnode) get(key string) (*jnode, bool) {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return &n.items[i], true
		}
	}
	return nil, false
}

// maxJSONDepth bounds the nesting of any JSON the evaluator parses.
const maxJSONDepth = 10000

// parseJSON parses one strict JSON text (RFC 8259, UTF-8), with nothing
// but whitespace after it.
func parseJSON(b []byte) (jnode, error) {
	p := &jparser{b: b}
	p.space()
	v, err := p.value()
	if err != nil {
		return jnode{}, err
	}
	p.space()
	if p.i != len(p.b) {
		return jnode{}, p.fail("unexpected %s after the JSON value", p.show())
	}
	return v, nil
}

type jparser struct {
	b     []byte
	i     int
	depth int
	// Scratch stacks: an array's items and an object's members gather
	// here and are copied out once, at their exact size.
	items []jnode
	keys  []string
}

func (p *jparser) fail(format string, a ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *jparser) show() string {
	if p.i >= len(p.b) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.b[p.i:])
	return strconv.QuoteRune(r)
}

func (p *jparser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) lit(word string, k jkind) (jnode, error) {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return jnode{k: k}, nil
	}
	return jnode{}, p.fail("unexpected %s", p.show())
}

func (p *jparser) value() (jnode, error) {
	if p.i >= len(p.b) {
		return jnode{}, p.fail("unexpected end of input")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return jnode{k: jStr, s: s}, err
	case c == 't':
		return p.lit("true", jTrue)
	case c == 'f':
		return p.lit("false", jFalse)
	case c == 'n':
		return p.lit("null", jNull)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return jnode{}, p.fail("unexpected %s", p.show())
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nested deeper than %d levels", maxJSONDepth)
	}
	return nil
}

func (p *jparser) array() (jnode, error) {
	if err := p.enter(); err != nil {
		return jnode{}, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	n := jnode{k: jArr}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return n, nil
	}
	base := len(p.items)
	defer func() { p.items = p.items[:base] }()
	for {
		p.space()
		v, err := p.value()
		if err != nil {
			return jnode{}, err
		}
		p.items = append(p.items, v)
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			n.items = append([]jnode(nil), p.items[base:]...)
			return n, nil
		}
		return jnode{}, p.fail("expected ',' or ']' in an array, got %s", p.show())
	}
}

func (p *jparser) object() (jnode, error) {
	if err := p.enter(); err != nil {
		return jnode{}, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	n := jnode{k: jObj}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return n, nil
	}
	base, kbase := len(p.items), len(p.keys)
	defer func() { p.items, p.keys = p.items[:base], p.keys[:kbase] }()
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return jnode{}, p.fail("expected a string key in an object, got %s", p.show())
		}
		k, err := p.str()
		if err != nil {
			return jnode{}, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return jnode{}, p.fail("expected ':' after an object key, got %s", p.show())
		}
		p.i++
		p.space()
		v, err := p.value()
		if err != nil {
			return jnode{}, err
		}
		p.keys = append(p.keys, k)
		p.items = append(p.items, v)
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			n.keys = append([]string(nil), p.keys[kbase:]...)
			n.items = append([]jnode(nil), p.items[base:]...)
			return n, nil
		}
		return jnode{}, p.fail("expected ',' or '}' in an object, got %s", p.show())
	}
}

func (p *jparser) number() (jnode, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return jnode{}, p.fail("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return jnode{}, p.fail("invalid number: expected a digit after '.'")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return jnode{}, p.fail("invalid number: expected a digit in the exponent")
		}
	}
	return jnode{k: jNum, s: string(p.b[start:p.i])}, nil
}

func (p *jparser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			if !utf8.Valid(s) {
				return "", p.fail("invalid UTF-8 in a string")
			}
			p.i++
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for {
		if p.i >= len(p.b) {
			return "", p.fail("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", p.fail("invalid UTF-8 in a string")
			}
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character %#02x in a string", c)
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return "", p.fail("unterminated string")
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						if r2, err = p.hex4(); err != nil {
							return "", err
						}
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
						} else {
							p.i = save
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.i--
				return "", p.fail("invalid escape '\\%c' in a string", e)
			}
		default:
			buf = append(buf, c)
			p.i++
		}
	}
}

func (p *jparser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, p.fail("truncated \\u escape")
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, nil
}
