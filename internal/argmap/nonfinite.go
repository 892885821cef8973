package argmap

import (
	"encoding/json"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// nonFiniteText is how a CLI Real argument of nan, inf or -inf is held in
// a call's JSON until nonFiniteArrays moves it out: the wire's strings
// (docs/pool-protocol.md, "NaN and infinity").
func nonFiniteText(f float64) json.RawMessage {
	return json.RawMessage(ndarray.ClientSpelling.Append(nil, f))
}

// nonFiniteArrays moves the non-finite Reals among a CLI call's arguments
// out of the JSON, which has no numbers for them, into rank-0 f8 arrays:
// a pool that takes f8 arrays gets the double itself, and one that does
// not gets the wire's string (ndarray.AppendPoolJSON). Only a Real's place
// is looked at, so a string argument "NaN" stays a string. JSON arguments
// the CLI took whole cannot hold one; a plain Real and a record group's
// Real field can.
func nonFiniteArrays(c *manifest.Command, args []json.RawMessage) ([]json.RawMessage, []ndarray.Array) {
	var arrays []ndarray.Array
	for i, raw := range args {
		if i >= len(c.Args) || len(raw) == 0 {
			continue
		}
		var found []nonFiniteSpot
		collectNonFinite(raw, jsontext.SkipSpace(raw, 0), argType(&c.Args[i]), []any{i}, &found, 0)
		if len(found) == 0 {
			continue
		}
		out := make([]byte, 0, len(raw))
		last := 0
		for _, s := range found {
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

// collectNonFinite finds, in document order, the strings standing for
// non-finite numbers at the Real places of the value at raw[i] of type t.
func collectNonFinite(raw []byte, i int, t *manifest.Type, path []any, found *[]nonFiniteSpot, depth int) {
	t = t.Unwrap()
	if t == nil || i >= len(raw) || depth > jsontext.MaxDepth {
		return
	}
	at := func(seg any) []any { return append(append([]any(nil), path...), seg) }
	switch t.Kind {
	case manifest.Float:
		end, escaped, err := jsontext.String(raw, i)
		if raw[i] != '"' || err != nil || escaped {
			return
		}
		if f, ok := ndarray.NonFinite(string(raw[i+1 : end-1])); ok {
			*found = append(*found, nonFiniteSpot{path: path, start: i, end: end, f: f})
		}
	case manifest.Optional:
		collectNonFinite(raw, i, t.Elem, path, found, depth+1)
	case manifest.List, manifest.Tuple:
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
			collectNonFinite(raw, vs, et, at(k), found, depth+1)
			k++
			return jsontext.Value(raw, vs)
		}, 1)
	case manifest.Record:
		if raw[i] != '{' {
			return
		}
		_, _ = jsontext.ObjectMembers(raw, i, func(key []byte, escaped bool, vs int) (int, error) {
			name := string(key[1 : len(key)-1])
			if escaped {
				name = jsontext.Unquote(key)
			}
			for _, f := range t.Fields {
				if f.Key == name {
					collectNonFinite(raw, vs, f.Type, at(name), found, depth+1)
				}
			}
			return jsontext.Value(raw, vs)
		}, 1)
	}
}
