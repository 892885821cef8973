package morlocwire

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// prim is a primitive schema code.
type prim uint8

const (
	pNone prim = iota
	pNil       // z
	pBool      // b
	pI1
	pI2
	pI4
	pI8
	pU1
	pU2
	pU4
	pU8
	pF4
	pF8
	pStr // s
	pBig // j
)

var primCodes = map[string]prim{
	"z": pNil, "b": pBool, "s": pStr, "j": pBig,
	"i1": pI1, "i2": pI2, "i4": pI4, "i8": pI8,
	"u1": pU1, "u2": pU2, "u4": pU4, "u8": pU8,
	"f4": pF4, "f8": pF8,
}

// primWidth is a fixed-width primitive's size (and alignment) in bytes.
func primWidth(p prim) int {
	switch p {
	case pBool, pI1, pU1:
		return 1
	case pI2, pU2:
		return 2
	case pI4, pU4, pF4:
		return 4
	case pI8, pU8, pF8:
		return 8
	}
	return 0
}

func (p prim) numeric() bool { return p >= pI1 && p <= pF8 }
func (p prim) float() bool   { return p == pF4 || p == pF8 }

// node is a type laid out for one dialect: what the voidstar decoder and
// the msgpack encoder walk. It is built once per (type, dialect) and
// shared by every call.
type node struct {
	kind  manifest.Kind
	prim  prim
	code  string // the type's code or shape, for messages ("i4", "list", "record")
	width int    // bytes of the value's slot in its parent or array
	align int    // the slot's alignment inside a parent
	// elem is a list's element, an optional's value, a back-reference's
	// declaration.
	elem *node
	// items are a tuple's items or a record's fields; offs their offsets.
	// offs[0] of an inline (C) optional is its value's offset after the tag.
	items []*node
	offs  []int
	keys  []string
	// jsonKeys are the records' keys as JSON object members: `"key":`,
	// with a leading ',' after the first.
	jsonKeys [][]byte
	fixedLen int // a list's fixed length (a:N), 0 for any
	isMap    bool
	name     string // a recursive declaration's name
}

// planKey identifies a layout: a type (by identity: a manifest's types are
// parsed once and shared) in a dialect.
type planKey struct {
	t *manifest.Type
	d Dialect
}

var (
	plans     sync.Map // planKey → *node
	planCount atomic.Int64
)

const maxPlans = 1 << 14

// layout returns t laid out for d, from the cache when it was built before.
func layout(t *manifest.Type, d Dialect) (*node, error) {
	if t == nil {
		return nil, fmt.Errorf("no type to lay out")
	}
	k := planKey{t, d}
	if n, ok := plans.Load(k); ok {
		return n.(*node), nil
	}
	b := &builder{d: d}
	n, err := b.build(t, 0)
	if err != nil {
		return nil, err
	}
	if err := b.settle(n); err != nil {
		return nil, err
	}
	// Each load of a manifest parses new types: a server reloading its
	// program for ever would fill the cache, so it starts over now and then.
	if planCount.Add(1) > maxPlans {
		plans.Clear()
		planCount.Store(0)
	}
	plans.Store(k, n)
	return n, nil
}

type builder struct {
	d     Dialect
	scope []*node // enclosing recursive declarations, innermost last
	refs  []*node // back-references, to patch their widths
}

func (b *builder) build(t *manifest.Type, depth int) (*node, error) {
	if depth > 256 {
		return nil, fmt.Errorf("type %s nests deeper than 256 levels", t)
	}
	n := &node{kind: t.Kind, code: t.Code}
	switch t.Kind {
	case manifest.Nil, manifest.Bool, manifest.Str, manifest.Int, manifest.Float:
		p, ok := primCodes[t.Code]
		if !ok {
			return nil, fmt.Errorf("unknown primitive schema code %q", t.Code)
		}
		if p == pBig && !b.d.BigInt {
			return nil, fmt.Errorf("schema code j (Int of any size) does not exist in morloc %s's wire format", b.d.Version)
		}
		n.prim = p
		switch p {
		case pNil:
			n.width, n.align = b.d.NilWidth, 1
		case pStr, pBig:
			n.width, n.align = 16, 8 // {size u64, relptr} (v0.69 schema.h:65-68; v0.98 schema.rs:108-110)
		default:
			n.width = primWidth(p)
			n.align = n.width
		}
	case manifest.List:
		e, err := b.build(t.Elem, depth+1)
		if err != nil {
			return nil, err
		}
		n.code, n.elem, n.width, n.align, n.fixedLen = "list", e, 16, 8, t.Len
		n.isMap = t.IsMap() && e.kind == manifest.Tuple && len(e.items) == 2 && e.items[0].prim == pStr
	case manifest.Tuple, manifest.Record:
		n.code = "tuple"
		if t.Kind == manifest.Record {
			n.code = "record"
			if len(t.Fields) > 64 {
				return nil, fmt.Errorf("record with %d fields (at most 64)", len(t.Fields))
			}
		}
		var kids []*manifest.Type
		for _, it := range t.Items {
			kids = append(kids, it)
		}
		for k, f := range t.Fields {
			kids = append(kids, f.Type)
			n.keys = append(n.keys, f.Key)
			jk := []byte{}
			if k > 0 {
				jk = append(jk, ',')
			}
			jk = jsontext.AppendString(jk, []byte(f.Key))
			n.jsonKeys = append(n.jsonKeys, append(jk, ':'))
		}
		for _, kt := range kids {
			c, err := b.build(kt, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		b.lay(n)
	case manifest.Optional:
		e, err := b.build(t.Elem, depth+1)
		if err != nil {
			return nil, err
		}
		n.code, n.elem = "optional", e
		b.lay(n)
	case manifest.Recursive:
		if !b.d.OptionalSlot {
			return nil, fmt.Errorf("recursive types do not exist in morloc %s's wire format", b.d.Version)
		}
		decl := &node{name: t.Name}
		b.scope = append(b.scope, decl)
		body, err := b.build(t.Elem, depth+1)
		b.scope = b.scope[:len(b.scope)-1]
		if err != nil {
			return nil, err
		}
		*decl = *body // back-references built inside point at decl
		decl.name = t.Name
		return decl, nil
	case manifest.BackRef:
		for i := len(b.scope) - 1; i >= 0; i-- {
			if b.scope[i].name == t.Name {
				// Width is the declaration's once settled; until then the
				// placeholder morloc uses (v0.98 schema.rs:714-726).
				n.code, n.elem, n.width, n.align = "^"+t.Name, b.scope[i], 16, 8
				b.refs = append(b.refs, n)
				return n, nil
			}
		}
		return nil, fmt.Errorf("back-reference ^%s has no enclosing declaration", t.Name)
	case manifest.Table:
		if b.d.Tensor {
			return nil, fmt.Errorf("tensors (schema T) are not supported")
		}
		return nil, fmt.Errorf("tables (schema T, Arrow buffers) are not supported")
	case manifest.File, manifest.InStream, manifest.OutStream:
		return nil, fmt.Errorf("stream handles (schema %s) are not supported", t.Code)
	case manifest.Any:
		return nil, fmt.Errorf("the type * (a type morloc could not name) has no wire format")
	default:
		return nil, fmt.Errorf("type %s has no wire format", t)
	}
	return n, nil
}

// lay computes a tuple's, record's or optional's offsets, width and
// alignment from its children's.
func (b *builder) lay(n *node) {
	switch n.kind {
	case manifest.Tuple, manifest.Record:
		// C struct layout (v0.69 schema.c:380-413; v0.98 schema.rs:762-779).
		n.offs = n.offs[:0]
		off, maxAlign := 0, 1
		for _, c := range n.items {
			maxAlign = max(maxAlign, c.align)
			off = alignUp(off, c.align)
			n.offs = append(n.offs, off)
			off += c.width
		}
		n.width = alignUp(off, maxAlign)
		n.align = maxAlign
		if n.kind == manifest.Record && b.d.RecordAlign8 {
			n.align = 8 // v0.98 schema.rs:177-186: a Map is pointer-aligned
		}
	case manifest.Optional:
		if b.d.OptionalSlot {
			n.width, n.align = 8, 8 // a relptr slot (v0.98 schema.rs:627-648)
			n.offs = nil
			return
		}
		// A u8 tag, then the value at its alignment (v0.69 schema.c:428-441).
		a := max(n.elem.align, 1)
		off := alignUp(1, a)
		n.offs = []int{off}
		n.width = alignUp(off+n.elem.width, a)
		n.align = a
	}
}

// settle gives each back-reference its declaration's width and re-lays
// the containers around it, until nothing changes (v0.98 schema.rs:299-309).
func (b *builder) settle(root *node) error {
	if len(b.refs) == 0 {
		return nil
	}
	for round := 0; round < 16; round++ {
		changed := false
		for _, r := range b.refs {
			if r.width != r.elem.width {
				r.width = r.elem.width
				changed = true
			}
		}
		if !changed {
			return nil
		}
		seen := map[*node]bool{}
		var relay func(n *node)
		relay = func(n *node) {
			if n == nil || seen[n] || n.kind == manifest.BackRef {
				return
			}
			seen[n] = true
			relay(n.elem)
			for _, c := range n.items {
				relay(c)
			}
			if n.kind == manifest.Tuple || n.kind == manifest.Record || n.kind == manifest.Optional {
				b.lay(n)
			}
		}
		relay(root)
	}
	return fmt.Errorf("recursive type has no finite layout")
}

func alignUp(x, a int) int {
	if a <= 1 {
		return x
	}
	return (x + a - 1) &^ (a - 1)
}

// fixedWidth reports whether a value of n holds no relative pointer: its
// slot is all of it.
func (n *node) fixedWidth() bool {
	switch n.kind {
	case manifest.Nil, manifest.Bool, manifest.Int, manifest.Float:
		return n.prim != pBig
	case manifest.Tuple, manifest.Record:
		for _, c := range n.items {
			if !c.fixedWidth() {
				return false
			}
		}
		return true
	}
	return false
}

// WireSchema is t's schema string as pools write it in a packet's
// metadata: without `<hint>` prefixes (v0.69 schema.c:38-131; v0.98
// schema.rs:829-838).
func WireSchema(t *manifest.Type) string {
	if t == nil {
		return ""
	}
	var s strings.Builder
	wireSchema(&s, t)
	return s.String()
}

// sizeDigits are the base-62 size characters of schema strings (v0.69
// schema.c:3-23; v0.98 schema.rs:587-596).
const sizeDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/"

func wireSchema(s *strings.Builder, t *manifest.Type) {
	switch t.Kind {
	case manifest.List:
		s.WriteByte('a')
		if t.Len > 0 {
			fmt.Fprintf(s, ":%d", t.Len)
		}
		wireSchema(s, t.Elem)
	case manifest.Optional:
		s.WriteByte('?')
		wireSchema(s, t.Elem)
	case manifest.Tuple:
		s.WriteByte('t')
		s.WriteByte(sizeDigits[len(t.Items)])
		for _, it := range t.Items {
			wireSchema(s, it)
		}
	case manifest.Record, manifest.Table:
		if t.Kind == manifest.Record {
			s.WriteByte('m')
		} else {
			s.WriteString("T")
			if len(t.Fields) == 0 {
				return
			}
			s.WriteByte(':')
		}
		s.WriteByte(sizeDigits[len(t.Fields)])
		for _, f := range t.Fields {
			s.WriteByte(sizeDigits[len(f.Key)])
			s.WriteString(f.Key)
			wireSchema(s, f.Type)
		}
	case manifest.Recursive:
		s.WriteByte('&')
		s.WriteByte(sizeDigits[len(t.Name)])
		s.WriteString(t.Name)
		wireSchema(s, t.Elem)
	case manifest.BackRef:
		s.WriteByte('^')
		s.WriteByte(sizeDigits[len(t.Name)])
		s.WriteString(t.Name)
	default:
		s.WriteString(t.Code)
	}
}
