package argmap

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// DefaultArrayMin is the fewest elements a numeric argument must have to
// travel to a pool as an array rather than JSON (docs/internals.md,
// "Arrays"): below it JSON costs less than a blob.
const DefaultArrayMin = 256

// fastPositional is ToPositional's single pass over the raw arguments: it
// checks each value against its declared type while writing it in pool
// form, with no decoded tree, no schema validation and no allocation per
// element; numeric arrays of at least t.ArrayMin elements become arrays.
// It accepts exactly what the schema and toPool accept and writes the same
// bytes (FuzzFastPositional checks both), and returns ok false at the
// first doubt — a fault, a duplicate key, anything unusual — so that the
// full path decides, with its error messages.
func (t *Tool) fastPositional(arguments []byte) (Call, bool) {
	b := arguments
	i := jsontext.SkipSpace(b, 0)
	s := newSupplied()
	cmd := t.Command
	e := &fastEncoder{b: b, arrayMin: t.ArrayMin}
	if i < len(b) && b[i] == 'n' {
		if end, err := jsontext.Value(b, i); err != nil || jsontext.SkipSpace(b, end) != len(b) || string(b[i:end]) != "null" {
			return Call{}, false
		}
		// null: no arguments
	} else if i < len(b) {
		if b[i] != '{' {
			return Call{}, false
		}
		seen := make(map[string]bool, len(t.plan.slots))
		end, ok := e.members(i, func(name string, vs int) (int, bool) {
			if seen[name] {
				return 0, false // a duplicate: encoding/json keeps the last, the full path decides
			}
			seen[name] = true
			if name == "_render" && t.renders != nil {
				if vs >= len(b) || b[vs] != '"' {
					return 0, false
				}
				end, _, err := jsontext.String(b, vs)
				if err != nil {
					return 0, false
				}
				r := jsontext.Unquote(b[vs:end])
				if r != "raw" {
					entry, known := t.renders[r]
					if !known {
						return 0, false
					}
					if entry != nil {
						cmd = entry
					}
				}
				return end, true
			}
			target, known := t.props[name]
			if !known {
				return 0, false
			}
			sl := target.slot
			if target.whole {
				return e.group(sl, s, vs)
			}
			e.path = append(e.path[:0], ndarray.Step{Idx: sl.index})
			var ty *manifest.Type
			if target.field != nil {
				ty = target.field.t
				e.path = append(e.path, ndarray.Step{Key: target.field.key, Idx: -1})
			} else {
				ty = argType(sl.arg)
			}
			start := len(e.out)
			end, ok := e.value(ty, vs, 0)
			if !ok {
				return 0, false
			}
			raw := json.RawMessage(e.out[start:len(e.out):len(e.out)])
			if target.field != nil {
				s.fields[target.field] = raw
			} else {
				s.vals[sl] = raw
			}
			return end, true
		})
		if !ok || jsontext.SkipSpace(b, end) != len(b) {
			return Call{}, false
		}
	}
	out, err := t.plan.assemble(s)
	if err != nil {
		return Call{}, false
	}
	return Call{Command: cmd, Args: out, Arrays: e.arrays, Ret: retOf(cmd)}, true
}

// propTarget is what one tool property fills: a slot (a positional, an
// option, a flag, a whole group) or one field of an unrolled group.
type propTarget struct {
	slot  *slot
	field *field
	whole bool // the property is a whole group's record
}

// fastProps maps every property of the tool to its target.
func fastProps(p *plan) map[string]propTarget {
	m := map[string]propTarget{}
	for _, sl := range p.slots {
		switch {
		case sl.kind != manifest.KindGrp:
			m[sl.prop] = propTarget{slot: sl}
		case sl.whole:
			m[sl.prop] = propTarget{slot: sl, whole: true}
		default:
			for _, f := range sl.fields {
				m[f.key] = propTarget{slot: sl, field: f}
			}
		}
	}
	return m
}

// retOf is what a pool is told of a command's result (ndarray.Ret): its
// declared type, and whether it may come as an array (its return type is
// nested lists of numbers). It is made once per command and shared by its
// calls, so a call costs no allocation for it.
func retOf(c *manifest.Command) *ndarray.Ret {
	if c == nil {
		return nil
	}
	if r, ok := rets.Load(c); ok {
		return r.(*ndarray.Ret)
	}
	r := &ndarray.Ret{Type: declaredType(&c.Return), Args: declaredArgs(c)}
	if rank, kind, ok := numericNest(c.Return.T); ok {
		r.Rank, r.Number = rank, kind
	}
	if r.Rank == 0 && r.Type == nil && r.Args == nil {
		r = nil
	}
	rets.Store(c, r)
	return r
}

// rets caches retOf by command: manifests live as long as nexus.
var rets sync.Map // *manifest.Command → *ndarray.Ret

// numericNest reports whether t is rank ≥ 1 nested lists of Int or Real
// (hints and recursive declarations aside; a Map is not a list here).
func numericNest(t *manifest.Type) (rank int, kind ndarray.Number, ok bool) {
	for {
		t = t.Unwrap()
		if t == nil {
			return 0, 0, false
		}
		switch t.Kind {
		case manifest.List:
			if t.IsMap() {
				return 0, 0, false
			}
			rank++
			t = t.Elem
			continue
		case manifest.Int:
			return rank, ndarray.Int, rank > 0
		case manifest.Float:
			return rank, ndarray.Real, rank > 0
		}
		return 0, 0, false
	}
}

// fixedLens are the fixed lengths (0: any) of the lists of a numeric nest
// t, outermost first.
func fixedLens(t *manifest.Type) []int {
	var lens []int
	for t = t.Unwrap(); t != nil && t.Kind == manifest.List; t = t.Elem.Unwrap() {
		lens = append(lens, t.Len)
	}
	return lens
}

// fastEncoder writes values in pool form from raw JSON.
type fastEncoder struct {
	b        []byte
	out      []byte
	scope    []*manifest.Type // enclosing recursive declarations
	arrayMin int              // 0: no arrays
	arrays   []ndarray.Array
	path     []ndarray.Step // where the value being written is, for arrays
	nums     []byte         // an array's elements, sized before they are read
	numEnd   int            // where the array being read ends
}

// numericExtent finds the end of the list at b[i] and counts the commas
// in it, to size its array's buffer: brackets and commas are found with
// bytes.IndexByte and bytes.Count, which read many bytes at a time. It does
// not check what lies between them; the parse that follows does, and a
// list that is not all numbers goes on as JSON.
func numericExtent(b []byte, i int) (end, commas int, numeric bool) {
	depth := 0
	nextOpen := -1 // the next '[' at or after j, once looked for
	for j := i; j < len(b); {
		if nextOpen < j {
			if k := bytes.IndexByte(b[j:], '['); k >= 0 {
				nextOpen = j + k
			} else {
				nextOpen = len(b)
			}
		}
		k := bytes.IndexByte(b[j:], ']')
		if k < 0 {
			return 0, 0, false
		}
		close := j + k
		if nextOpen < close {
			depth++
			j = nextOpen + 1
			continue
		}
		depth--
		j = close + 1
		if depth == 0 {
			return j, bytes.Count(b[i:j], []byte{','}), true
		}
	}
	return 0, 0, false
}

// members walks the object at b[i], calling member for each with its
// decoded name and the start of its value; member returns the value's end.
func (e *fastEncoder) members(i int, member func(name string, vs int) (int, bool)) (int, bool) {
	b := e.b
	i = jsontext.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kend, escaped, err := jsontext.String(b, i)
		if err != nil {
			return 0, false
		}
		name := string(b[i+1 : kend-1])
		if escaped {
			name = jsontext.Unquote(b[i:kend])
		}
		i = jsontext.SkipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		end, ok := member(name, jsontext.SkipSpace(b, i+1))
		if !ok {
			return 0, false
		}
		i = jsontext.SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = jsontext.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		return 0, false
	}
}

// group writes a whole group's record field by field into s.
func (e *fastEncoder) group(sl *slot, s *supplied, vs int) (int, bool) {
	if vs >= len(e.b) || e.b[vs] != '{' {
		return 0, false
	}
	byKey := make(map[string]*field, len(sl.fields))
	for _, f := range sl.fields {
		byKey[f.key] = f
	}
	seen := map[string]bool{}
	end, ok := e.members(vs, func(name string, fs int) (int, bool) {
		f := byKey[name]
		if f == nil || seen[name] {
			return 0, false
		}
		seen[name] = true
		e.path = append(e.path[:0], ndarray.Step{Idx: sl.index}, ndarray.Step{Key: f.key, Idx: -1})
		start := len(e.out)
		end, ok := e.value(f.t, fs, 0)
		if !ok {
			return 0, false
		}
		s.fields[f] = json.RawMessage(e.out[start:len(e.out):len(e.out)])
		return end, true
	})
	if !ok {
		return 0, false
	}
	// The schema requires the fields with no default that are not optional.
	for _, f := range sl.fields {
		if !seen[f.key] && f.def == nil && !isOptional(f.t) {
			return 0, false
		}
	}
	s.wholeGiven[sl] = true
	return end, true
}

// value writes the value of type t at b[i] in pool form and returns its
// end; ok is false if it does not fit t exactly as the full path demands.
func (e *fastEncoder) value(t *manifest.Type, i, depth int) (int, bool) {
	b := e.b
	if i >= len(b) || depth > jsontext.MaxDepth {
		return 0, false
	}
	c := b[i]
	switch t.Kind {
	case manifest.Nil:
		if c != 'n' {
			return 0, false
		}
		return e.literal(i, "null")
	case manifest.Bool:
		switch c {
		case 't':
			return e.literal(i, "true")
		case 'f':
			return e.literal(i, "false")
		}
		return 0, false
	case manifest.Str:
		if c != '"' {
			return 0, false
		}
		end, needsDecoding, err := jsontext.String(b, i)
		if err != nil {
			return 0, false
		}
		if needsDecoding {
			e.out = jsontext.AppendQuoted(e.out, jsontext.Unquote(b[i:end]))
		} else {
			e.out = append(e.out, b[i:end]...)
		}
		return end, true
	case manifest.Int:
		end, ok := e.number(i)
		if !ok {
			return 0, false
		}
		tok := b[i:end]
		if jsontext.IsIntLiteral(tok) {
			if _, sized := intRanges[t.Code]; sized {
				if _, msg := normalizeInt(string(tok), t.Code); msg != "" {
					return 0, false
				}
			}
			e.out = append(e.out, tok...)
			return end, true
		}
		s, msg := normalizeInt(string(tok), t.Code)
		if msg != "" {
			return 0, false
		}
		e.out = append(e.out, s...)
		return end, true
	case manifest.Float:
		if c == '"' {
			// NaN or an infinity (the schema's enum; an escaped spelling
			// goes the full path): to the pool as a rank-0 f8 array, null
			// in its place, as nonFiniteArrays does.
			end, escaped, err := jsontext.String(b, i)
			if err != nil || escaped {
				return 0, false
			}
			f, ok := nonFiniteArg(string(b[i+1 : end-1]))
			if !ok {
				return 0, false
			}
			e.arrays = append(e.arrays, ndarray.Scalar(e.arrayPath(), f))
			e.out = append(e.out, "null"...)
			return end, true
		}
		end, ok := e.number(i)
		if !ok {
			return 0, false
		}
		tok := b[i:end]
		e.out = append(e.out, tok...)
		if jsontext.IsIntLiteral(tok) {
			e.out = append(e.out, ".0"...) // a Real reaches the pool as a float
		}
		return end, true
	case manifest.List:
		if c != '[' {
			return 0, false
		}
		if isStrMap(t) {
			if t.Len > 0 {
				return 0, false // a Map of a fixed size: the full path counts its pairs
			}
			return e.strMap(t, i, depth)
		}
		if e.arrayMin > 0 {
			if end, ok, tried := e.array(t, i); tried {
				return end, ok
			}
		}
		n := 0
		end, ok := e.elements(i, depth, func(int) *manifest.Type {
			n++
			return t.Elem
		})
		return end, ok && (t.Len == 0 || n == t.Len)
	case manifest.Tuple:
		if c != '[' {
			return 0, false
		}
		n := 0
		end, ok := e.elements(i, depth, func(k int) *manifest.Type {
			n++
			if k < len(t.Items) {
				return t.Items[k]
			}
			return nil
		})
		return end, ok && n == len(t.Items)
	case manifest.Record:
		if c != '{' {
			return 0, false
		}
		return e.record(t, i, depth)
	case manifest.Optional:
		if c == 'n' {
			return e.literal(i, "null")
		}
		return e.value(t.Elem, i, depth)
	case manifest.Recursive:
		e.scope = append(e.scope, t)
		end, ok := e.value(t.Elem, i, depth)
		e.scope = e.scope[:len(e.scope)-1]
		return end, ok
	case manifest.BackRef:
		for k := len(e.scope) - 1; k >= 0; k-- {
			if e.scope[k].Name == t.Name {
				return e.value(e.scope[k], i, depth+1)
			}
		}
	}
	return 0, false // tables, handles, *: the full path knows what to do
}

func (e *fastEncoder) literal(i int, word string) (int, bool) {
	if len(e.b)-i < len(word) || string(e.b[i:i+len(word)]) != word {
		return 0, false
	}
	e.out = append(e.out, word...)
	return i + len(word), true
}

// number checks a number token within the bounds the full path allows
// (checkNumbers) and returns its end.
func (e *fastEncoder) number(i int) (int, bool) {
	end, err := jsontext.Number(e.b, i)
	if err != nil || end-i > maxNumberLen {
		return 0, false
	}
	tok := e.b[i:end]
	for k, c := range tok {
		if c == 'e' || c == 'E' {
			exp, err := strconv.Atoi(strings.TrimPrefix(string(tok[k+1:]), "+"))
			if err != nil || exp > maxNumberExponent || exp < -maxNumberExponent {
				return 0, false
			}
			break
		}
	}
	return end, true
}

// elements writes the array at b[i], each element by the type elem gives
// (nil: not allowed).
func (e *fastEncoder) elements(i, depth int, elem func(int) *manifest.Type) (int, bool) {
	b := e.b
	e.out = append(e.out, '[')
	i = jsontext.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		e.out = append(e.out, ']')
		return i + 1, true
	}
	mark := len(e.path)
	e.path = append(e.path, ndarray.Step{})
	for k := 0; ; k++ {
		et := elem(k)
		if et == nil {
			return 0, false
		}
		if k > 0 {
			e.out = append(e.out, ',')
		}
		e.path[mark] = ndarray.Step{Idx: k}
		end, ok := e.value(et, i, depth+1)
		if !ok {
			return 0, false
		}
		i = jsontext.SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = jsontext.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			e.path = e.path[:mark]
			e.out = append(e.out, ']')
			return i + 1, true
		}
		return 0, false
	}
}

// record writes the record at b[i] with its fields in declaration order.
func (e *fastEncoder) record(t *manifest.Type, i, depth int) (int, bool) {
	spans := make([]int, len(t.Fields)) // each field's value start, -1 when absent
	for k := range spans {
		spans[k] = -1
	}
	end, ok := e.members(i, func(name string, vs int) (int, bool) {
		k := -1
		for j, f := range t.Fields {
			if f.Key == name {
				k = j
				break
			}
		}
		if k < 0 || spans[k] >= 0 {
			return 0, false
		}
		spans[k] = vs
		end, err := jsontext.Value(e.b, vs)
		return end, err == nil
	})
	if !ok {
		return 0, false
	}
	e.out = append(e.out, '{')
	mark := len(e.path)
	for k, f := range t.Fields {
		if k > 0 {
			e.out = append(e.out, ',')
		}
		e.out = jsontext.AppendQuoted(e.out, f.Key)
		e.out = append(e.out, ':')
		if spans[k] < 0 {
			if !isOptional(f.Type) {
				return 0, false
			}
			e.out = append(e.out, "null"...)
			continue
		}
		e.path = append(e.path[:mark], ndarray.Step{Key: f.Key, Idx: -1})
		if _, ok := e.value(f.Type, spans[k], depth+1); !ok {
			return 0, false
		}
	}
	e.path = e.path[:mark]
	e.out = append(e.out, '}')
	return end, true
}

// strMap writes a Map given as [[key, value], ...] as {"key": value, ...}.
func (e *fastEncoder) strMap(t *manifest.Type, i, depth int) (int, bool) {
	b := e.b
	pair := t.Elem.Unwrap()
	seen := map[string]bool{}
	e.out = append(e.out, '{')
	first := true
	mark := len(e.path)
	end, err := jsontext.Array(b, i, func(ps, pe int) error {
		if b[ps] != '[' {
			return errFast
		}
		var key string
		n := 0
		_, err := jsontext.Array(b, ps, func(vs, ve int) error {
			switch n++; n {
			case 1:
				if b[vs] != '"' {
					return errFast
				}
				_, escaped, _ := jsontext.String(b, vs)
				key = string(b[vs+1 : ve-1])
				if escaped {
					key = jsontext.Unquote(b[vs:ve])
				}
				if seen[key] {
					return errFast
				}
				seen[key] = true
				if !first {
					e.out = append(e.out, ',')
				}
				first = false
				e.out = jsontext.AppendQuoted(e.out, key)
				e.out = append(e.out, ':')
			case 2:
				e.path = append(e.path[:mark], ndarray.Step{Key: key, Idx: -1})
				if _, ok := e.value(pair.Items[1], vs, depth+2); !ok {
					return errFast
				}
			default:
				return errFast
			}
			return nil
		})
		if err != nil || n != 2 {
			return errFast
		}
		return nil
	})
	e.path = e.path[:mark]
	if err != nil {
		return 0, false
	}
	e.out = append(e.out, '}')
	return end, true
}

type fastError struct{}

func (fastError) Error() string { return "not for the fast path" }

var errFast error = fastError{}

// array tries to send the list at b[i] as an array: tried is false when it
// stays JSON (the caller then writes it so), else the array was taken and
// null written in its place.
func (e *fastEncoder) array(t *manifest.Type, i int) (end int, ok, tried bool) {
	rank, kind, isNest := numericNest(t)
	if !isNest {
		return 0, false, false
	}
	lo, hi := elementRange(t)
	// One quick pass first: the array's extent and an upper bound on its
	// elements, so that the elements go into one buffer of the right size.
	// Anything but numbers (for a Real, also "NaN", "Infinity" and
	// "-Infinity") and brackets means it stays JSON.
	extent, commas, numeric := numericExtent(e.b, i)
	if !numeric || commas+1 < e.arrayMin {
		return 0, false, false
	}
	shape := make([]int, rank)
	for k := range shape {
		shape[k] = -1
	}
	e.nums = make([]byte, 0, 8*(commas+1))
	e.numEnd = extent
	dtype := ndarray.I8
	if kind == ndarray.Real {
		dtype = ndarray.F8
	}
	var scan func(i, level int) (int, bool)
	scan = func(i, level int) (int, bool) {
		b := e.b[:e.numEnd]
		if i >= len(b) || b[i] != '[' {
			return 0, false
		}
		n := 0
		i = jsontext.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			i++
		} else {
			for {
				var end int
				var ok bool
				if level == rank-1 && kind == ndarray.Int {
					// The whole innermost list at once: the hot loop.
					end, ok = e.intRow(i, lo, hi, &n)
					if ok {
						i = end
						break
					}
					return 0, false
				} else if level == rank-1 {
					end, ok = e.arrayNumber(i, kind, lo, hi)
				} else {
					end, ok = scan(i, level+1)
				}
				if !ok {
					return 0, false
				}
				n++
				i = jsontext.SkipSpace(b, end)
				if i < len(b) && b[i] == ',' {
					i = jsontext.SkipSpace(b, i+1)
					continue
				}
				if i < len(b) && b[i] == ']' {
					i++
					break
				}
				return 0, false
			}
		}
		if shape[level] < 0 {
			shape[level] = n
		} else if shape[level] != n {
			return 0, false // ragged
		}
		return i, true
	}
	end, ok = scan(i, 0)
	if !ok {
		return 0, false, false
	}
	for k, want := range fixedLens(t) {
		if want > 0 && shape[k] >= 0 && shape[k] != want {
			return 0, false, false // a fixed list of another length: elements decides
		}
	}
	for k := range shape {
		if shape[k] < 0 { // an empty outer list leaves inner lengths unknown
			shape[k] = 0
		}
	}
	count := len(e.nums) / 8
	if count < e.arrayMin {
		return 0, false, false
	}
	e.arrays = append(e.arrays, ndarray.Array{Path: e.arrayPath(), DType: dtype, Shape: shape, Data: e.nums})
	e.nums = nil // the array owns it now
	e.out = append(e.out, "null"...)
	return end, true, true
}

// arrayPath is where the value being written is, as an array's path.
func (e *fastEncoder) arrayPath() []any {
	path := make([]any, len(e.path))
	for k, p := range e.path {
		if p.Idx >= 0 {
			path[k] = p.Idx
		} else {
			path[k] = p.Key
		}
	}
	return path
}

// arrayNumber appends one element of an array: an Int that is a plain
// integer literal fitting 64 bits and [lo, hi], or a Real a double holds
// (not beyond its range), or NaN or an infinity written as the schema's
// "NaN", "Infinity", "-Infinity".
func (e *fastEncoder) arrayNumber(i int, kind ndarray.Number, lo, hi int64) (int, bool) {
	b := e.b
	if kind == ndarray.Int {
		// A plain integer literal, read as it is checked: the common case.
		j := i
		neg := j < len(b) && b[j] == '-'
		if neg {
			j++
		}
		start := j
		var u uint64
		for j < len(b) && b[j] >= '0' && b[j] <= '9' && j-start < 19 {
			u = u*10 + uint64(b[j]-'0')
			j++
		}
		digits := j - start
		if digits > 0 && digits < 19 && (j >= len(b) || (b[j] != '.' && b[j] != 'e' && b[j] != 'E' && (b[j] < '0' || b[j] > '9'))) &&
			(digits == 1 || b[start] != '0') {
			v := int64(u)
			if neg {
				v = -v
			}
			if v < lo || v > hi {
				return 0, false
			}
			e.putNum(uint64(v))
			return j, true
		}
		// 19 digits or more, or anything unusual: the careful way.
		end, ok := e.number(i)
		if !ok {
			return 0, false
		}
		v, ok := jsontext.ParseInt64(b[i:end])
		if !ok || v < lo || v > hi {
			return 0, false
		}
		e.putNum(uint64(v))
		return end, true
	}
	if i < len(b) && b[i] == '"' {
		for _, name := range nonFiniteTokens {
			if bytes.HasPrefix(b[i:], name.tok) {
				e.putNum(math.Float64bits(name.f))
				return i + len(name.tok), true
			}
		}
		return 0, false
	}
	end, ok := e.number(i)
	if !ok {
		return 0, false
	}
	f, ok := jsontext.ParseFloat(b[i:end])
	if !ok || math.IsInf(f, 0) {
		return 0, false
	}
	e.putNum(math.Float64bits(f))
	return end, true
}

// nonFiniteTokens are the string tokens a Real array element may be.
var nonFiniteTokens = func() (out [3]struct {
	tok []byte
	f   float64
}) {
	for i, n := range nonFiniteNames {
		out[i].tok = []byte(`"` + n + `"`)
		out[i].f, _ = nonFiniteArg(n)
	}
	return out
}()

// intRow reads the integers of the innermost list whose first element is
// at b[i], through its ']', adding their count to *n. A number in an
// unusual form is read the careful way (arrayNumber).
func (e *fastEncoder) intRow(i int, lo, hi int64, n *int) (int, bool) {
	b := e.b[:e.numEnd]
	nums := e.nums
	defer func() { e.nums = nums }()
	for {
		j := i
		neg := j < len(b) && b[j] == '-'
		if neg {
			j++
		}
		start := j
		var u uint64
		for j < len(b) {
			d := b[j] - '0'
			if d >= 10 {
				break
			}
			u = u*10 + uint64(d)
			j++
		}
		digits := j - start
		plain := digits > 0 && digits <= 18 && (digits == 1 || b[start] != '0') &&
			(j >= len(b) || (b[j] != '.' && b[j] != 'e' && b[j] != 'E'))
		if plain {
			v := int64(u)
			if neg {
				v = -v
			}
			if v < lo || v > hi {
				return 0, false
			}
			k := len(nums)
			nums = nums[:k+8]
			binary.LittleEndian.PutUint64(nums[k:], uint64(v))
		} else {
			e.nums = nums
			end, ok := e.arrayNumber(i, ndarray.Int, lo, hi)
			if !ok {
				return 0, false
			}
			nums, j = e.nums, end
		}
		*n++
		if j < len(b) && b[j] <= ' ' {
			j = jsontext.SkipSpace(b, j)
		}
		if j < len(b) && b[j] == ',' {
			i = j + 1
			if i < len(b) && b[i] <= ' ' {
				i = jsontext.SkipSpace(b, i)
			}
			continue
		}
		if j < len(b) && b[j] == ']' {
			return j + 1, true
		}
		return 0, false
	}
}

// putNum stores one element; nums has room (numericExtent counted them).
// Writing through the index, not append, keeps the slice header still: no
// write barrier per element.
func (e *fastEncoder) putNum(bits uint64) {
	n := len(e.nums)
	e.nums = e.nums[:n+8]
	binary.LittleEndian.PutUint64(e.nums[n:], bits)
}

// int64Range is the range of a sized integer code as int64s (u8's upper
// bound is cut to the largest int64: larger values are not arrays).
func int64Range(code string) (lo, hi int64, sized bool) {
	rg, sized := intRanges[code]
	if !sized {
		return 0, 0, false
	}
	hi = math.MaxInt64
	if rg.hi.IsInt64() {
		hi = rg.hi.Int64()
	}
	return rg.lo.Int64(), hi, true
}

// elementRange is the range of the integers at the bottom of t, a nest of
// lists: a sized integer type's, else int64's.
func elementRange(t *manifest.Type) (lo, hi int64) {
	elem := t
	for elem.Unwrap().Kind == manifest.List {
		elem = elem.Unwrap().Elem
	}
	if l, h, sized := int64Range(elem.Unwrap().Code); sized {
		return l, h
	}
	return math.MinInt64, math.MaxInt64
}
