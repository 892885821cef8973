package eval

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// form is one of the two ways a value is written as JSON.
type form uint8

const (
	// clientForm is how nexus sends results to clients, whoever computed
	// them: integers exact, a real as the shortest text that reads back as
	// the same float64 (float32 for f4), as encoding/json writes it; NaN
	// and infinities as the strings "NaN", "Infinity", "-Infinity", as a
	// pool sends them (docs/internals.md, "Values"): the
	// result writer then spells them for MCP or the CLI.
	clientForm form = iota
	// morlocForm is morloc's own JSON text (docs/spec.md §7.2), which @show
	// returns and @savej writes: reals as C's %.15g (%.7g for f4), NaN and
	// infinities as the strings "nan", "inf", "-inf", and '/' escaped.
	morlocForm
)

type printer struct {
	form form
	buf  []byte
	// r, when set, bounds the text: values share their parts, so a small
	// value can print as an enormous text (let x1 = (x0, x0) in ...).
	// Each element costs a step, and the text may not outgrow the memory
	// left.
	r *run
}

// grew checks the bounds after an element is written.
func (p *printer) grew() error {
	if p.r == nil {
		return nil
	}
	if int64(len(p.buf)) > p.r.bytes {
		return &Error{Kind: Limit, Msg: "evaluation exceeded its memory limit (the value's text is too large)"}
	}
	if err := p.r.step(1); err != nil {
		return err
	}
	return nil
}

// writeValue appends v, of type t, as compact JSON. A nil t (or `*`)
// writes v by its own shape.
func (p *printer) value(v Value, t *Type) error {
	t = t.resolve()
	if t == nil || t.kind == kAny {
		return p.untyped(v)
	}
	switch t.kind {
	case kNil:
		p.buf = append(p.buf, "null"...)
		return nil
	case kBool:
		if v.k != vBool {
			return mismatch(t, v)
		}
		if v.b {
			p.buf = append(p.buf, "true"...)
		} else {
			p.buf = append(p.buf, "false"...)
		}
	case kInt:
		if v.k != vInt {
			return mismatch(t, v)
		}
		p.buf = v.appendInt(p.buf)
	case kFloat:
		if v.k != vFloat {
			return mismatch(t, v)
		}
		return p.float(v.f, t.bits)
	case kStr, kIFile, kOStream, kIStream:
		if v.k != vStr {
			return mismatch(t, v)
		}
		p.str(v.s)
	case kList, kTuple:
		if v.k != vSeq || t.kind == kTuple && len(v.seq) != len(t.items) {
			return mismatch(t, v)
		}
		p.buf = append(p.buf, '[')
		for i, x := range v.seq {
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			elem := t.elem
			if t.kind == kTuple {
				elem = t.items[i]
			}
			if err := p.value(x, elem); err != nil {
				return err
			}
			if err := p.grew(); err != nil {
				return err
			}
		}
		p.buf = append(p.buf, ']')
	case kRecord:
		if v.k != vSeq || len(v.seq) != len(t.items) {
			return mismatch(t, v)
		}
		p.buf = append(p.buf, '{')
		for i, x := range v.seq {
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			if p.form == morlocForm {
				// morloc writes keys raw: they are identifiers.
				p.buf = append(p.buf, '"')
				p.buf = append(p.buf, t.keys[i]...)
				p.buf = append(p.buf, '"')
			} else {
				p.str(t.keys[i])
			}
			p.buf = append(p.buf, ':')
			if err := p.value(x, t.items[i]); err != nil {
				return err
			}
			if err := p.grew(); err != nil {
				return err
			}
		}
		p.buf = append(p.buf, '}')
	case kOpt:
		if v.k == vNull {
			p.buf = append(p.buf, "null"...)
			return nil
		}
		return p.value(v, t.elem)
	case kTable:
		return internal("Cannot render a Table to JSON: nexus has no table values in pure commands")
	default:
		return mismatch(t, v)
	}
	return nil
}

// untyped writes a value of unknown type by its shape.
func (p *printer) untyped(v Value) error {
	switch v.k {
	case vNull:
		p.buf = append(p.buf, "null"...)
	case vBool:
		if v.b {
			p.buf = append(p.buf, "true"...)
		} else {
			p.buf = append(p.buf, "false"...)
		}
	case vInt:
		p.buf = v.appendInt(p.buf)
	case vFloat:
		return p.float(v.f, 64)
	case vStr:
		p.str(v.s)
	case vSeq:
		p.buf = append(p.buf, '[')
		for i, x := range v.seq {
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			if err := p.untyped(x); err != nil {
				return err
			}
			if err := p.grew(); err != nil {
				return err
			}
		}
		p.buf = append(p.buf, ']')
	}
	return nil
}

func mismatch(t *Type, v Value) *Error {
	return internal("type mismatch: expected %s, found %s", t.describe(), v.describeKind())
}

func (p *printer) float(f float64, bits int) error {
	if p.form == morlocForm {
		switch {
		case math.IsNaN(f):
			p.buf = append(p.buf, `"nan"`...)
		case math.IsInf(f, 1):
			p.buf = append(p.buf, `"inf"`...)
		case math.IsInf(f, -1):
			p.buf = append(p.buf, `"-inf"`...)
		case bits == 32:
			p.buf = strconv.AppendFloat(p.buf, f, 'g', 7, 64)
		default:
			p.buf = strconv.AppendFloat(p.buf, f, 'g', 15, 64)
		}
		return nil
	}
	switch {
	case math.IsNaN(f):
		p.buf = append(p.buf, `"NaN"`...)
		return nil
	case math.IsInf(f, 1):
		p.buf = append(p.buf, `"Infinity"`...)
		return nil
	case math.IsInf(f, -1):
		p.buf = append(p.buf, `"-Infinity"`...)
		return nil
	}
	p.buf = appendReal(p.buf, f, bits)
	return nil
}

// appendReal writes a finite real as encoding/json does: the shortest text
// that reads back as the same float (of the given bit size), in 'f' form
// unless the magnitude is below 1e-6 or from 1e21 up, with a one-digit
// negative exponent kept short (1e-7, not 1e-07). It is the rule of
// internal/ndarray.AppendReal, kept here so that eval imports nothing but
// manifest.
func appendReal(dst []byte, f float64, bits int) []byte {
	if bits != 32 {
		bits = 64
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// str writes a JSON string. Both forms escape '"', '\\' and control
// characters (\b \f \n \r \t short, others as \u00xx) and keep other text
// as raw UTF-8; morloc's form also escapes '/' as "\/"; the client form
// writes invalid UTF-8 as U+FFFD so that its output is always valid JSON.
func (p *printer) str(s string) {
	const hex = "0123456789abcdef"
	b := append(p.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			if p.form == clientForm {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size == 1 {
					b = append(b, s[start:i]...)
					b = append(b, `\ufffd`...)
					i++
					start = i
					continue
				}
				i += size
				continue
			}
			i++
			continue
		}
		var esc string
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '/' && p.form == morlocForm:
			esc = `\/`
		case c == '\b':
			esc = `\b`
		case c == '\f':
			esc = `\f`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c < 0x20:
			esc = string([]byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&0xF]})
		default:
			i++
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		i++
		start = i
	}
	b = append(b, s[start:]...)
	p.buf = append(b, '"')
}

// toJSON writes v of type t in the given form.
func toJSON(v Value, t *Type, f form) ([]byte, error) {
	return (*run)(nil).toJSON(v, t, f)
}

// toJSON writes v of type t in the given form, within the run's bounds
// (none when r is nil), and charges the text to its memory.
func (r *run) toJSON(v Value, t *Type, f form) ([]byte, error) {
	p := &printer{form: f, r: r}
	if err := p.value(v, t); err != nil {
		return nil, err
	}
	if err := p.grew(); err != nil {
		return nil, err
	}
	if r != nil {
		if err := r.alloc(int64(len(p.buf))); err != nil {
			return nil, err
		}
	}
	return p.buf, nil
}
