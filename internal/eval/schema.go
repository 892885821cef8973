package eval

import (
	"fmt"
)

// kind is the shape of a Type node.
type kind uint8

const (
	kNil     kind = iota // z
	kBool                // b
	kInt                 // j, i1..i8, u1..u8
	kFloat               // f4, f8
	kStr                 // s
	kList                // a<T>, a:<n><T>
	kTuple               // t<n>...
	kRecord              // m<n>...
	kOpt                 // ?<T>
	kTable               // T, T:<n>...
	kIFile               // F
	kOStream             // O
	kIStream             // I
	kDecl                // &<k><name><T>: a recursive declaration; elem is its body
	kRef                 // ^<k><name>: a back-reference; target is its declaration
	kAny                 // *: a type the compiler could not name
)

var kindNames = [...]string{"unit", "boolean", "integer", "real", "string", "list", "tuple", "record",
	"optional", "table", "file handle", "output stream", "input stream", "recursive type", "back-reference", "unknown type"}

func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Type is a parsed schema string (SPEC §2, PURE.md §1): the type of a value.
// Back-references point at their declaration, so a recursive type is a
// graph; Compile rejects a recursion that no list, tuple or record guards,
// so following back-references always reaches a constructor.
type Type struct {
	kind   kind
	code   string // "j", "i4", "u1", "f8", ... for integers and reals
	bits   int    // width of a sized integer or a real; 0 for j
	signed bool   // sized integers: i (true) or u (false)
	elem   *Type  // list element, optional inner, declaration body
	items  []*Type
	keys   []string // record keys, in order (items are their types)
	length int      // a fixed-length list's length; 0 when any length
	name   string   // declaration or back-reference name
	target *Type    // a back-reference's declaration

	// fixed, width and align: the value's byte layout in morloc's memory
	// when it has a fixed one (see fixedWidth), set by the parser.
	fixed        bool
	width, align int
}

// resolve skips declarations and follows back-references to the type that
// gives a value its shape.
func (t *Type) resolve() *Type {
	for i := 0; t != nil && i < 256; i++ {
		switch t.kind {
		case kDecl:
			t = t.elem
		case kRef:
			t = t.target
		default:
			return t
		}
	}
	return t // unreachable for a type that parseSchema accepted
}

// describe names a type in a message: "integer (i4)", "list", "record".
func (t *Type) describe() string {
	t = t.resolve()
	if t == nil {
		return "nothing"
	}
	if t.kind == kInt || t.kind == kFloat {
		return fmt.Sprintf("%s (%s)", t.kind, t.code)
	}
	return t.kind.String()
}

// maxSchemaDepth bounds the nesting of a schema string.
const maxSchemaDepth = 512

// maxFixedLength bounds the n of a fixed-length list a:<n>.
const maxFixedLength = 1 << 31

// parseSchema parses a whole schema string. Beyond manifest.ParseType it
// reads what morloc writes into pure commands: fixed-length lists
// `a:<n><T>` (n decimal), size characters `+` (62) and `/` (63), and `*`.
// Type hints `<...>` are skipped.
func parseSchema(s string) (*Type, error) {
	p := &schemaParser{s: s}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	if p.i != len(s) {
		return nil, p.fail("unexpected %q after a complete type", s[p.i:])
	}
	return t, nil
}

type schemaParser struct {
	s     string
	i     int
	depth int
	ctors int // list, tuple and record nodes on the path from the root
	decls []declScope
}

type declScope struct {
	t     *Type
	ctors int
}

func (p *schemaParser) fail(format string, a ...any) error {
	return fmt.Errorf("bad schema %q at offset %d: %s", p.s, p.i, fmt.Sprintf(format, a...))
}

func base64Digit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 36, true
	case c == '+':
		return 62, true
	case c == '/':
		return 63, true
	}
	return 0, false
}

func (p *schemaParser) count(what string) (int, error) {
	if p.i >= len(p.s) {
		return 0, p.fail("expected a %s, got the end", what)
	}
	n, ok := base64Digit(p.s[p.i])
	if !ok {
		return 0, p.fail("expected a %s (0-9, a-z, A-Z, + or /), got %q", what, p.s[p.i])
	}
	p.i++
	return n, nil
}

func (p *schemaParser) name(what string) (string, error) {
	n, err := p.count(what + " length")
	if err != nil {
		return "", err
	}
	if p.i+n > len(p.s) {
		return "", p.fail("%s of length %d runs past the end", what, n)
	}
	k := p.s[p.i : p.i+n]
	p.i += n
	return k, nil
}

func (p *schemaParser) parse() (*Type, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxSchemaDepth {
		return nil, p.fail("nested deeper than %d levels", maxSchemaDepth)
	}
	for p.i < len(p.s) && p.s[p.i] == '<' {
		depth, j := 0, p.i
		for ; j < len(p.s); j++ {
			if p.s[j] == '<' {
				depth++
			} else if p.s[j] == '>' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j == len(p.s) {
			return nil, p.fail("unterminated type hint")
		}
		p.i = j + 1
	}
	if p.i >= len(p.s) {
		return nil, p.fail("expected a type, got the end")
	}
	c := p.s[p.i]
	start := p.i
	p.i++
	t := &Type{}
	switch c {
	case 'z':
		t.kind = kNil
	case 'b':
		t.kind = kBool
	case 's':
		t.kind = kStr
	case 'j':
		t.kind, t.code, t.signed = kInt, "j", true
	case 'F':
		t.kind = kIFile
	case 'O':
		t.kind = kOStream
	case 'I':
		t.kind = kIStream
	case '*':
		t.kind = kAny
	case 'i', 'u':
		n, err := p.count("width")
		if err != nil {
			return nil, err
		}
		if n != 1 && n != 2 && n != 4 && n != 8 {
			p.i--
			return nil, p.fail("invalid integer width %d (expected 1, 2, 4 or 8)", n)
		}
		t.kind, t.code, t.bits, t.signed = kInt, p.s[start:p.i], 8*n, c == 'i'
	case 'f':
		n, err := p.count("width")
		if err != nil {
			return nil, err
		}
		if n != 4 && n != 8 {
			p.i--
			return nil, p.fail("invalid real width %d (expected 4 or 8)", n)
		}
		t.kind, t.code, t.bits = kFloat, p.s[start:p.i], 8*n
	case 'a':
		t.kind = kList
		if p.i < len(p.s) && p.s[p.i] == ':' {
			p.i++
			n, digits := 0, 0
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				n = n*10 + int(p.s[p.i]-'0')
				p.i++
				digits++
				if n > maxFixedLength {
					return nil, p.fail("fixed list length is larger than %d", maxFixedLength)
				}
			}
			if digits == 0 {
				return nil, p.fail("expected the decimal length of a fixed-length list after 'a:'")
			}
			t.length = n
		}
		p.ctors++
		e, err := p.parse()
		p.ctors--
		if err != nil {
			return nil, err
		}
		t.elem = e
	case '?':
		t.kind = kOpt
		e, err := p.parse()
		if err != nil {
			return nil, err
		}
		t.elem = e
	case 't':
		n, err := p.count("tuple size")
		if err != nil {
			return nil, err
		}
		t.kind = kTuple
		p.ctors++
		for j := 0; j < n; j++ {
			it, err := p.parse()
			if err != nil {
				p.ctors--
				return nil, err
			}
			t.items = append(t.items, it)
		}
		p.ctors--
	case 'm':
		t.kind = kRecord
		p.ctors++
		err := p.fields(t, "record field")
		p.ctors--
		if err != nil {
			return nil, err
		}
	case 'T':
		t.kind = kTable
		if p.i < len(p.s) && p.s[p.i] == ':' {
			p.i++
			p.ctors++
			err := p.fields(t, "table column")
			p.ctors--
			if err != nil {
				return nil, err
			}
		}
	case '&':
		n, err := p.name("recursive type name")
		if err != nil {
			return nil, err
		}
		t.kind, t.name = kDecl, n
		p.decls = append(p.decls, declScope{t: t, ctors: p.ctors})
		body, err := p.parse()
		p.decls = p.decls[:len(p.decls)-1]
		if err != nil {
			return nil, err
		}
		t.elem = body
	case '^':
		n, err := p.name("back-reference name")
		if err != nil {
			return nil, err
		}
		t.kind, t.name = kRef, n
		for j := len(p.decls) - 1; j >= 0; j-- {
			if p.decls[j].t.name == n {
				if p.decls[j].ctors == p.ctors {
					return nil, p.fail("^%s refers to &%s with no list, tuple or record between them: the type has no values", n, n)
				}
				t.target = p.decls[j].t
				break
			}
		}
		if t.target == nil {
			return nil, p.fail("back-reference ^%s has no enclosing &%s", n, n)
		}
	default:
		p.i = start
		return nil, p.fail("unknown type code %q", c)
	}
	t.layout()
	return t, nil
}

func (p *schemaParser) fields(t *Type, what string) error {
	n, err := p.count(what + " count")
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		at := p.i
		k, err := p.name(what + " key")
		if err != nil {
			return err
		}
		for _, seen := range t.keys {
			if seen == k {
				p.i = at
				return p.fail("duplicate %s key %q", what, k)
			}
		}
		ft, err := p.parse()
		if err != nil {
			return err
		}
		t.keys = append(t.keys, k)
		t.items = append(t.items, ft)
	}
	return nil
}

// fixedWidth reports whether values of t have a fixed byte layout in
// morloc's memory model (scalars, and tuples of them), with the layout's
// width and alignment. It decides how @hash treats a tuple or a list.
func (t *Type) fixedWidth() (width, align int, ok bool) {
	return t.width, t.align, t.fixed
}

// layout sets t's fixed layout from its parts', once, as it is parsed.
func (t *Type) layout() {
	switch t.kind { // a back-reference is never fixed-width (morloc's Recur)
	case kNil:
		t.fixed, t.width, t.align = true, 0, 1
	case kBool:
		t.fixed, t.width, t.align = true, 1, 1
	case kInt, kFloat:
		if t.bits != 0 {
			t.fixed, t.width, t.align = true, t.bits/8, t.bits/8
		}
	case kDecl:
		t.fixed, t.width, t.align = t.elem.fixed, t.elem.width, t.elem.align
	case kTuple:
		off, maxAlign := 0, 1
		for _, it := range t.items {
			if !it.fixed {
				return
			}
			maxAlign = max(maxAlign, it.align)
			off = (off+it.align-1)&^(it.align-1) + it.width
		}
		t.fixed, t.width, t.align = true, (off+maxAlign-1)&^(maxAlign-1), maxAlign
	}
}

// schemaCache parses each distinct schema string of one expression once.
type schemaCache map[string]*Type

func (c schemaCache) get(s string) (*Type, error) {
	if t, ok := c[s]; ok {
		return t, nil
	}
	t, err := parseSchema(s)
	if err != nil {
		return nil, err
	}
	c[s] = t
	return t, nil
}
