package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// valueError is a fault inside one argument's value. Path is relative to the
// argument ("", "[0]", ".numThreads"); callers prefix the argument's name.
type valueError struct {
	Path string
	Msg  string
}

func (e *valueError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return "at " + e.Path + ": " + e.Msg
}

// valuePath is where a walker is inside a value, rendered only for a message
// (building a string per element would dominate large calls).
type valuePath []pathSeg

type pathSeg struct {
	key string
	idx int // -1 for a key
}

func (p valuePath) index(i int) valuePath  { return append(p, pathSeg{idx: i}) }
func (p valuePath) key(k string) valuePath { return append(p, pathSeg{key: k, idx: -1}) }

// String renders the path as messages show it: [0], .key; the first key
// bare (it names the argument).
func (p valuePath) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.idx >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
		case i == 0:
			b.WriteString(s.key)
		default:
			b.WriteByte('.')
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// expectedName is how messages name the JSON type t wants.
func expectedName(t *manifest.Type) string {
	switch t.Kind {
	case manifest.Nil:
		return "null"
	case manifest.Bool:
		return "boolean"
	case manifest.Str:
		return "string"
	case manifest.Int:
		return "integer"
	case manifest.Float:
		return "number"
	case manifest.List, manifest.Tuple, manifest.Table:
		return "array"
	case manifest.Record, manifest.BackRef:
		return "object"
	case manifest.Any:
		return "any value"
	case manifest.Optional:
		return expectedName(t.Elem) + " or null"
	case manifest.Recursive:
		return expectedName(t.Elem)
	}
	return "string"
}

// maxIntExponent bounds the exponent of an integer written as 1e300 so that
// expanding it to digits stays cheap.
const maxIntExponent = 1000

type intRange struct{ lo, hi *big.Int }

func pow2(n uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), n) }

func signedRange(bits uint) intRange {
	hi := new(big.Int).Sub(pow2(bits-1), big.NewInt(1))
	return intRange{new(big.Int).Neg(pow2(bits - 1)), hi}
}

func unsignedRange(bits uint) intRange {
	return intRange{big.NewInt(0), new(big.Int).Sub(pow2(bits), big.NewInt(1))}
}

// intRanges are the bounds of morloc's sized integers; `j` is unbounded.
var intRanges = map[string]intRange{
	"i1": signedRange(8), "i2": signedRange(16), "i4": signedRange(32), "i8": signedRange(64),
	"u1": unsignedRange(8), "u2": unsignedRange(16), "u4": unsignedRange(32), "u8": unsignedRange(64),
}

// normalizeInt turns number text into the canonical integer literal a pool
// receives, or explains why it is not an integer of type code. Plain JSON
// integers pass byte for byte, whatever their size; 2.0 and 2e3 become 2 and
// 2000.
func normalizeInt(text, code string) (string, string) {
	if n, ok := shortIntLiteral(text); ok {
		// Nearly every integer: checked without a regexp or math/big, on
		// the path of each small call's arguments and result.
		if lo, hi, sized := int64Range(code); sized && (n < lo || n > hi) {
			rg := intRanges[code]
			return "", fmt.Sprintf("expected an integer from %s to %s (%s), got %s", rg.lo, rg.hi, code, text)
		}
		return text, ""
	}
	out := text
	if !isIntLiteral(text) {
		if !isNumberText(text) {
			return "", fmt.Sprintf("expected integer, got %s", describeText(text))
		}
		if i := strings.IndexAny(text, "eE"); i >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
			if err != nil || exp > maxIntExponent || exp < -maxIntExponent {
				return "", fmt.Sprintf("expected integer, got %s (exponent out of range)", text)
			}
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(text, "+"))
		if !ok || !r.IsInt() {
			return "", fmt.Sprintf("expected integer, got %s", describeText(text))
		}
		out = r.Num().String()
	}
	if rg, sized := intRanges[code]; sized {
		n, _ := new(big.Int).SetString(out, 10)
		if n.Cmp(rg.lo) < 0 || n.Cmp(rg.hi) > 0 {
			return "", fmt.Sprintf("expected an integer from %s to %s (%s), got %s", rg.lo, rg.hi, code, out)
		}
	}
	return out, ""
}

// shortIntLiteral reads text as isIntLiteral accepts it, when it has at
// most 18 digits: an int64 whatever they are.
func shortIntLiteral(text string) (int64, bool) {
	if len(strings.TrimPrefix(text, "-")) > 18 || !isIntLiteral(text) {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil
}

// describeText names a non-integer number text for a message.
func describeText(text string) string {
	if isNumberText(text) {
		return "number " + text
	}
	return strconv.Quote(text)
}

// toPool encodes a decoded value (json.Number for numbers) of type t in the
// form a pool receives: integers normalized and range-checked, string-keyed
// Maps as objects, records with their fields in declaration order. It is
// the CLI's (JSON arguments, defaults), where a Real is a number.
func toPool(t *manifest.Type, v any) (json.RawMessage, *valueError) {
	e := &poolEncoder{}
	if err := e.value(t, v, nil); err != nil {
		return nil, err
	}
	return json.RawMessage(e.b.Bytes()), nil
}

// poolEncoder writes values for toPool, and for a tools/call's arguments
// (convert), where a Real may also be "NaN", "Infinity" or "-Infinity"
// (nonFinite; the tool's schema says so): such a string is written as it
// is, and sawNonFinite set, for nonFiniteArrays to move it into an array.
type poolEncoder struct {
	b            bytes.Buffer
	scope        []*manifest.Type // enclosing recursive declarations, innermost last
	nonFinite    bool
	sawNonFinite bool
}

func (e *poolEncoder) mismatch(t *manifest.Type, v any, path valuePath) *valueError {
	return e.fail(path, fmt.Sprintf("expected %s, got %s", expectedName(t), manifest.JSONKind(v)))
}

// fail makes a valueError whose path is relative to the argument: keys are
// written .key even first, so that callers can append it to a name.
func (e *poolEncoder) fail(path valuePath, msg string) *valueError {
	rel := valuePath{{key: "", idx: -1}}
	return &valueError{(append(rel, path...)).String(), msg}
}

func (e *poolEncoder) value(t *manifest.Type, v any, path valuePath) *valueError {
	switch t.Kind {
	case manifest.Nil:
		if v != nil {
			return e.mismatch(t, v, path)
		}
		e.b.WriteString("null")
	case manifest.Bool:
		x, ok := v.(bool)
		if !ok {
			return e.mismatch(t, v, path)
		}
		writeJSON(&e.b, x)
	case manifest.Str:
		x, ok := v.(string)
		if !ok {
			return e.mismatch(t, v, path)
		}
		writeString(&e.b, x)
	case manifest.Int:
		n, ok := v.(json.Number)
		if !ok {
			return e.mismatch(t, v, path)
		}
		s, msg := normalizeInt(string(n), t.Code)
		if msg != "" {
			return e.fail(path, msg)
		}
		e.b.WriteString(s)
	case manifest.Float:
		if s, ok := v.(string); ok && e.nonFinite {
			if _, ok := nonFiniteArg(s); ok {
				writeString(&e.b, s)
				e.sawNonFinite = true
				return nil
			}
		}
		n, ok := v.(json.Number)
		if !ok {
			return e.mismatch(t, v, path)
		}
		e.b.WriteString(string(n))
		if isIntLiteral(string(n)) {
			e.b.WriteString(".0") // a Real reaches the pool as a float
		}
	case manifest.List:
		arr, ok := v.([]any)
		if !ok {
			return e.mismatch(t, v, path)
		}
		if t.Len > 0 && len(arr) != t.Len {
			return e.fail(path, fmt.Sprintf("expected an array of exactly %d items, got %d", t.Len, len(arr)))
		}
		if isStrMap(t) {
			return e.strMap(t, arr, path)
		}
		e.b.WriteByte('[')
		for i, x := range arr {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if err := e.value(t.Elem, x, path.index(i)); err != nil {
				return err
			}
		}
		e.b.WriteByte(']')
	case manifest.Tuple:
		arr, ok := v.([]any)
		if !ok {
			return e.mismatch(t, v, path)
		}
		if len(arr) != len(t.Items) {
			return e.fail(path, fmt.Sprintf("expected an array of exactly %d items, got %d", len(t.Items), len(arr)))
		}
		e.b.WriteByte('[')
		for i, x := range arr {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if err := e.value(t.Items[i], x, path.index(i)); err != nil {
				return err
			}
		}
		e.b.WriteByte(']')
	case manifest.Record:
		obj, ok := v.(map[string]any)
		if !ok {
			return e.mismatch(t, v, path)
		}
		return e.record(t, obj, path)
	case manifest.Optional:
		if v == nil {
			e.b.WriteString("null")
			return nil
		}
		return e.value(t.Elem, v, path)
	case manifest.Recursive:
		e.scope = append(e.scope, t)
		err := e.value(t.Elem, v, path)
		e.scope = e.scope[:len(e.scope)-1]
		return err
	case manifest.BackRef:
		for i := len(e.scope) - 1; i >= 0; i-- {
			if e.scope[i].Name == t.Name {
				return e.value(e.scope[i], v, path)
			}
		}
		return e.fail(path, fmt.Sprintf("type ^%s refers to no enclosing declaration", t.Name))
	case manifest.Any:
		// `*`: a type morloc could not name; the value goes as it is.
		if err := writeJSON(&e.b, v); err != nil {
			return e.fail(path, err.Error())
		}
	default:
		// Tables and handles have no JSON form nexus understands; their
		// commands are excluded from MCP, so pass whatever was given.
		if err := writeJSON(&e.b, v); err != nil {
			return e.fail(path, err.Error())
		}
	}
	return nil
}

func (e *poolEncoder) record(t *manifest.Type, obj map[string]any, path valuePath) *valueError {
	known := make(map[string]bool, len(t.Fields))
	for _, f := range t.Fields {
		known[f.Key] = true
	}
	var extra []string
	for k := range obj {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return e.fail(path.key(extra[0]), "unexpected field")
	}
	e.b.WriteByte('{')
	for i, f := range t.Fields {
		if i > 0 {
			e.b.WriteByte(',')
		}
		writeString(&e.b, f.Key)
		e.b.WriteByte(':')
		x, present := obj[f.Key]
		if !present {
			if !isOptional(f.Type) {
				return e.fail(path.key(f.Key), "missing required field")
			}
			e.b.WriteString("null")
			continue
		}
		if err := e.value(f.Type, x, path.key(f.Key)); err != nil {
			return err
		}
	}
	e.b.WriteByte('}')
	return nil
}

// strMap writes a Map given as [[key, value], ...] as {"key": value, ...},
// keys in the order given.
func (e *poolEncoder) strMap(t *manifest.Type, pairs []any, path valuePath) *valueError {
	pair := t.Elem.Unwrap()
	seen := make(map[string]bool, len(pairs))
	e.b.WriteByte('{')
	for i, p := range pairs {
		at := path.index(i)
		kv, ok := p.([]any)
		if !ok {
			return e.mismatch(pair, p, at)
		}
		if len(kv) != 2 {
			return e.fail(at, fmt.Sprintf("expected an array of exactly 2 items, got %d", len(kv)))
		}
		k, ok := kv[0].(string)
		if !ok {
			return e.fail(at.index(0), fmt.Sprintf("expected string, got %s", manifest.JSONKind(kv[0])))
		}
		if seen[k] {
			return e.fail(at.index(0), fmt.Sprintf("duplicate map key %s", strconv.Quote(k)))
		}
		seen[k] = true
		if i > 0 {
			e.b.WriteByte(',')
		}
		writeString(&e.b, k)
		e.b.WriteByte(':')
		if err := e.value(pair.Items[1], kv[1], at.index(1)); err != nil {
			return err
		}
	}
	e.b.WriteByte('}')
	return nil
}

// parseText reads one CLI-style string as a value of type t: a manifest
// default (`"1"`, `"2.5"`, `"true"`, `"\"/tmp\""`) or an argv token. With
// raw (a `quoted` string argument), the text is the string itself.
func parseText(text string, t *manifest.Type, raw bool) (json.RawMessage, string) {
	u := t
	for u.Kind == manifest.Recursive {
		u = u.Elem
	}
	switch u.Kind {
	case manifest.Optional:
		if text == "null" && !(raw && u.Elem.Unwrap().Kind == manifest.Str) {
			return json.RawMessage("null"), ""
		}
		return parseText(text, u.Elem, raw)
	case manifest.Str:
		if raw {
			return quoteRaw(text), ""
		}
		if len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"' {
			var s string
			if json.Unmarshal([]byte(text), &s) == nil {
				return quoteRaw(s), ""
			}
			return quoteRaw(text[1 : len(text)-1]), ""
		}
		return quoteRaw(text), ""
	case manifest.Bool:
		if text == "true" || text == "false" {
			return json.RawMessage(text), ""
		}
		return nil, fmt.Sprintf("expected true or false, got %s", strconv.Quote(text))
	case manifest.Int:
		if !isNumberText(text) {
			return nil, fmt.Sprintf("expected an integer, got %s", strconv.Quote(text))
		}
		s, msg := normalizeInt(text, u.Code)
		if msg != "" && !strings.HasPrefix(msg, "expected an integer from") {
			// Not an integer at all: say so in the CLI's own words.
			msg = fmt.Sprintf("expected an integer, got %s", strconv.Quote(text))
		}
		if msg != "" {
			return nil, msg
		}
		return json.RawMessage(s), ""
	case manifest.Float:
		out := text
		if !isNumberText(text) || text[0] == '+' || !json.Valid([]byte(text)) {
			f, err := strconv.ParseFloat(text, 64)
			if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
				// nan, inf, -inf, as morloc's CLI takes them
				return nonFiniteText(f), ""
			}
			if err != nil {
				return nil, fmt.Sprintf("expected a number, got %s", strconv.Quote(text))
			}
			out = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if isIntLiteral(out) {
			out += ".0" // a Real reaches the pool as a float
		}
		return json.RawMessage(out), ""
	case manifest.Nil:
		if text == "null" || text == "" {
			return json.RawMessage("null"), ""
		}
		return nil, fmt.Sprintf("expected null, got %s", strconv.Quote(text))
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, fmt.Sprintf("expected JSON (%s), got %s", expectedName(t), strconv.Quote(text))
	}
	out, verr := toPool(t, v)
	if verr != nil {
		return nil, verr.Error()
	}
	return out, ""
}

func quoteRaw(s string) json.RawMessage {
	var b bytes.Buffer
	writeString(&b, s)
	return json.RawMessage(b.Bytes())
}
