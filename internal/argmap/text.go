package argmap

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Some requests give a command its arguments as strings, not as JSON values:
// MCP prompt arguments are strings, and so are the variables of a URI
// template (docs/manifest.md, "Resources and prompts"). Each is read by its
// argument's type, as the command line reads a token (a Str is taken as it
// is, an Int must be an integer, ...), and the whole then goes through
// ToPositional like any tools/call's arguments.

// Property describes one property of a tool's input, as a prompt lists its
// arguments and a completion looks them up.
type Property struct {
	Name, Description string
	Required          bool
	// Type is the argument's (or group field's) type; nil for _render.
	Type *manifest.Type
	// Enum are the values the property takes when it has a fixed set
	// (_render's projections, a Bool's true and false); nil otherwise.
	Enum []string
}

// Properties lists the tool's input properties in schema order.
func (t *Tool) Properties() []Property {
	pv, _ := t.InputSchema.Get("properties")
	props, _ := pv.(Object)
	rv, _ := t.InputSchema.Get("required")
	var required []string
	switch r := rv.(type) {
	case []string:
		required = r
	case []any:
		for _, x := range r {
			if s, ok := x.(string); ok {
				required = append(required, s)
			}
		}
	}
	types := t.propertyTypes()
	out := make([]Property, 0, len(props))
	for _, m := range props {
		p := Property{Name: m.Key, Required: slices.Contains(required, m.Key), Type: types[m.Key]}
		if o, ok := m.Value.(Object); ok {
			if d, ok := o.Get("description"); ok {
				p.Description, _ = d.(string)
			}
			if e, ok := o.Get("enum"); ok {
				if list, ok := e.([]any); ok {
					for _, x := range list {
						if s, ok := x.(string); ok {
							p.Enum = append(p.Enum, s)
						}
					}
				}
			}
		}
		if p.Enum == nil && p.Type != nil && p.Type.Unwrap().Kind == manifest.Bool {
			p.Enum = []string{"false", "true"}
		}
		out = append(out, p)
	}
	return out
}

// propertyTypes maps each property to the type of what it fills.
func (t *Tool) propertyTypes() map[string]*manifest.Type {
	types := map[string]*manifest.Type{}
	for _, s := range t.plan.slots {
		switch {
		case s.kind != manifest.KindGrp || s.whole:
			types[s.prop] = s.arg.T
		default:
			for _, f := range s.fields {
				types[f.key] = f.t
			}
		}
	}
	return types
}

// ArgumentsFromText builds a tools/call arguments object from string
// values by property name, each read as its property's type. A value that
// is not of its type is an *ArgError naming the property; a name that is
// no property is passed on, for ToPositional to refuse.
func (t *Tool) ArgumentsFromText(values map[string]string) (json.RawMessage, error) {
	types := t.propertyTypes()
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		text := values[name]
		typ := types[name]
		var v json.RawMessage
		switch {
		case typ == nil: // _render, or no property at all
			v = quoteRaw(text)
		case scalar(typ):
			var msg string
			if v, msg = parseText(text, typ, true); msg != "" {
				return nil, &ArgError{Tool: t.Name, Arg: name, Msg: msg}
			}
		case json.Valid([]byte(text)):
			v = json.RawMessage(text) // a list or record written as JSON, in MCP's form
		default:
			return nil, &ArgError{Tool: t.Name, Arg: name, Msg: "expected JSON (" + expectedName(typ) + "), got " + string(quoteRaw(text))}
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

// scalar reports whether t (an optional one too) is read from plain text.
func scalar(t *manifest.Type) bool {
	u := t.Unwrap()
	if u.Kind == manifest.Optional {
		u = u.Elem.Unwrap()
	}
	switch u.Kind {
	case manifest.Str, manifest.Bool, manifest.Int, manifest.Float, manifest.Nil:
		return true
	}
	return false
}
