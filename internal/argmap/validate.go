package argmap

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A tool's arguments are checked against its validation schema
// (validationSchema) by the walker below rather than by a general JSON
// Schema library: nexus writes only a handful of keywords, and the library
// it used (santhosh-tekuri/jsonschema/v5) compiled every draft's
// metaschema at start-up, most of nexus's start-up budget. The walker finds
// the faults that library finds (draft 2020-12) and words the same message;
// the tests keep the library as the oracle (FuzzValidateAgainstJSONSchema).

// schemaNode is one node of a validation schema, read from the document
// nexus generates. It holds exactly the keywords typeSchema, recordSchema
// and newTool write; readSchema refuses any other, so that a keyword added
// there cannot go unchecked here.
type schemaNode struct {
	types    []string // "type": the JSON types allowed; empty: any
	enum     []string // "enum": the strings allowed; empty: any
	props    []schemaProp
	byName   map[string]*schemaNode // "properties"
	required []string
	closed   bool          // "additionalProperties": false
	prefix   []*schemaNode // "prefixItems"
	items    *schemaNode   // "items": the elements after the prefix
	// "minItems" and "maxItems", -1 when absent; nexus writes them only
	// together and equal (a tuple's or a fixed-length list's length), the
	// one count messages name.
	minItems, maxItems int
	// "minimum" and "maximum", nil when absent; nexus writes them only
	// together, the range of a sized integer.
	minimum, maximum *big.Int
	ref              *schemaNode // "$ref": a body under the root's "$defs"
	// "anyOf", which nexus writes in two forms only. [S, {"type":"null"}]
	// (a nullable $ref): orNull is S.
	orNull *schemaNode
	// [{"type":T}, {"enum":["NaN","Infinity","-Infinity"]}] (a Real's,
	// realSchema): the node's types are T, and nonFinite says that they
	// also admit those three strings.
	nonFinite bool
}

type schemaProp struct {
	name string
	node *schemaNode
}

// jsonTypes are the type names JSON Schema knows.
var jsonTypes = map[string]bool{
	"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true,
}

// readSchema reads a schema document as nexus writes it: "$defs" only at
// its root, and "$ref"s only to them ("#/$defs/<key>").
func readSchema(doc Object) (*schemaNode, error) {
	r := &schemaReader{defs: map[string]*schemaNode{}, defined: map[string]bool{}}
	root := r.node()
	if err := r.fill(root, doc, true); err != nil {
		return nil, err
	}
	for key, n := range r.defs {
		if !r.defined[key] {
			return nil, fmt.Errorf("$ref to #/$defs/%s, which is not defined", key)
		}
		if inPlaceCycle(n, nil) {
			return nil, fmt.Errorf("$defs %q refers to itself with no value between", key)
		}
	}
	return root, nil
}

// inPlaceCycle reports whether n reaches itself through "$ref" and "anyOf"
// alone, which apply to the same value: checking a value would not end.
func inPlaceCycle(n *schemaNode, path []*schemaNode) bool {
	for _, p := range path {
		if p == n {
			return true
		}
	}
	path = append(path, n)
	for _, next := range []*schemaNode{n.ref, n.orNull} {
		if next != nil && inPlaceCycle(next, path) {
			return true
		}
	}
	return false
}

// schemaReader reads one schema document; defs are the nodes of the
// root's "$defs", by key, made when first referred to or defined.
type schemaReader struct {
	defs    map[string]*schemaNode
	defined map[string]bool
}

func (r *schemaReader) node() *schemaNode { return &schemaNode{minItems: -1, maxItems: -1} }

// def is the node of the "$defs" member key.
func (r *schemaReader) def(key string) *schemaNode {
	n := r.defs[key]
	if n == nil {
		n = r.node()
		r.defs[key] = n
	}
	return n
}

func (r *schemaReader) read(doc Object) (*schemaNode, error) {
	n := r.node()
	return n, r.fill(n, doc, false)
}

// fill reads the keywords of doc into n.
func (r *schemaReader) fill(n *schemaNode, doc Object, root bool) error {
	var err error
	for _, m := range doc {
		switch m.Key {
		case "type":
			switch x := m.Value.(type) {
			case string:
				n.types = []string{x}
			case []any:
				for _, e := range x {
					s, ok := e.(string)
					if !ok {
						return fmt.Errorf("type names %T, not a string", e)
					}
					n.types = append(n.types, s)
				}
			default:
				return fmt.Errorf("type is %T", m.Value)
			}
			for _, s := range n.types {
				if !jsonTypes[s] {
					return fmt.Errorf("unknown type %q", s)
				}
			}
		case "enum":
			n.enum, err = appendStrings(n.enum, m)
		case "required":
			n.required, err = appendStrings(n.required, m)
		case "properties":
			x, ok := m.Value.(Object)
			if !ok {
				return fmt.Errorf("properties is %T", m.Value)
			}
			n.byName = make(map[string]*schemaNode, len(x))
			for _, p := range x {
				sub, ok := p.Value.(Object)
				if !ok {
					return fmt.Errorf("property %q is %T", p.Key, p.Value)
				}
				c, err := r.read(sub)
				if err != nil {
					return fmt.Errorf("property %q: %w", p.Key, err)
				}
				n.props = append(n.props, schemaProp{p.Key, c})
				n.byName[p.Key] = c
			}
		case "additionalProperties":
			x, ok := m.Value.(bool)
			if !ok {
				return fmt.Errorf("additionalProperties is %T, not a boolean", m.Value)
			}
			n.closed = !x
		case "items":
			x, ok := m.Value.(Object)
			if !ok {
				return fmt.Errorf("items is %T", m.Value)
			}
			c, err := r.read(x)
			if err != nil {
				return fmt.Errorf("items: %w", err)
			}
			n.items = c
		case "prefixItems":
			x, ok := m.Value.([]any)
			if !ok {
				return fmt.Errorf("prefixItems is %T", m.Value)
			}
			if len(x) == 0 {
				// As jsonschema compiled it: the metaschema wants at least
				// one (an empty tuple, t0, writes none).
				return fmt.Errorf("prefixItems is empty")
			}
			for i, e := range x {
				sub, ok := e.(Object)
				if !ok {
					return fmt.Errorf("prefixItems %d is %T", i, e)
				}
				c, err := r.read(sub)
				if err != nil {
					return fmt.Errorf("prefixItems %d: %w", i, err)
				}
				n.prefix = append(n.prefix, c)
			}
		case "minItems", "maxItems":
			x, ok := m.Value.(int)
			if !ok || x < 0 {
				return fmt.Errorf("%s is %v", m.Key, m.Value)
			}
			if m.Key == "minItems" {
				n.minItems = x
			} else {
				n.maxItems = x
			}
		case "minimum", "maximum":
			b, ok := bigInteger(m.Value)
			if !ok {
				return fmt.Errorf("%s is %v, not an integer", m.Key, m.Value)
			}
			if m.Key == "minimum" {
				n.minimum = b
			} else {
				n.maximum = b
			}
		case "$ref":
			x, ok := m.Value.(string)
			if !ok || !strings.HasPrefix(x, "#/$defs/") || strings.ContainsAny(x[len("#/$defs/"):], "/~%") {
				return fmt.Errorf("$ref %v is not one to the root's $defs", m.Value)
			}
			n.ref = r.def(x[len("#/$defs/"):])
		case "$defs":
			x, ok := m.Value.(Object)
			if !ok || !root {
				return fmt.Errorf("$defs is %T, or not at the root", m.Value)
			}
			for _, d := range x {
				sub, ok := d.Value.(Object)
				if !ok || r.defined[d.Key] {
					return fmt.Errorf("$defs member %q is %T, or defined twice", d.Key, d.Value)
				}
				r.defined[d.Key] = true
				if err := r.fill(r.def(d.Key), sub, false); err != nil {
					return fmt.Errorf("$defs %q: %w", d.Key, err)
				}
			}
		case "anyOf":
			x, ok := m.Value.([]any)
			if !ok || len(x) != 2 {
				return fmt.Errorf("anyOf is %v, not [S, {\"type\":\"null\"}] or a Real's", m.Value)
			}
			s, ok1 := x[0].(Object)
			second, ok2 := x[1].(Object)
			if ok1 && ok2 && isNonFiniteEnum(second) {
				// A Real's: its number branch holds a type alone.
				c, err := r.read(s)
				if err != nil || len(s) != 1 || s[0].Key != "type" || len(n.types) > 0 {
					return fmt.Errorf("anyOf is %v, not a Real's {\"anyOf\":[{\"type\":T},{\"enum\":[...]}]} (%v)", m.Value, err)
				}
				n.types, n.nonFinite = c.types, true
				continue
			}
			if !ok1 || !ok2 || len(second) != 1 || second[0].Key != "type" || second[0].Value != "null" {
				return fmt.Errorf("anyOf is %v, not [S, {\"type\":\"null\"}] or a Real's", m.Value)
			}
			c, err := r.read(s)
			if err != nil {
				return fmt.Errorf("anyOf 0: %w", err)
			}
			n.orNull = c
		case "description", "default":
			// annotations: no part in validation
		default:
			return fmt.Errorf("keyword %q is not one nexus validates", m.Key)
		}
		if err != nil {
			return err
		}
	}
	if n.minItems != n.maxItems {
		return fmt.Errorf("minItems %d and maxItems %d differ", n.minItems, n.maxItems)
	}
	return nil
}

// appendStrings appends the strings of keyword m's array ("enum",
// "required") to list.
func appendStrings(list []string, m Member) ([]string, error) {
	x, ok := m.Value.([]any)
	if !ok {
		return list, fmt.Errorf("%s is %T", m.Key, m.Value)
	}
	for _, e := range x {
		s, ok := e.(string)
		if !ok {
			return list, fmt.Errorf("%s holds %T, not a string", m.Key, e)
		}
		list = append(list, s)
	}
	return list, nil
}

// argSchema is a tool's validation schema ready to check arguments: its root
// node, and each top-level property's rank (argument order), by which a
// message picks the first of several faults.
type argSchema struct {
	root  *schemaNode
	order map[string]int
}

// argumentSchema reads the tool's validation schema once, on first use.
func (t *Tool) argumentSchema() (*argSchema, error) {
	t.validOnce.Do(func() {
		root, err := readSchema(t.validationSchema())
		if err != nil {
			t.validErr = err
			return
		}
		s := &argSchema{root: root, order: map[string]int{}}
		if pv, ok := t.InputSchema.Get("properties"); ok {
			for i, m := range pv.(Object) {
				s.order[m.Key] = i
			}
		}
		t.valid = s
	})
	if t.validErr != nil {
		return nil, fmt.Errorf("tool '%s': compiling its input schema: %w", t.Name, t.validErr)
	}
	return t.valid, nil
}

// validate checks decoded arguments against the tool's validation schema;
// of the faults, it words the one jsonschema's error tree ranks first
// (see fault.before).
func (t *Tool) validate(args map[string]any) error {
	s, err := t.argumentSchema()
	if err != nil {
		return err
	}
	w := &faultFinder{order: s.order, nullAt: -1}
	w.check(s.root, args)
	if w.first == nil {
		return nil
	}
	return t.describeFault(w.first, args)
}

// fault is one failing keyword, a leaf of jsonschema's error tree: its
// instance location, which keyword at which schema node, and the value it
// fails on.
type fault struct {
	// loc holds the instance location's segments as jsonschema writes
	// them: keys and indexes, except that an empty key adds no segment.
	loc     []string
	keyword string
	node    *schemaNode
	value   any
	// rank: the place in argument order of the property loc starts with
	// (-1 for an empty loc), then additionalProperties (0), required (1),
	// any other keyword (2).
	prop, class int
	orNull      bool   // a type fault of a value that may also be null
	text        string // loc as jsonschema writes it; "" until needed
}

// locSeg is one step into a value: a key, or an index (idx ≥ 0).
type locSeg struct {
	key string
	idx int
}

// location writes the fault's instance location as jsonschema does, each
// segment escaped ~ → ~0, / → ~1, then URL path-escaped. Faults that rank
// alike are ordered by this text: "/_1/10" comes before "/_1/9", "/a"
// before "/~1".
func (f *fault) location() string {
	if f.text == "" && len(f.loc) > 0 {
		var b strings.Builder
		for _, s := range f.loc {
			b.WriteByte('/')
			b.WriteString(url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")))
		}
		f.text = b.String()
	}
	return f.text
}

// before is the order in which the message picks faults: by top-level
// property in argument order (faults of the arguments object as a whole
// first), then a stranger before a missing field before anything else,
// then by instance location.
func (f *fault) before(g *fault) bool {
	if f.prop != g.prop {
		return f.prop < g.prop
	}
	if f.class != g.class {
		return f.class < g.class
	}
	return f.location() < g.location()
}

// faultFinder walks a value against a schema as jsonschema does, keeping
// the first fault by fault.before. Faults that rank alike keep the first
// found, as describe's stable sort did: they are found in the order of
// jsonschema's error tree (type; enum; required, properties,
// additionalProperties; minItems, maxItems, items), with the properties
// in schema order where jsonschema takes them in map order. (Only empty
// keys, which add no segment, let faults of two nodes share a location.)
type faultFinder struct {
	order map[string]int
	path  []locSeg // to the value being checked; empty keys left out
	first *fault
	// nullAt is len(path) where a nullable anyOf is checking its value
	// (-1: none), so that a wrong type there reads "... or null".
	nullAt int
}

func (w *faultFinder) fail(keyword string, n *schemaNode, v any) {
	f := &fault{keyword: keyword, node: n, value: v, prop: -1, class: 2, orNull: keyword == "type" && w.nullAt == len(w.path)}
	f.loc = make([]string, len(w.path))
	for i, s := range w.path {
		if s.idx >= 0 {
			f.loc[i] = strconv.Itoa(s.idx)
		} else {
			f.loc[i] = s.key
		}
	}
	if len(f.loc) > 0 {
		f.prop = w.order[f.loc[0]]
	}
	switch keyword {
	case "additionalProperties":
		f.class = 0
	case "required":
		f.class = 1
	}
	if w.first == nil || f.before(w.first) {
		w.first = f
	}
}

// check validates v against n by jsonschema's rules: a wrong type stops
// the other keywords at that node; object keywords apply only to objects,
// array keywords only to arrays; "$ref" and then "anyOf" come last.
func (w *faultFinder) check(n *schemaNode, v any) {
	if len(n.types) > 0 && !n.admits(v) {
		w.fail("type", n, v)
		return
	}
	if len(n.enum) > 0 && !n.inEnum(v) {
		w.fail("enum", n, v)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				w.fail("required", n, v)
				break
			}
		}
		for _, p := range n.props {
			pv, ok := x[p.name]
			if !ok {
				continue
			}
			if p.name == "" {
				w.check(p.node, pv) // jsonschema adds no segment for an empty key
				continue
			}
			// Once a fault is found, a later argument cannot hold the
			// first one: the properties are walked in argument order.
			if len(w.path) == 0 && w.first != nil && w.order[p.name] > w.first.prop {
				continue
			}
			w.path = append(w.path, locSeg{key: p.name, idx: -1})
			w.check(p.node, pv)
			w.path = w.path[:len(w.path)-1]
		}
		if n.closed {
			for k := range x {
				if _, ok := n.byName[k]; !ok {
					w.fail("additionalProperties", n, v)
					break
				}
			}
		}
	case json.Number:
		if n.minimum != nil || n.maximum != nil {
			r, ok := new(big.Rat).SetString(string(x))
			if ok && n.minimum != nil && r.Cmp(new(big.Rat).SetInt(n.minimum)) < 0 {
				w.fail("minimum", n, v)
			}
			if ok && n.maximum != nil && r.Cmp(new(big.Rat).SetInt(n.maximum)) > 0 {
				w.fail("maximum", n, v)
			}
		}
	case []any:
		if n.minItems >= 0 && len(x) < n.minItems {
			w.fail("minItems", n, v)
		}
		if n.maxItems >= 0 && len(x) > n.maxItems {
			w.fail("maxItems", n, v)
		}
		for i, e := range x {
			sub := n.items
			if i < len(n.prefix) {
				sub = n.prefix[i]
			}
			if sub == nil {
				break
			}
			w.path = append(w.path, locSeg{idx: i})
			w.check(sub, e)
			w.path = w.path[:len(w.path)-1]
		}
	}
	if n.ref != nil {
		w.check(n.ref, v)
	}
	// anyOf [S, {"type":"null"}]: null passes; any other value fails or
	// passes as S does, and the message is S's (describe leaves out the
	// null branch's "expected null").
	if n.orNull != nil && v != nil {
		outer := w.nullAt
		w.nullAt = len(w.path)
		w.check(n.orNull, v)
		w.nullAt = outer
	}
}

// admits reports whether v has one of n's types; "integer" takes any
// number of integral value (2.0, 1e3), as jsonschema reads it. A Real's
// node also takes "NaN", "Infinity" and "-Infinity".
func (n *schemaNode) admits(v any) bool {
	if s, ok := v.(string); ok && n.nonFinite {
		if _, ok := nonFiniteArg(s); ok {
			return true
		}
	}
	kind := valueType(v)
	for _, t := range n.types {
		if t == kind || t == "integer" && kind == "number" && integral(v.(json.Number)) {
			return true
		}
	}
	return false
}

func (n *schemaNode) inEnum(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for _, e := range n.enum {
		if e == s {
			return true
		}
	}
	return false
}

// valueType is the JSON Schema type of a decoded value ("number" for every
// number; admits decides "integer").
func valueType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// integral reports whether a number literal has an integral value. The
// literal is in checkNumbers's bounds, so big.Rat reads it cheaply.
func integral(n json.Number) bool {
	if !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.IsInt()
}

// faultPlace follows a fault's location, segment by segment, from the
// arguments to the value it names, and gives the argument path a message
// names it by ("a.b[2]") and the value itself (nil where none is).
func faultPlace(args map[string]any, loc []string) (path string, inst any) {
	inst = args
	for _, seg := range loc {
		switch x := inst.(type) {
		case map[string]any:
			path = memberPath(path, seg)
			inst = x[seg]
		case []any:
			path += "[" + seg + "]"
			i, _ := strconv.Atoi(seg)
			if i >= 0 && i < len(x) {
				inst = x[i]
			} else {
				inst = nil
			}
		}
	}
	return path, inst
}

// memberPath is the argument path of member key of the value at path.
func memberPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describeFault words a fault as one message naming the argument and what
// was expected. It finds the argument and the value to name by following
// the fault's location from the arguments (so
// where an empty key left no segment, it names the enclosing value).
func (t *Tool) describeFault(f *fault, args map[string]any) error {
	path, inst := faultPlace(args, f.loc)
	join := func(key string) string { return memberPath(path, key) }
	n := f.node
	switch f.keyword {
	case "type":
		want := strings.Join(n.types, " or ")
		if f.orNull {
			want += " or null"
		}
		if n.nonFinite {
			return &ArgError{Tool: t.Name, Arg: path, Msg: nonFiniteMismatch(want, inst)}
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected %s, got %s", want, manifest.JSONKind(inst))}
	case "required":
		obj, _ := inst.(map[string]any)
		for _, r := range n.required {
			if _, ok := obj[r]; !ok {
				return &ArgError{Tool: t.Name, Arg: join(r), kind: missing}
			}
		}
		// The value found by the location has every field (an empty key
		// led elsewhere): jsonschema's own words, of the value that failed.
		obj, _ = f.value.(map[string]any)
		var names []string
		for _, r := range n.required {
			if _, ok := obj[r]; !ok {
				names = append(names, schemaQuote(r))
			}
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: "missing properties: " + strings.Join(names, ", ")}
	case "additionalProperties":
		obj, _ := inst.(map[string]any)
		extra := n.strangers(obj)
		if len(extra) > 0 {
			names := make([]string, len(n.props))
			for i, p := range n.props {
				names[i] = p.name
			}
			want := "expected: none"
			if len(names) > 0 {
				want = "expected: " + strings.Join(names, ", ")
			}
			return &ArgError{Tool: t.Name, Arg: join(extra[0]), kind: unexpected, Msg: want}
		}
		// As for required; jsonschema lists the names in map order, here
		// they are sorted.
		obj, _ = f.value.(map[string]any)
		extra = n.strangers(obj)
		for i, k := range extra {
			extra[i] = schemaQuote(k)
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: "additionalProperties " + strings.Join(extra, ", ") + " not allowed"}
	case "minItems", "maxItems":
		arr, _ := inst.([]any)
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected an array of exactly %d items, got %d", n.minItems, len(arr))}
	case "minimum", "maximum":
		return &ArgError{Tool: t.Name, Arg: path, Msg: boundsMessage(n.minimum, n.maximum, inst)}
	case "enum":
		quoted := make([]string, len(n.enum))
		for i, e := range n.enum {
			quoted[i] = string(jsontext.AppendQuoted(nil, e))
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected one of %s, got %s", strings.Join(quoted, ", "), shortJSON(inst))}
	}
	// fail records only the keywords above.
	return fmt.Errorf("tool '%s': argument '%s' fails %s, which has no message", t.Name, path, f.keyword)
}

// nonFiniteMismatch words a value a Real's schema does not take: want is
// its types ("number", "number or null"); a string is shown, since it is
// most likely a NaN spelled otherwise ("nan", "inf").
func nonFiniteMismatch(want string, inst any) string {
	got := manifest.JSONKind(inst)
	if s, ok := inst.(string); ok {
		got = "string " + shortJSON(s)
	}
	return fmt.Sprintf(`expected %s or one of "NaN", "Infinity", "-Infinity", got %s`, want, got)
}

// strangers are obj's keys that are not n's properties, sorted.
func (n *schemaNode) strangers(obj map[string]any) []string {
	var extra []string
	for k := range obj {
		if _, ok := n.byName[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return extra
}

// schemaQuote quotes a name as jsonschema's messages do: 'name', with Go
// escapes except for '"', and ' escaped.
func schemaQuote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// bigInteger reads a schema's integer keyword value (json.Number or int).
func bigInteger(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int:
		return big.NewInt(int64(x)), true
	case json.Number:
		return new(big.Int).SetString(string(x), 10)
	}
	return nil, false
}

// boundsMessage words a number outside [lo, hi] (either may be nil) as
// normalizeInt does for a sized integer: the range, its code when it is one
// of morloc's sized integers, and the value as an integer literal.
func boundsMessage(lo, hi *big.Int, v any) string {
	got := fmt.Sprint(v)
	if num, ok := v.(json.Number); ok {
		if r, ok := new(big.Rat).SetString(string(num)); ok && r.IsInt() {
			got = r.Num().String()
		}
	}
	switch {
	case lo == nil:
		return fmt.Sprintf("expected a number of at most %s, got %s", hi, got)
	case hi == nil:
		return fmt.Sprintf("expected a number of at least %s, got %s", lo, got)
	}
	code := ""
	for c, rg := range intRanges {
		if rg.lo.Cmp(lo) == 0 && rg.hi.Cmp(hi) == 0 {
			code = " (" + c + ")"
		}
	}
	return fmt.Sprintf("expected an integer from %s to %s%s, got %s", lo, hi, code, got)
}
