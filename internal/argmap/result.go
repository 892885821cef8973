package argmap

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// ResultValue turns a pool's result into the value a client sees, compact,
// in one pass over the pool's JSON: a string-keyed Map (sent by pools as an
// object) becomes the list of [key, value] pairs its type declares, at any
// depth; numbers are written in one canonical form for their declared type
// (a Real 1.0 as 1, 0.1 as 0.1, an Int 2.0 as 2), so that Python, R and C++
// pools give the same text for the same value; the arrays of the result
// (docs/pool-protocol.md, "Arrays") are written in their places as the same
// numbers would be; everything else passes through unchanged.
func ResultValue(ret *manifest.Return, v ndarray.Value) (json.RawMessage, error) {
	b := v.JSON
	var t *manifest.Type
	if ret != nil {
		t = ret.T
	}
	w := &resultWriter{b: b, arrays: v.Arrays, out: make([]byte, 0, len(b)+arraysSize(t, v.Arrays))}
	start := jsontext.SkipSpace(b, 0)
	end, err := w.walk(t, start)
	if err == nil {
		if rest := jsontext.SkipSpace(b, end); rest != len(b) {
			err = fmt.Errorf("invalid character %q after top-level value", b[rest])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("result is not valid JSON: %w", err)
	}
	if w.placed != len(w.arrays) {
		return nil, fmt.Errorf("result has %d arrays, %d of them at no null in the value", len(w.arrays), len(w.arrays)-w.placed)
	}
	return json.RawMessage(w.out), nil
}

// arraysSize estimates the JSON size of a result's arrays, to size the
// output once.
func arraysSize(t *manifest.Type, arrs []ndarray.Array) int {
	kind := ndarray.Real
	if _, k, ok := numericNest(t); ok {
		kind = k
	}
	n := 0
	for i := range arrs {
		n += ndarray.JSONSize(&arrs[i], kind)
	}
	return n
}

// resultWriter writes a result in client form from the pool's JSON.
type resultWriter struct {
	b      []byte
	out    []byte
	scope  []scoped // enclosing recursive declarations, innermost last
	arrays []ndarray.Array
	placed int        // arrays written so far
	path   []pathElem // where the value being written is, while arrays remain
	depth  int        // nesting of walk calls: a recursive type cannot make it unbounded
}

type scoped struct {
	decl   *manifest.Type
	hasMap bool
}

// rewrites reports whether a value of type t can hold a string-keyed Map
// or a number (what the writer rewrites), following back-references to the
// declarations in scope.
func (w *resultWriter) rewrites(t *manifest.Type) bool {
	if t == nil {
		return false
	}
	if isStrMap(t) || t.Kind == manifest.Int || t.Kind == manifest.Float {
		return true
	}
	if t.Kind == manifest.BackRef {
		for i := len(w.scope) - 1; i >= 0; i-- {
			if w.scope[i].decl.Name == t.Name {
				return w.scope[i].hasMap
			}
		}
		// A reference to the declaration being examined adds nothing new.
		return false
	}
	if w.rewrites(t.Elem) {
		return true
	}
	for _, it := range t.Items {
		if w.rewrites(it) {
			return true
		}
	}
	for _, f := range t.Fields {
		if w.rewrites(f.Type) {
			return true
		}
	}
	return false
}

// arrayHere returns the array whose path is where the writer is, if any.
func (w *resultWriter) arrayHere() *ndarray.Array {
	if w.placed == len(w.arrays) {
		return nil
	}
next:
	for i := range w.arrays {
		a := &w.arrays[i]
		if len(a.Path) != len(w.path) {
			continue
		}
		for k, p := range a.Path {
			switch x := p.(type) {
			case int:
				if w.path[k].idx != x {
					continue next
				}
			case string:
				if w.path[k].idx >= 0 || w.path[k].key != x {
					continue next
				}
			}
		}
		return a
	}
	return nil
}

func (w *resultWriter) compact(i int) (int, error) {
	var end int
	var err error
	w.out, end, err = jsontext.AppendCompact(w.out, w.b, i)
	return end, err
}

func (w *resultWriter) walk(t *manifest.Type, i int) (int, error) {
	b := w.b
	if i >= len(b) {
		return i, fmt.Errorf("unexpected end of JSON input")
	}
	if w.depth++; w.depth > jsontext.MaxDepth {
		return i, fmt.Errorf("exceeded max depth")
	}
	defer func() { w.depth-- }()
	if len(w.arrays) > 0 && b[i] == 'n' {
		if a := w.arrayHere(); a != nil {
			end, err := jsontext.Value(b, i)
			if err != nil || string(b[i:end]) != "null" {
				return end, fmt.Errorf("array at %v: its place holds %.20s, not null", a.Path, b[i:])
			}
			kind := ndarray.Real
			if _, k, ok := numericNest(t); ok {
				kind = k
			} else if a.DType != ndarray.F8 {
				kind = ndarray.Int
			}
			if w.out, err = ndarray.AppendJSON(w.out, a, kind); err != nil {
				return end, err
			}
			w.placed++
			return end, nil
		}
	}
	if t == nil {
		return w.compact(i)
	}
	if t.Kind == manifest.BackRef {
		for k := len(w.scope) - 1; k >= 0; k-- {
			if w.scope[k].decl.Name == t.Name {
				return w.walk(w.scope[k].decl, i)
			}
		}
	}
	if !w.rewrites(t) && len(w.arrays) == w.placed {
		return w.compact(i)
	}
	switch t.Kind {
	case manifest.Int, manifest.Float:
		if c := b[i]; c == '-' || (c >= '0' && c <= '9') {
			end, err := jsontext.Number(b, i)
			if err != nil {
				return end, err
			}
			w.number(t, b[i:end])
			return end, nil
		}
	case manifest.Recursive:
		w.scope = append(w.scope, scoped{t, w.rewrites(t.Elem)})
		end, err := w.walk(t.Elem, i)
		w.scope = w.scope[:len(w.scope)-1]
		return end, err
	case manifest.Optional:
		return w.walk(t.Elem, i)
	case manifest.List:
		if b[i] == '{' && isStrMap(t) {
			return w.pairs(t.Elem.Unwrap(), i)
		}
		if b[i] == '[' {
			if e := t.Elem; (e.Kind == manifest.Int || e.Kind == manifest.Float) && w.placed == len(w.arrays) {
				return w.numbers(e, i)
			}
			return w.elements(i, func(int) *manifest.Type { return t.Elem })
		}
	case manifest.Tuple:
		if b[i] == '[' {
			return w.elements(i, func(k int) *manifest.Type {
				if k < len(t.Items) {
					return t.Items[k]
				}
				return nil
			})
		}
	case manifest.Record:
		if b[i] == '{' {
			return w.record(t, i)
		}
	}
	// The value does not have the shape its type declares: pass it on as is.
	return w.compact(i)
}

// number writes a numeric result canonically: an Int as its integer digits
// (exact at any size), a Real as the shortest text that reads back as the
// same float64, as encoding/json writes it. A number that does not fit its
// type (an Int 2.5, a Real 1e999) is copied as the pool wrote it.
func (w *resultWriter) number(t *manifest.Type, tok []byte) {
	if t.Kind == manifest.Int {
		if jsontext.IsIntLiteral(tok) {
			w.out = append(w.out, tok...)
			return
		}
		if out, msg := normalizeInt(string(tok), "j"); msg == "" {
			w.out = append(w.out, out...)
			return
		}
	} else if f, err := strconv.ParseFloat(string(tok), 64); err == nil {
		w.out = ndarray.AppendReal(w.out, f)
		return
	}
	w.out = append(w.out, tok...)
}

// numbers writes a list of numbers of type t in one loop: the JSON result of
// a large list (from a pool that sends it as JSON) goes through here. An
// element that is not a number is written by walk, as anywhere else.
func (w *resultWriter) numbers(t *manifest.Type, i int) (int, error) {
	b := w.b
	w.out = append(w.out, '[')
	i = jsontext.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		w.out = append(w.out, ']')
		return i + 1, nil
	}
	for first := true; ; first = false {
		if !first {
			w.out = append(w.out, ',')
		}
		var end int
		var err error
		if i < len(b) && (b[i]-'0' < 10 || b[i] == '-') {
			var integer bool
			if end, integer, err = jsontext.NumberKind(b, i); err != nil {
				return end, err
			}
			if integer && t.Kind == manifest.Int {
				w.out = append(w.out, b[i:end]...) // the common case: as it is
			} else {
				w.number(t, b[i:end])
			}
		} else if end, err = w.walk(t, i); err != nil {
			return end, err
		}
		i = end
		if i < len(b) && b[i] <= ' ' {
			i = jsontext.SkipSpace(b, i)
		}
		if i < len(b) && b[i] == ',' {
			i++
			if i < len(b) && b[i] <= ' ' {
				i = jsontext.SkipSpace(b, i)
			}
			continue
		}
		if i < len(b) && b[i] == ']' {
			w.out = append(w.out, ']')
			return i + 1, nil
		}
		return i, fmt.Errorf("expected ',' or ']' after array element at offset %d", i)
	}
}

// elements writes the array at b[i], each element by the type elem gives
// (nil: copied as it is).
func (w *resultWriter) elements(i int, elem func(int) *manifest.Type) (int, error) {
	w.out = append(w.out, '[')
	mark := len(w.path)
	track := w.placed < len(w.arrays)
	k := 0
	end, err := jsontext.Array(w.b, i, func(vs, ve int) error {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		if track {
			w.path = append(w.path[:mark], pathElem{idx: k})
		}
		et := elem(k)
		k++
		if et == nil {
			_, err := w.compact(vs)
			return err
		}
		_, err := w.walk(et, vs)
		return err
	})
	w.path = w.path[:mark]
	w.out = append(w.out, ']')
	return end, err
}

// record writes an object member by member, in the pool's order, each
// field by its declared type.
func (w *resultWriter) record(t *manifest.Type, i int) (int, error) {
	w.out = append(w.out, '{')
	mark := len(w.path)
	track := w.placed < len(w.arrays)
	first := true
	end, err := jsontext.Object(w.b, i, func(key []byte, escaped bool, vs, ve int) error {
		if !first {
			w.out = append(w.out, ',')
		}
		first = false
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		w.out = appendString(w.out, name)
		w.out = append(w.out, ':')
		if track {
			w.path = append(w.path[:mark], pathElem{key: name, idx: -1})
		}
		for _, f := range t.Fields {
			if f.Key == name {
				_, err := w.walk(f.Type, vs)
				return err
			}
		}
		_, err := w.compact(vs)
		return err
	}, 1)
	w.path = w.path[:mark]
	w.out = append(w.out, '}')
	return end, err
}

// pairs writes a Map sent as an object as the [key, value] pairs its type
// declares, in the pool's order.
func (w *resultWriter) pairs(pair *manifest.Type, i int) (int, error) {
	w.out = append(w.out, '[')
	mark := len(w.path)
	track := w.placed < len(w.arrays)
	first := true
	end, err := jsontext.Object(w.b, i, func(key []byte, escaped bool, vs, ve int) error {
		if !first {
			w.out = append(w.out, ',')
		}
		first = false
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		w.out = append(w.out, '[')
		w.out = appendString(w.out, name)
		w.out = append(w.out, ',')
		if track {
			w.path = append(w.path[:mark], pathElem{key: name, idx: -1})
		}
		_, err := w.walk(pair.Items[1], vs)
		w.out = append(w.out, ']')
		return err
	}, 1)
	w.path = w.path[:mark]
	w.out = append(w.out, ']')
	return end, err
}
