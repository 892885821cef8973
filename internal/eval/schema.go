package eval

import (
	"errors"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/manifest"
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

func (k kind) String() string { return nameIn(kindNames[:], int(k), "kind") }

// Type is a parsed schema string (docs/spec.md §2.5, §7.1): the type of a
// value.
// Back-references point at their declaration, so a recursive type is a
// graph; manifest.ParseType rejects a recursion that no list, tuple, record
// or table guards, so following back-references always reaches a
// constructor.
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

// parseSchema parses a whole schema string with manifest.ParseType, which
// reads everything morloc writes into pure commands (fixed-length lists
// `a:<n><T>`, size characters `+` and `/`, `*`, recursive types) and
// refuses a recursion that no list, tuple, record or table guards; then
// turns it into the evaluator's graph, whose back-references point at their
// declarations. Type hints are dropped.
func parseSchema(s string) (*Type, error) {
	mt, err := manifest.ParseType(s)
	if err != nil {
		var te *manifest.TypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("bad schema %q at offset %d: %s", te.Schema, te.Offset, te.Msg)
		}
		return nil, fmt.Errorf("bad schema %q: %w", s, err)
	}
	return fromManifest(mt, nil), nil
}

// leafKinds are the kinds that carry nothing but themselves.
var leafKinds = map[manifest.Kind]kind{
	manifest.Nil: kNil, manifest.Bool: kBool, manifest.Str: kStr, manifest.Any: kAny,
	manifest.File: kIFile, manifest.OutStream: kOStream, manifest.InStream: kIStream,
}

// fromManifest converts a parsed type; decls are the declarations
// enclosing it, innermost last.
func fromManifest(m *manifest.Type, decls []*Type) *Type {
	t := &Type{}
	switch m.Kind {
	case manifest.Nil, manifest.Bool, manifest.Str, manifest.File, manifest.OutStream, manifest.InStream, manifest.Any:
		t.kind = leafKinds[m.Kind]
	case manifest.Int:
		t.kind, t.code, t.signed = kInt, m.Code, m.Code[0] != 'u'
		if m.Code != "j" {
			t.bits = 8 * int(m.Code[1]-'0')
		}
	case manifest.Float:
		t.kind, t.code, t.bits = kFloat, m.Code, 8*int(m.Code[1]-'0')
	case manifest.List:
		t.kind, t.length, t.elem = kList, m.Len, fromManifest(m.Elem, decls)
	case manifest.Optional:
		t.kind, t.elem = kOpt, fromManifest(m.Elem, decls)
	case manifest.Tuple:
		t.kind = kTuple
		for _, it := range m.Items {
			t.items = append(t.items, fromManifest(it, decls))
		}
	case manifest.Record, manifest.Table:
		t.kind = kRecord
		if m.Kind == manifest.Table {
			t.kind = kTable
		}
		for _, f := range m.Fields {
			t.keys = append(t.keys, f.Key)
			t.items = append(t.items, fromManifest(f.Type, decls))
		}
	case manifest.Recursive:
		t.kind, t.name = kDecl, m.Name
		t.elem = fromManifest(m.Elem, append(decls, t))
	case manifest.BackRef:
		t.kind, t.name = kRef, m.Name
		for j := len(decls) - 1; j >= 0 && t.target == nil; j-- {
			if decls[j].name == m.Name {
				t.target = decls[j]
			}
		}
	}
	t.layout()
	return t
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
