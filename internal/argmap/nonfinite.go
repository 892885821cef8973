package argmap

import (
	"encoding/json"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// nonFiniteText is how a CLI Real argument of nan, inf or -inf is held in
// a call's JSON until nonFiniteArrays moves it out: the wire's strings
// (docs/internals.md, "Values").
func nonFiniteText(f float64) json.RawMessage {
	return json.RawMessage(ndarray.ClientSpelling.Append(nil, f))
}

// nonFiniteArrays moves the non-finite Reals among a call's arguments
// out of the JSON, which has no numbers for them, into rank-0 f8 arrays:
// a pool that takes f8 arrays gets the double itself, and one that does
// not gets the wire's string (ndarray.AppendPoolJSON). Only a Real's place
// is looked at, so a string argument "NaN" stays a string. The CLI calls
// it for a plain Real and a record group's Real field (JSON arguments the
// CLI took whole cannot hold one); a tools/call, for the "NaN",
// "Infinity" and "-Infinity" any Real may be (docs/spec.md §4.5).
func nonFiniteArrays(c *manifest.Command, args []json.RawMessage) ([]json.RawMessage, []ndarray.Array) {
	var arrays []ndarray.Array
	for i, raw := range args {
		if i >= len(c.Args) || len(raw) == 0 {
			continue
		}
		w := nonFiniteWalker{raw: raw}
		w.collect(jsontext.SkipSpace(raw, 0), argType(&c.Args[i]), []any{i}, 0)
		if len(w.found) == 0 {
			continue
		}
		out := make([]byte, 0, len(raw))
		last := 0
		for _, s := range w.found {
			out = append(append(out, raw[last:s.start]...), "null"...)
			last = s.end
			arrays = append(arrays, ndarray.Scalar(s.path, s.f))
		}
		args[i] = append(out, raw[last:]...)
	}
	return args, arrays
}

type nonFiniteSpot struct {
	path       []any
	start, end int
	f          float64
}

// nonFiniteWalker finds, in document order, the strings standing for
// non-finite numbers at the Real places of a value in pool form.
type nonFiniteWalker struct {
	raw   []byte
	scope []*manifest.Type // enclosing recursive declarations, innermost last
	found []nonFiniteSpot
}

// collect walks the value at raw[i] of type t, found at path.
func (w *nonFiniteWalker) collect(i int, t *manifest.Type, path []any, depth int) {
	raw := w.raw
	if t == nil || i >= len(raw) || depth > jsontext.MaxDepth {
		return
	}
	at := func(seg any) []any { return append(append([]any(nil), path...), seg) }
	switch t.Kind {
	case manifest.Recursive:
		w.scope = append(w.scope, t)
		w.collect(i, t.Elem, path, depth+1)
		w.scope = w.scope[:len(w.scope)-1]
	case manifest.BackRef:
		for k := len(w.scope) - 1; k >= 0; k-- {
			if w.scope[k].Name == t.Name {
				w.collect(i, w.scope[k], path, depth+1)
				return
			}
		}
	case manifest.Float:
		if raw[i] != '"' {
			return
		}
		end, escaped, err := jsontext.String(raw, i)
		if err != nil || escaped {
			return
		}
		if f, ok := ndarray.NonFinite(string(raw[i+1 : end-1])); ok {
			w.found = append(w.found, nonFiniteSpot{path: path, start: i, end: end, f: f})
		}
	case manifest.Optional:
		w.collect(i, t.Elem, path, depth+1)
	case manifest.List, manifest.Tuple:
		if raw[i] == '{' && isStrMap(t) {
			// A string-keyed Map goes to a pool as an object.
			vt := t.Elem.Unwrap().Items[1]
			w.members(i, depth, func(string) *manifest.Type { return vt }, at)
			return
		}
		if raw[i] != '[' {
			return
		}
		k := 0
		_, _ = jsontext.ArrayItems(raw, i, func(vs int) (int, error) {
			et := t.Elem
			if t.Kind == manifest.Tuple {
				et = nil
				if k < len(t.Items) {
					et = t.Items[k]
				}
			}
			w.collect(vs, et, at(k), depth+1)
			k++
			return jsontext.Value(raw, vs)
		}, 1)
	case manifest.Record:
		if raw[i] != '{' {
			return
		}
		w.members(i, depth, func(name string) *manifest.Type {
			for _, f := range t.Fields {
				if f.Key == name {
					return f.Type
				}
			}
			return nil
		}, at)
	}
}

// members walks the object at raw[i], each member's value by the type
// typeOf gives its key.
func (w *nonFiniteWalker) members(i, depth int, typeOf func(string) *manifest.Type, at func(any) []any) {
	raw := w.raw
	_, _ = jsontext.ObjectMembers(raw, i, func(key []byte, escaped bool, vs int) (int, error) {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		w.collect(vs, typeOf(name), at(name), depth+1)
		return jsontext.Value(raw, vs)
	}, 1)
}
