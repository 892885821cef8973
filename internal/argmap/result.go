package argmap

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// TypeMismatch is a result that does not have its declared return type
// (every result is checked before it reaches a client, so that a client
// can trust a value to have its type; docs/spec.md §4.7). Its
// Error is the part of a message after "'cmd' returned ".
type TypeMismatch struct {
	Found    string    // "a string", "the number 2.5", "an object without its field 'age'"
	Expected string    // "integer"; "" when Found says it all
	path     valuePath // where in the value, innermost last
}

func (e *TypeMismatch) Error() string {
	msg := e.Found
	if p := e.Path(); p != "" {
		msg += " at " + p
	}
	if e.Expected != "" {
		msg += " where its type says " + e.Expected
	}
	return msg
}

// Path is where in the value the mismatch is: "" for the value itself,
// else as "[2].name".
func (e *TypeMismatch) Path() string { return e.path.String() }

// under records that the mismatch err is inside element or field seg; the
// path is built only for a value that fails, as the error goes up.
func under(err error, seg pathSeg) error {
	if tm, ok := err.(*TypeMismatch); ok {
		tm.path = append(valuePath{seg}, tm.path...)
	}
	return err
}

func mismatch(found, expected string) error { return &TypeMismatch{Found: found, Expected: expected} }

// found names what a JSON value is, for a message.
func found(tok []byte) string {
	switch tok[0] {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	if jsontext.IsIntLiteral(tok) {
		return "the integer " + shortText(string(tok))
	}
	return "the number " + shortText(string(tok))
}

// ResultValue turns a pool's result into the value a client sees, compact,
// in one pass over the pool's JSON: a string-keyed Map (sent by pools as an
// object) becomes the list of [key, value] pairs its type declares, at any
// depth; numbers are written in one canonical form for their declared type
// (a Real 1.0 as 1, 0.1 as 0.1, an Int 2.0 as 2), so that Python, R and C++
// pools give the same text for the same value; the arrays of the result
// (docs/internals.md, "Arrays") are written in their places as the same
// numbers would be. On the way, the value is checked against its type: a
// value that does not have it gives a *TypeMismatch. Without a type the
// value passes through as it is. A NaN or an infinity where a Real is
// declared (a pool sends the strings "NaN", "Infinity", "-Infinity") is
// written as one of those strings (docs/internals.md, "Values").
func ResultValue(ret *manifest.Return, v ndarray.Value) (json.RawMessage, error) {
	return resultValue(ret, v, ndarray.ClientSpelling)
}

// CLIResultValue is ResultValue for the CLI, which writes NaN and the
// infinities as morloc does: "nan", "inf", "-inf" (docs/spec.md §7.2).
func CLIResultValue(ret *manifest.Return, v ndarray.Value) (json.RawMessage, error) {
	return resultValue(ret, v, ndarray.MorlocSpelling)
}

func resultValue(ret *manifest.Return, v ndarray.Value, sp *ndarray.Spelling) (json.RawMessage, error) {
	var t *manifest.Type
	if ret != nil {
		t = ret.T
	}
	w := &resultWriter{b: v.JSON, arrays: v.Arrays, spelling: sp, out: make([]byte, 0, len(v.JSON)+arraysSize(t, v.Arrays))}
	if err := w.run(t); err != nil {
		return nil, err
	}
	return json.RawMessage(w.out), nil
}

// ResultText is a result checked against its type (as ResultValue checks
// it) whose text is written only as it goes out, a piece at a time, its
// arrays read from where the pool's frames left them: the text of a large
// result never exists whole beside them (otherwise a 100 MB list of
// integers would need 104 MB more).
type ResultText struct {
	text  []byte // the text with the arrays left out
	holes []hole // where each array goes, in the order of the text
	size  int
	sp    *ndarray.Spelling
}

// hole is an array's place in a ResultText.
type hole struct {
	at   int // offset in text
	a    *ndarray.Array
	kind ndarray.Number
}

// LazyResultValue is ResultValue, its text written later by WriteTo. A
// result that does not have its type, or cannot be read, is refused here,
// as by ResultValue, before anything is written.
func LazyResultValue(ret *manifest.Return, v ndarray.Value) (*ResultText, error) {
	var t *manifest.Type
	if ret != nil {
		t = ret.T
	}
	w := &resultWriter{b: v.JSON, arrays: v.Arrays, spelling: ndarray.ClientSpelling, lazy: true, out: make([]byte, 0, len(v.JSON))}
	if err := w.run(t); err != nil {
		return nil, err
	}
	return &ResultText{text: w.out, holes: w.holes, size: len(w.out) + arraysSize(t, v.Arrays), sp: w.spelling}, nil
}

// Size is about the length of the text: exact without arrays, estimated
// with them (ndarray.JSONSize).
func (r *ResultText) Size() int { return r.size }

// WriteTo writes the text to emit in pieces of about piece bytes, each
// valid only until emit returns; the arrays' text is never whole.
func (r *ResultText) WriteTo(piece int, emit func([]byte) error) error {
	from := 0
	for _, h := range r.holes {
		if h.at > from {
			if err := emit(r.text[from:h.at]); err != nil {
				return err
			}
		}
		from = h.at
		if err := ndarray.WriteJSON(h.a, h.kind, r.sp, piece, emit); err != nil {
			return err
		}
	}
	if from < len(r.text) {
		return emit(r.text[from:])
	}
	return nil
}

// run writes the value of type t, checked, into w.out.
func (w *resultWriter) run(t *manifest.Type) error {
	b := w.b
	start := jsontext.SkipSpace(b, 0)
	end, err := w.walk(t, start)
	if err == nil {
		if rest := jsontext.SkipSpace(b, end); rest != len(b) {
			err = fmt.Errorf("invalid character %q after top-level value", b[rest])
		}
	}
	if tm, ok := err.(*TypeMismatch); ok {
		if !json.Valid(b) { // found before the bad JSON after it: that is the worse fault
			return fmt.Errorf("result is not valid JSON: %w", json.Unmarshal(b, new(any)))
		}
		return tm
	}
	if err != nil {
		return fmt.Errorf("result is not valid JSON: %w", err)
	}
	if w.placed != len(w.arrays) {
		return fmt.Errorf("result has %d arrays, %d of them at no null in the value", len(w.arrays), len(w.arrays)-w.placed)
	}
	return nil
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
	placed int            // arrays written so far
	path   []ndarray.Step // where the value being written is, while arrays remain
	depth  int            // nesting of walk calls: a recursive type cannot make it unbounded
	// spelling writes a Real's NaN and infinities.
	spelling *ndarray.Spelling
	// lazy leaves the arrays out of out, checked, their places in holes
	// (LazyResultValue).
	lazy  bool
	holes []hole
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
	return ndarray.At(w.arrays, w.path)
}

func (w *resultWriter) compact(i int) (int, error) {
	var end int
	var err error
	w.out, end, err = jsontext.AppendCompact(w.out, w.b, i)
	return end, err
}

func (w *resultWriter) walk(t *manifest.Type, i int) (int, error) {
	if i >= len(w.b) {
		return i, fmt.Errorf("unexpected end of JSON input")
	}
	if w.depth++; w.depth > jsontext.MaxDepth {
		return i, fmt.Errorf("exceeded max depth")
	}
	end, err := w.value(t, i) // no defer: walk runs once per value
	w.depth--
	return end, err
}

func (w *resultWriter) value(t *manifest.Type, i int) (int, error) {
	b := w.b
	if t != nil && t.Kind == manifest.Any {
		t = nil // `*`: any value, passed as it is
	}
	if len(w.arrays) > 0 && b[i] == 'n' {
		if a := w.arrayHere(); a != nil {
			return w.array(t, a, i)
		}
	}
	if t == nil {
		return w.compact(i)
	}
	c := b[i]
	switch t.Kind {
	case manifest.BackRef:
		for k := len(w.scope) - 1; k >= 0; k-- {
			if w.scope[k].decl.Name == t.Name {
				return w.walk(w.scope[k].decl, i)
			}
		}
		return w.compact(i) // a reference to nothing in scope: nothing to check against
	case manifest.Str:
		if c == '"' {
			end, _, err := jsontext.String(b, i)
			if err == nil {
				w.out = append(w.out, b[i:end]...)
			}
			return end, err
		}
	case manifest.Nil, manifest.Bool:
		if c == 'n' && t.Kind == manifest.Nil || (c == 't' || c == 'f') && t.Kind == manifest.Bool {
			end, err := jsontext.Value(b, i)
			if err == nil {
				w.out = append(w.out, b[i:end]...)
			}
			return end, err
		}
	case manifest.Int, manifest.Float:
		if c == '-' || (c >= '0' && c <= '9') {
			end, integer, err := jsontext.NumberKind(b, i)
			if err != nil {
				return end, err
			}
			return end, w.number(t, b[i:end], integer)
		}
		if c == '"' && t.Kind == manifest.Float {
			end, escaped, err := jsontext.String(b, i)
			if err != nil {
				return end, err
			}
			if f, ok := ndarray.NonFinite(string(b[i+1 : end-1])); ok && !escaped {
				w.out = w.spelling.Append(w.out, f)
				return end, nil
			}
			return end, mismatch(found(b[i:end]), expectedName(t))
		}
	case manifest.Recursive:
		w.scope = append(w.scope, scoped{t, w.rewrites(t.Elem)})
		end, err := w.walk(t.Elem, i)
		w.scope = w.scope[:len(w.scope)-1]
		return end, err
	case manifest.Optional:
		if c == 'n' {
			return w.compact(i)
		}
		return w.walk(t.Elem, i)
	case manifest.List:
		if c == '[' || c == '{' && isStrMap(t) {
			return w.list(t, i)
		}
	case manifest.Tuple:
		if c == '[' {
			n := 0
			end, err := w.elements(i, func(k int) *manifest.Type {
				n++
				if k < len(t.Items) {
					return t.Items[k]
				}
				return nil
			})
			if err == nil && n != len(t.Items) {
				err = mismatch(fmt.Sprintf("an array of %d items", n), fmt.Sprintf("a tuple of exactly %d", len(t.Items)))
			}
			return end, err
		}
	case manifest.Record:
		if c == '{' {
			return w.record(t, i)
		}
	default:
		// Tables and handles: their commands are not tools; nothing to check.
		return w.compact(i)
	}
	end, err := jsontext.Value(b, i)
	if err != nil {
		return end, err
	}
	return end, mismatch(found(b[i:end]), expectedName(t))
}

// list writes the list at b[i] (a Map sent as an object, or an array),
// checking a fixed-length list's length once its elements are written.
func (w *resultWriter) list(t *manifest.Type, i int) (end int, err error) {
	n := 0
	switch {
	case w.b[i] == '{':
		n, end, err = w.pairs(t.Elem.Unwrap(), i)
	case (t.Elem.Kind == manifest.Int || t.Elem.Kind == manifest.Float) && w.placed == len(w.arrays):
		n, end, err = w.numbers(t.Elem, i)
	default:
		end, err = w.elements(i, func(int) *manifest.Type {
			n++
			return t.Elem
		})
	}
	if err == nil && t.Len > 0 && n != t.Len {
		err = mismatch(fmt.Sprintf("an array of %d items", n), fmt.Sprintf("a list of exactly %d", t.Len))
	}
	return end, err
}

// array writes the result array a, in the value's place at b[i], checked
// against t.
func (w *resultWriter) array(t *manifest.Type, a *ndarray.Array, i int) (int, error) {
	end, err := jsontext.Value(w.b, i)
	if err != nil || string(w.b[i:end]) != "null" {
		return end, fmt.Errorf("array at %v: its place holds %.20s, not null", a.Path, w.b[i:])
	}
	kind, err := arrayKind(t, a)
	if err != nil {
		return end, err
	}
	if w.lazy {
		if err = ndarray.CheckJSON(a, kind, w.spelling); err == nil {
			w.holes = append(w.holes, hole{at: len(w.out), a: a, kind: kind})
		}
	} else {
		w.out, err = ndarray.AppendJSONSpelled(w.out, a, kind, w.spelling)
	}
	var ne *ndarray.NotWhole
	if errors.As(err, &ne) {
		return end, mismatch("the number "+ne.Text, "integer")
	}
	if err != nil {
		return end, err
	}
	if t != nil && kind == ndarray.Int && a.DType == ndarray.I8 {
		if err := w.arrayRange(t, a); err != nil {
			return end, err
		}
	}
	w.placed++
	return end, nil
}

// arrayKind checks a result array's rank and fixed lengths against t and
// says how its numbers are written.
func arrayKind(t *manifest.Type, a *ndarray.Array) (ndarray.Number, error) {
	rank, kind, ok := numericNest(t)
	if !ok || rank != len(a.Shape) {
		if t != nil {
			return 0, mismatch(fmt.Sprintf("an array of rank %d", len(a.Shape)), expectedName(t.Unwrap()))
		}
		kind = ndarray.Real
		if a.DType != ndarray.F8 {
			kind = ndarray.Int
		}
	}
	for k, want := range fixedLens(t) {
		if want > 0 && a.Shape[k] != want && (k == 0 || a.Shape[k-1] > 0) {
			err := mismatch(fmt.Sprintf("an array of %d items", a.Shape[k]), fmt.Sprintf("a list of exactly %d", want))
			for range k { // every list at level k has that length: name the first
				err = under(err, pathSeg{idx: 0})
			}
			return 0, err
		}
	}
	return kind, nil
}

// arrayRange checks an i8 result array against a sized integer type.
func (w *resultWriter) arrayRange(t *manifest.Type, a *ndarray.Array) error {
	elem := t
	for elem.Unwrap().Kind == manifest.List {
		elem = elem.Unwrap().Elem
	}
	code := elem.Unwrap().Code
	lo, hi, sized := int64Range(code)
	if !sized {
		return nil
	}
	for k := 0; k < len(a.Data)/8; k++ {
		if v := int64(binary.LittleEndian.Uint64(a.Data[8*k:])); v < lo || v > hi {
			rg := intRanges[code]
			return mismatch("the integer "+strconv.FormatInt(v, 10), fmt.Sprintf("an integer from %s to %s (%s)", rg.lo, rg.hi, code))
		}
	}
	return nil
}

// number writes a numeric result canonically, checked against its type:
// an Int as its integer digits (exact at any size; 2.0 and 2e3 are whole,
// so integers), within the range of a sized type; a Real as the shortest
// text that reads back as the same float64, as encoding/json writes it.
func (w *resultWriter) number(t *manifest.Type, tok []byte, integer bool) error {
	if t.Kind == manifest.Int {
		text := tok
		if !integer {
			out, msg := normalizeInt(string(tok), "j")
			if msg != "" {
				return mismatch(found(tok), "integer")
			}
			text = []byte(out)
		}
		if t.Code == "j" { // any size: nothing to check
		} else if _, sized := intRanges[t.Code]; sized {
			if _, msg := normalizeInt(string(text), t.Code); msg != "" {
				rg := intRanges[t.Code]
				return mismatch("the integer "+shortText(string(text)), fmt.Sprintf("an integer from %s to %s (%s)", rg.lo, rg.hi, t.Code))
			}
		}
		w.out = append(w.out, text...)
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return mismatch(found(tok), "a number within the range of a double")
	}
	w.out = ndarray.AppendReal(w.out, f)
	return nil
}

// numbers writes a list of numbers of type t in one loop, and counts them:
// the JSON result of a large list (from a pool that sends it as JSON) goes
// through here. An element that is not a number is written by walk, as
// anywhere else.
func (w *resultWriter) numbers(t *manifest.Type, i int) (n, end int, err error) {
	end, err = w.numberList(t, i, &n)
	return n, end, err
}

func (w *resultWriter) numberList(t *manifest.Type, i int, count *int) (int, error) {
	b := w.b
	w.out = append(w.out, '[')
	i = jsontext.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		w.out = append(w.out, ']')
		return i + 1, nil
	}
	for k := 0; ; k++ {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		var end int
		var err error
		if i < len(b) && (b[i]-'0' < 10 || b[i] == '-') {
			var integer bool
			if end, integer, err = jsontext.NumberKind(b, i); err != nil {
				return end, err
			}
			if integer && t.Kind == manifest.Int && t.Code == "j" {
				w.out = append(w.out, b[i:end]...) // the common case: as it is
			} else if err = w.number(t, b[i:end], integer); err != nil {
				return end, under(err, pathSeg{idx: k})
			}
		} else if end, err = w.walk(t, i); err != nil {
			return end, under(err, pathSeg{idx: k})
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
			*count = k + 1
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
	end, err := jsontext.ArrayItems(w.b, i, func(vs int) (int, error) {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		if track {
			w.path = append(w.path[:mark], ndarray.Step{Idx: k})
		}
		et := elem(k)
		k++
		if et == nil {
			return w.compact(vs) // a tuple's extra item: its caller counts them
		}
		ve, err := w.walk(et, vs)
		return ve, under(err, pathSeg{idx: k - 1})
	}, 1)
	w.path = w.path[:mark]
	w.out = append(w.out, ']')
	return end, err
}

// record writes an object member by member, in the pool's order, each
// field by its declared type: every field the type requires, no other.
func (w *resultWriter) record(t *manifest.Type, i int) (int, error) {
	// Fields seen: a bit each, in a word for the usual record (rows of a
	// table go through here once per row, so nothing is allocated).
	var seenWord uint64
	var seenMore []bool
	if len(t.Fields) > 64 {
		seenMore = make([]bool, len(t.Fields))
	}
	w.out = append(w.out, '{')
	mark := len(w.path)
	track := w.placed < len(w.arrays)
	first := true
	end, err := jsontext.ObjectMembers(w.b, i, func(key []byte, escaped bool, vs int) (int, error) {
		if !first {
			w.out = append(w.out, ',')
		}
		first = false
		raw := key[1 : len(key)-1]
		var name string
		if escaped {
			name = jsontext.Unquote(key)
		}
		k := -1
		for fk := range t.Fields {
			if escaped && t.Fields[fk].Key == name || !escaped && t.Fields[fk].Key == string(raw) {
				k = fk
				break
			}
		}
		if k < 0 {
			if !escaped {
				name = string(raw)
			}
			return vs, mismatch("an object with a field '"+name+"'", "a record without it")
		}
		f := &t.Fields[k]
		if seenMore != nil && seenMore[k] || seenMore == nil && seenWord&(1<<k) != 0 {
			return vs, mismatch("an object with its field '"+f.Key+"' twice", "")
		}
		if seenMore != nil {
			seenMore[k] = true
		} else {
			seenWord |= 1 << k
		}
		w.out = jsontext.AppendQuoted(w.out, f.Key)
		w.out = append(w.out, ':')
		if track {
			w.path = append(w.path[:mark], ndarray.Step{Key: f.Key, Idx: -1})
		}
		ve, err := w.walk(f.Type, vs)
		return ve, under(err, pathSeg{key: f.Key, idx: -1})
	}, 1)
	w.path = w.path[:mark]
	w.out = append(w.out, '}')
	if err != nil {
		return end, err
	}
	for k, f := range t.Fields {
		seen := seenMore != nil && seenMore[k] || seenMore == nil && seenWord&(1<<k) != 0
		if !seen && !isOptional(f.Type) {
			return end, mismatch("an object without its field '"+f.Key+"'", "")
		}
	}
	return end, nil
}

// pairs writes a Map sent as an object as the [key, value] pairs its type
// declares, in the pool's order, and counts them.
func (w *resultWriter) pairs(pair *manifest.Type, i int) (int, int, error) {
	n := 0
	w.out = append(w.out, '[')
	mark := len(w.path)
	track := w.placed < len(w.arrays)
	first := true
	end, err := jsontext.ObjectMembers(w.b, i, func(key []byte, escaped bool, vs int) (int, error) {
		if !first {
			w.out = append(w.out, ',')
		}
		first = false
		n++
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		w.out = append(w.out, '[')
		w.out = jsontext.AppendQuoted(w.out, name)
		w.out = append(w.out, ',')
		if track {
			w.path = append(w.path[:mark], ndarray.Step{Key: name, Idx: -1})
		}
		ve, err := w.walk(pair.Items[1], vs)
		w.out = append(w.out, ']')
		return ve, under(err, pathSeg{key: name, idx: -1})
	}, 1)
	w.path = w.path[:mark]
	w.out = append(w.out, ']')
	return n, end, err
}
