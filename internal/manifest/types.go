package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the shape of a Type node.
type Kind int

// The type codes of docs/spec.md §2.5.
const (
	Nil       Kind = iota // z
	Bool                  // b
	Str                   // s
	Int                   // j, i1..i8, u1..u8
	Float                 // f4, f8
	List                  // a<T>
	Tuple                 // t<n><T>...
	Record                // m<n>(<klen><key><T>)*
	Optional              // ?<T>
	Table                 // T, T:<n>...
	File                  // F
	InStream              // I
	OutStream             // O
	Recursive             // &<klen><name><T>
	BackRef               // ^<klen><name>
	Any                   // *: a type morloc could not name; any value
)

var kindNames = [...]string{"nil", "bool", "string", "integer", "real", "list", "tuple", "record",
	"optional", "table", "file", "input stream", "output stream", "recursive", "back-reference", "any"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Field is one named member of a record or a table.
type Field struct {
	Key  string
	Type *Type
}

// Type is a parsed type string.
type Type struct {
	Kind Kind
	// Code is the primitive code as written ("j", "i4", "f8", "s", "*", ...).
	Code string
	// Hint is the native type hint that preceded this node, without its outer
	// brackets ("dict", "std::map<$1,$2>"); of stacked hints, the last one.
	Hint string
	// Elem is the element of a List, the inner type of an Optional, the body of a Recursive.
	Elem *Type
	// Len is a List's fixed length, from `a:<n><T>` (Matrix 2 3 Int is
	// `a:2a:3j`); 0 means any length. morloc's runtime reads `a:0` as "any
	// length" too, so `a:0j` is the type `aj` and re-encodes as such.
	Len int
	// Items are the members of a Tuple.
	Items []*Type
	// Fields are the members of a Record, or the columns of a Table (may be empty).
	Fields []Field
	// Name is the name of a Recursive declaration or a BackRef.
	Name string
}

// Unwrap skips Recursive declarations, returning the type they declare.
func (t *Type) Unwrap() *Type {
	for t != nil && t.Kind == Recursive {
		t = t.Elem
	}
	return t
}

// IsRecord reports whether t (after any hint or recursive declaration) is a record.
func (t *Type) IsRecord() bool { return t.Unwrap() != nil && t.Unwrap().Kind == Record }

// IsMap reports whether t is a list of key/value pairs hinted as a native
// map (Map K V): `<dict>` (Python) or a hint naming a map type
// (`<std::map<$1,$2>>` in C++). A list of pairs under any other hint
// (`<list>`) stays a list.
func (t *Type) IsMap() bool {
	if t == nil || t.Kind != List || t.Elem == nil {
		return false
	}
	e := t.Elem.Unwrap()
	if e == nil || e.Kind != Tuple || len(e.Items) != 2 {
		return false
	}
	h := strings.ToLower(t.Hint)
	return h == "dict" || strings.Contains(h, "map")
}

// Contains reports whether any node of t has one of the given kinds.
func (t *Type) Contains(kinds ...Kind) bool {
	if t == nil {
		return false
	}
	for _, k := range kinds {
		if t.Kind == k {
			return true
		}
	}
	if t.Elem.Contains(kinds...) {
		return true
	}
	for _, it := range t.Items {
		if it.Contains(kinds...) {
			return true
		}
	}
	for _, f := range t.Fields {
		if f.Type.Contains(kinds...) {
			return true
		}
	}
	return false
}

// String re-encodes t as a type string; ParseType(t.String()) equals t.
func (t *Type) String() string {
	var b strings.Builder
	t.encode(&b)
	return b.String()
}

func (t *Type) encode(b *strings.Builder) {
	if t.Hint != "" {
		b.WriteString("<" + t.Hint + ">")
	}
	switch t.Kind {
	case Nil, Bool, Str, Int, Float, File, InStream, OutStream, Any:
		b.WriteString(t.Code)
	case List:
		b.WriteByte('a')
		if t.Len > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(t.Len))
		}
		t.Elem.encode(b)
	case Optional:
		b.WriteByte('?')
		t.Elem.encode(b)
	case Tuple:
		b.WriteByte('t')
		b.WriteByte(sizeDigits[len(t.Items)])
		for _, it := range t.Items {
			it.encode(b)
		}
	case Record:
		b.WriteByte('m')
		encodeFields(b, t.Fields)
	case Table:
		b.WriteByte('T')
		if len(t.Fields) > 0 {
			b.WriteByte(':')
			encodeFields(b, t.Fields)
		}
	case Recursive:
		b.WriteByte('&')
		encodeName(b, t.Name)
		t.Elem.encode(b)
	case BackRef:
		b.WriteByte('^')
		encodeName(b, t.Name)
	}
}

// encodeFields writes a record's or table's fields: their count, then each
// field's sized key and type.
func encodeFields(b *strings.Builder, fields []Field) {
	b.WriteByte(sizeDigits[len(fields)])
	for _, f := range fields {
		encodeName(b, f.Key)
		f.Type.encode(b)
	}
}

// encodeName writes a key or a declaration's name, its size first.
func encodeName(b *strings.Builder, name string) {
	b.WriteByte(sizeDigits[len(name)])
	b.WriteString(name)
}

// sizeDigits are the characters of a size (a count or a length) in a
// type string: base 62, and morloc's parser also reads '+' as 62 and '/' as
// 63 (decode_base62 in morloc-runtime-types/src/schema.rs).
const sizeDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/"

func sizeValue(c byte) (int, bool) {
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

// MaxLen bounds the n of a fixed-length list `a:<n>`.
const MaxLen = 1 << 31

// TypeError says where in a type string parsing failed and what was expected there.
type TypeError struct {
	Schema string
	Offset int
	Msg    string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("type string %q at offset %d: %s", e.Schema, e.Offset, e.Msg)
}

// ParseType parses a whole type string (docs/spec.md §2.5). Trailing
// characters are an error, and so is a back-reference `^name` with no
// enclosing `&name`, or one with no list, tuple, record or table between it
// and its declaration (such a type has no finite values: `&1A?^1A`).
func ParseType(s string) (*Type, error) {
	p := &typeParser{s: s}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	if p.i != len(s) {
		return nil, p.fail("unexpected trailing %q after a complete type", s[p.i:])
	}
	return t, nil
}

type typeParser struct {
	s     string
	i     int
	depth int
	ctors int         // list, tuple, record and table nodes on the path from the root
	decls []declScope // the recursive declarations enclosing the node being read
}

type declScope struct {
	name  string
	ctors int // p.ctors at the declaration
}

// maxTypeDepth bounds nesting so hostile schemas cannot exhaust the stack.
const maxTypeDepth = 256

func (p *typeParser) fail(format string, a ...any) error {
	return &TypeError{Schema: p.s, Offset: p.i, Msg: fmt.Sprintf(format, a...)}
}

func (p *typeParser) count(what string) (int, error) {
	if p.i >= len(p.s) {
		return 0, p.fail("expected a base-62 %s, got end of string", what)
	}
	n, ok := sizeValue(p.s[p.i])
	if !ok {
		return 0, p.fail("expected a base-62 %s (0-9, a-z, A-Z, + or /), got %q", what, p.s[p.i])
	}
	p.i++
	return n, nil
}

func (p *typeParser) name(what string) (string, error) {
	n, err := p.count(what + " length")
	if err != nil {
		return "", err
	}
	if p.i+n > len(p.s) {
		return "", p.fail("%s of length %d runs past the end of the string", what, n)
	}
	k := p.s[p.i : p.i+n]
	p.i += n
	return k, nil
}

func (p *typeParser) fields(what string) ([]Field, error) {
	n, err := p.count(what + " count")
	if err != nil {
		return nil, err
	}
	fs := make([]Field, 0, n)
	seen := map[string]bool{}
	for j := 0; j < n; j++ {
		at := p.i
		k, err := p.name(what + " key")
		if err != nil {
			return nil, err
		}
		if seen[k] {
			p.i = at
			return nil, p.fail("duplicate %s key %q", what, k)
		}
		seen[k] = true
		ft, err := p.parse()
		if err != nil {
			return nil, err
		}
		fs = append(fs, Field{Key: k, Type: ft})
	}
	return fs, nil
}

// oneLetterKinds are the kinds whose type code is one letter alone.
var oneLetterKinds = map[byte]Kind{'z': Nil, 'b': Bool, 's': Str, 'j': Int, 'F': File, 'I': InStream, 'O': OutStream, '*': Any}

func (p *typeParser) parse() (*Type, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxTypeDepth {
		return nil, p.fail("type nested deeper than %d levels", maxTypeDepth)
	}
	hint := ""
	for p.i < len(p.s) && p.s[p.i] == '<' {
		end := hintEnd(p.s[p.i:])
		if end < 0 {
			return nil, p.fail("unterminated type hint: expected '>'")
		}
		hint = p.s[p.i+1 : p.i+end]
		p.i += end + 1
	}
	if p.i >= len(p.s) {
		return nil, p.fail("expected a type code, got end of string")
	}
	c := p.s[p.i]
	start := p.i
	p.i++
	t := &Type{Hint: hint}
	switch c {
	case 'z', 'b', 's', 'j', 'F', 'I', 'O', '*':
		t.Kind, t.Code = oneLetterKinds[c], p.s[start:p.i]
	case 'i', 'u':
		if p.i >= len(p.s) || !strings.ContainsRune("1248", rune(p.s[p.i])) {
			return nil, p.fail("expected a width 1, 2, 4 or 8 after %q", c)
		}
		t.Kind, t.Code = Int, p.s[start:p.i+1]
		p.i++
	case 'f':
		if p.i >= len(p.s) || (p.s[p.i] != '4' && p.s[p.i] != '8') {
			return nil, p.fail("expected a width 4 or 8 after 'f'")
		}
		t.Kind, t.Code = Float, p.s[start:p.i+1]
		p.i++
	case 'a':
		t.Kind = List
		if p.i < len(p.s) && p.s[p.i] == ':' {
			p.i++
			n, err := p.length()
			if err != nil {
				return nil, err
			}
			t.Len = n
		}
		p.ctors++
		e, err := p.parse()
		p.ctors--
		if err != nil {
			return nil, err
		}
		t.Elem = e
	case '?':
		e, err := p.parse()
		if err != nil {
			return nil, err
		}
		t.Kind, t.Elem = Optional, e
	case 't':
		n, err := p.count("tuple size")
		if err != nil {
			return nil, err
		}
		t.Kind = Tuple
		p.ctors++
		for j := 0; j < n; j++ {
			it, err := p.parse()
			if err != nil {
				p.ctors--
				return nil, err
			}
			t.Items = append(t.Items, it)
		}
		p.ctors--
	case 'm':
		p.ctors++
		fs, err := p.fields("record field")
		p.ctors--
		if err != nil {
			return nil, err
		}
		t.Kind, t.Fields = Record, fs
	case 'T':
		t.Kind = Table
		if p.i < len(p.s) && p.s[p.i] == ':' {
			p.i++
			p.ctors++
			fs, err := p.fields("table column")
			p.ctors--
			if err != nil {
				return nil, err
			}
			t.Fields = fs
		}
	case '&':
		n, err := p.name("recursive type name")
		if err != nil {
			return nil, err
		}
		p.decls = append(p.decls, declScope{name: n, ctors: p.ctors})
		body, err := p.parse()
		p.decls = p.decls[:len(p.decls)-1]
		if err != nil {
			return nil, err
		}
		t.Kind, t.Name, t.Elem = Recursive, n, body
	case '^':
		n, err := p.name("back-reference name")
		if err != nil {
			return nil, err
		}
		t.Kind, t.Name = BackRef, n
		if err := p.resolve(n, start); err != nil {
			return nil, err
		}
	default:
		p.i = start
		return nil, p.fail("unknown type code %q (expected one of z b s j i u f a t m ? T F I O * & ^ <)", c)
	}
	return t, nil
}

// hintEnd returns the index of the '>' closing the hint that s starts with,
// or -1. Hints nest: C++ pools write `<std::map<$1,$2>>at2sj`.
func hintEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// resolve checks the back-reference ^name, written at offset at: the
// innermost enclosing &name is the type it means, and a list, tuple, record
// or table must lie between them.
func (p *typeParser) resolve(name string, at int) error {
	for j := len(p.decls) - 1; j >= 0; j-- {
		if p.decls[j].name != name {
			continue
		}
		if p.decls[j].ctors == p.ctors {
			p.i = at
			return p.fail("back-reference ^%s refers to &%s with no list, tuple, record or table between them: the type has no finite values", name, name)
		}
		return nil
	}
	p.i = at
	return p.fail("back-reference ^%s has no enclosing &%s declaration", name, name)
}

// length reads the decimal n of a fixed-length list `a:<n>`.
func (p *typeParser) length() (int, error) {
	start, n := p.i, 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if n <= MaxLen {
			n = n*10 + int(p.s[p.i]-'0')
		}
		p.i++
	}
	if p.i == start {
		return 0, p.fail("expected the decimal length of a fixed-length list after 'a:'")
	}
	if n > MaxLen {
		digits := p.s[start:p.i]
		p.i = start
		return 0, p.fail("fixed list length %s is larger than %d", digits, MaxLen)
	}
	return n, nil
}
