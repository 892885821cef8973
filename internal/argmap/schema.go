package argmap

import (
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// typeSchema maps a parsed type to JSON Schema by the table of SPEC §4.5.
// Hints are skipped, so a Map (`<dict>at2sj`) shows as the list of 2-tuples
// it is encoded as.
func typeSchema(t *manifest.Type) Object {
	switch t.Kind {
	case manifest.Nil:
		return Object{{"type", "null"}}
	case manifest.Bool:
		return Object{{"type", "boolean"}}
	case manifest.Int:
		return Object{{"type", "integer"}}
	case manifest.Float:
		return Object{{"type", "number"}}
	case manifest.Str:
		return Object{{"type", "string"}}
	case manifest.List:
		return Object{{"type", "array"}, {"items", typeSchema(t.Elem)}}
	case manifest.Tuple:
		items := make([]any, len(t.Items))
		for i, it := range t.Items {
			items[i] = typeSchema(it)
		}
		return Object{{"type", "array"}, {"prefixItems", items}, {"minItems", len(items)}, {"maxItems", len(items)}}
	case manifest.Record:
		return recordSchema(t.Fields)
	case manifest.Optional:
		return withNull(typeSchema(t.Elem))
	case manifest.Recursive:
		return typeSchema(t.Elem)
	case manifest.BackRef:
		// Expanding the reference would not terminate; the pool checks the rest.
		return Object{{"type", "object"}}
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
		return Object{{"type", "array"}, {"items", recordSchema(cols)}}
	case manifest.File, manifest.InStream, manifest.OutStream:
		// A handle's path/handle string form; such tools are excluded anyway.
		return Object{{"type", "string"}}
	}
	return Object{}
}

// recordSchema is the object schema of a record: every field a property,
// every non-optional field required.
func recordSchema(fields []manifest.Field) Object {
	props := make(Object, 0, len(fields))
	required := []any{}
	for _, f := range fields {
		props = append(props, Member{f.Key, typeSchema(f.Type)})
		if !isOptional(f.Type) {
			required = append(required, f.Key)
		}
	}
	return Object{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}}
}

// withNull adds "null" to a schema's type (SPEC §4.5, `?T`).
func withNull(o Object) Object {
	v, ok := o.Get("type")
	if !ok {
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
