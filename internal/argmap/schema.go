package argmap

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// typeSchema is the JSON Schema of t as a document of its own (an output
// schema): t's schema by the table of docs/spec.md §4.5, with the $defs its
// back-references need at its root.
func typeSchema(t *manifest.Type) Object {
	d := &schemaDefs{}
	return d.root(d.schema(t))
}

// schemaDefs builds the schemas of one JSON Schema document (a tool's input
// schema, or an output schema) and collects the "$defs" that its recursive
// types need, to be placed at the document's root.
//
// A recursive declaration `&name` maps as its body where it is written, so
// that a record stays an object schema (an output schema's root must be
// one); its body is also put under "$defs" when something refers to it. A
// back-reference `^name` maps to {"$ref":"#/$defs/<key>"}. Inside a body
// under "$defs", a nested declaration maps to its own $ref too, so that no
// body is copied into another.
type schemaDefs struct {
	// input: the document is an input schema, where a Real is
	// {"type":"number"} as morloc writes it (realSchema otherwise).
	input  bool
	defs   Object                              // the "$defs" members, in the order first needed
	keys   map[*manifest.Type]string           // each declaration's key in defs
	byText map[string]string                   // a closed declaration's type string → its key
	scopes map[*manifest.Type][]*manifest.Type // the declarations enclosing each declaration
}

// root adds "$defs" to a document's root schema, last, when there are any.
func (d *schemaDefs) root(o Object) Object {
	if len(d.defs) == 0 {
		return o
	}
	return append(o, Member{"$defs", d.defs})
}

// schema is t's schema inside the document.
func (d *schemaDefs) schema(t *manifest.Type) Object { return d.walk(t, nil, false) }

// walk maps t, inside the declarations scope (innermost last); inDef is
// true within a body under "$defs".
func (d *schemaDefs) walk(t *manifest.Type, scope []*manifest.Type, inDef bool) Object {
	switch t.Kind {
	case manifest.Nil:
		return Object{{"type", "null"}}
	case manifest.Bool:
		return Object{{"type", "boolean"}}
	case manifest.Int:
		// A sized integer (i1..i8, u1..u8: morloc 0.69's Int is i4) carries
		// its range, so that a client sees it and an out-of-range value is
		// refused as invalid params before any pool sees it; j is unbounded.
		if rg, sized := intRanges[t.Code]; sized {
			return Object{{"type", "integer"}, {"minimum", json.Number(rg.lo.String())}, {"maximum", json.Number(rg.hi.String())}}
		}
		return Object{{"type", "integer"}}
	case manifest.Float:
		if d.input {
			return Object{{"type", "number"}}
		}
		return realSchema()
	case manifest.Str:
		return Object{{"type", "string"}}
	case manifest.Any:
		return Object{}
	case manifest.List:
		o := Object{{"type", "array"}, {"items", d.walk(t.Elem, scope, inDef)}}
		if t.Len > 0 {
			o = append(o, Member{"minItems", t.Len}, Member{"maxItems", t.Len})
		}
		return o
	case manifest.Tuple:
		items := make([]any, len(t.Items))
		for i, it := range t.Items {
			items[i] = d.walk(it, scope, inDef)
		}
		return Object{{"type", "array"}, {"prefixItems", items}, {"minItems", len(items)}, {"maxItems", len(items)}}
	case manifest.Record:
		return d.record(t.Fields, scope, inDef)
	case manifest.Optional:
		return withNull(d.walk(t.Elem, scope, inDef))
	case manifest.Recursive:
		if d.scopes == nil {
			d.scopes = map[*manifest.Type][]*manifest.Type{}
		}
		if _, ok := d.scopes[t]; !ok {
			d.scopes[t] = append([]*manifest.Type(nil), scope...)
		}
		if inDef {
			return d.ref(t)
		}
		return d.walk(t.Elem, append(scope, t), false)
	case manifest.BackRef:
		for i := len(scope) - 1; i >= 0; i-- {
			if scope[i].Name == t.Name {
				return d.ref(scope[i])
			}
		}
		// ParseType accepts no back-reference without its declaration.
		return Object{}
	case manifest.Table:
		// Only shown where a schema must exist (tools with tables are
		// excluded): rows as objects, a list column showing its element type.
		cols := make([]manifest.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft := f.Type
			if ft.Kind == manifest.List && ft.Elem != nil {
				ft = ft.Elem
			}
			cols[i] = manifest.Field{Key: f.Key, Type: ft}
		}
		return Object{{"type", "array"}, {"items", d.record(cols, scope, inDef)}}
	case manifest.File, manifest.InStream, manifest.OutStream:
		// A handle's path/handle string form; such tools are excluded anyway.
		return Object{{"type", "string"}}
	}
	return Object{}
}

// ref is the $ref to the declaration decl's body under "$defs", which is
// written the first time it is needed.
func (d *schemaDefs) ref(decl *manifest.Type) Object {
	key, ok := d.keys[decl]
	if !ok {
		text := ""
		if closed(decl, nil) {
			text = decl.String()
			key, ok = d.byText[text]
		}
		if !ok {
			key = d.newKey(decl.Name)
			if d.keys == nil {
				d.keys, d.byText = map[*manifest.Type]string{}, map[string]string{}
			}
			d.keys[decl] = key
			if text != "" {
				d.byText[text] = key
			}
			at := len(d.defs)
			d.defs = append(d.defs, Member{key, Object{}}) // reserved: the body may refer to itself
			d.defs[at].Value = d.walk(decl.Elem, append(d.scopes[decl], decl), true)
		} else {
			d.keys[decl] = key
		}
	}
	return Object{{"$ref", "#/$defs/" + key}}
}

// newKey makes a "$defs" key from a declaration's name: its letters,
// digits, '_', '.' and '-' (any other byte becomes '_', so that the $ref
// needs no escaping), made unique with a suffix _2, _3, ...
func (d *schemaDefs) newKey(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	base := string(b)
	if base == "" {
		base = "_"
	}
	key := base
	for n := 2; ; n++ {
		if _, taken := d.defs.Get(key); !taken {
			return key
		}
		key = base + "_" + strconv.Itoa(n)
	}
}

// closed reports whether every back-reference in t refers to a declaration
// inside t (bound holds the names declared on the way down), so that t's
// type string alone says what it means.
func closed(t *manifest.Type, bound []string) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case manifest.BackRef:
		for _, n := range bound {
			if n == t.Name {
				return true
			}
		}
		return false
	case manifest.Recursive:
		bound = append(bound, t.Name)
	}
	if !closed(t.Elem, bound) {
		return false
	}
	for _, it := range t.Items {
		if !closed(it, bound) {
			return false
		}
	}
	for _, f := range t.Fields {
		if !closed(f.Type, bound) {
			return false
		}
	}
	return true
}

// record is the object schema of a record: every field a property,
// every non-optional field required.
func (d *schemaDefs) record(fields []manifest.Field, scope []*manifest.Type, inDef bool) Object {
	props := make(Object, 0, len(fields))
	required := []any{}
	for _, f := range fields {
		props = append(props, Member{f.Key, d.walk(f.Type, scope, inDef)})
		if !isOptional(f.Type) {
			required = append(required, f.Key)
		}
	}
	return Object{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}}
}

// nonFiniteNames are the strings that stand for NaN and the infinities
// where a Real is declared, in results and arguments alike
// (docs/spec.md §4.5).
var nonFiniteNames = [3]string{"NaN", "Infinity", "-Infinity"}

// nonFiniteArg is the number a string argument stands for where a Real is
// declared: exactly one of nonFiniteNames.
func nonFiniteArg(s string) (float64, bool) {
	switch s {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// realSchema is the schema of a Real in a result: a number, or one of the
// strings nexus writes for NaN and the infinities,
//
//	{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}
//
// so that a client that checks a result against the tool's outputSchema
// accepts the NaN nexus sends. An input schema shows a Real as morloc's
// --mcp-tools does, {"type":"number"}, and nexus validates arguments
// against its widened form (widenReals): the three strings are accepted,
// unadvertised (docs/spec.md §4.5).
func realSchema() Object { return Object{widenedReal("number")} }

// widenedReal is the "anyOf" member of a Real whose number branch has the
// type typ ("number", or ["number","null"] when optional).
func widenedReal(typ any) Member {
	enum := make([]any, len(nonFiniteNames))
	for i, n := range nonFiniteNames {
		enum[i] = n
	}
	return Member{"anyOf", []any{Object{{"type", typ}}, Object{{"enum", enum}}}}
}

// widenReals turns, in place, each Real's {"type":"number"}
// (["number","null"] when optional) in the input schema o into
// widenedReal's anyOf, so that nexus's validator, and the oracle that
// checks it, admit the non-finite strings. Only a Real maps to "number".
func widenReals(o Object) {
	each := func(v any) {
		if s, ok := v.(Object); ok {
			widenReals(s)
		}
	}
	for i, m := range o {
		switch m.Key {
		case "type":
			if m.Value == "number" || reflect.DeepEqual(m.Value, []any{"number", "null"}) {
				o[i] = widenedReal(m.Value)
			}
		case "items":
			each(m.Value)
		case "properties", "$defs":
			for _, p := range m.Value.(Object) {
				each(p.Value)
			}
		case "prefixItems", "anyOf":
			for _, e := range m.Value.([]any) {
				each(e)
			}
		}
	}
}

// isNonFiniteEnum reports whether o is realSchema's second branch.
func isNonFiniteEnum(o Object) bool {
	if len(o) != 1 || o[0].Key != "enum" {
		return false
	}
	enum, ok := o[0].Value.([]any)
	if !ok || len(enum) != len(nonFiniteNames) {
		return false
	}
	for i, n := range nonFiniteNames {
		if enum[i] != n {
			return false
		}
	}
	return true
}

// withNull adds "null" to a schema's type (docs/spec.md §4.5, `?T`). A
// $ref has no type of its own: it becomes
// {"anyOf":[{"$ref":...},{"type":"null"}]}. A widened Real's schema takes
// null in its number branch. A schema that takes anything ({}, for `*`)
// takes null already.
func withNull(o Object) Object {
	v, ok := o.Get("type")
	if !ok {
		if _, ref := o.Get("$ref"); ref {
			return Object{{"anyOf", []any{o, Object{{"type", "null"}}}}}
		}
		if alts, ok := o.Get("anyOf"); ok {
			if branches, _ := alts.([]any); len(branches) == 2 {
				number, _ := branches[0].(Object)
				if enum, _ := branches[1].(Object); number != nil && isNonFiniteEnum(enum) {
					return o.set("anyOf", []any{withNull(number), enum})
				}
			}
		}
		return o
	}
	switch x := v.(type) {
	case string:
		if x == "null" {
			return o
		}
		return o.set("type", []any{x, "null"})
	case []any:
		for _, e := range x {
			if e == "null" {
				return o
			}
		}
		return o.set("type", append(append([]any{}, x...), "null"))
	}
	return o
}

// isOptional reports whether t (after recursive declarations) is `?T`.
func isOptional(t *manifest.Type) bool {
	u := t.Unwrap()
	return u != nil && u.Kind == manifest.Optional
}

// isStrMap reports whether t is a Map with string keys as morloc encodes it
// for Python: a `<dict>`-hinted list of (Str, V) pairs. Such values travel to
// pools as JSON objects and come back to clients as pairs.
func isStrMap(t *manifest.Type) bool {
	if !t.IsMap() {
		return false
	}
	e := t.Elem.Unwrap()
	k := e.Items[0].Unwrap()
	return k != nil && k.Kind == manifest.Str
}
