package argmap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// The validation as it was before validate.go, the oracle that
// FuzzValidateAgainstJSONSchema holds the walker to: santhosh-tekuri/
// jsonschema/v5 compiling the tool's validation schema (draft 2020-12), its
// error tree turned into one message by describe and describeLeaf. The code
// is as it was in tools.go and call.go, but for the schema document passed
// as a parameter and the compiled schemas cached here; and, since schemas
// have "$ref"s (recursive types), a leaf's schema is found by its absolute
// keyword location, and of an "anyOf" [S, {"type":"null"}] (a nullable
// $ref) that a non-null value fails, only S's faults are described (a wrong
// type of the value itself as "expected object or null"); of a Real's
// "anyOf" [{"type":T}, {"enum":["NaN","Infinity","-Infinity"]}], only the
// type's, saying that the strings would do.

// oracleFullPositional is fullPositional with jsonschema doing the
// validation; decoding, the number bounds and the conversion are shared.
func oracleFullPositional(t *Tool, arguments json.RawMessage) (Call, error) {
	args, err := t.decodeArguments(arguments)
	if err != nil {
		return Call{}, err
	}
	if err := t.checkNumbers(args); err != nil {
		return Call{}, err
	}
	schema, doc, err := oracleCompiled(t)
	if err != nil {
		return Call{}, err
	}
	if err := schema.Validate(args); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return Call{}, oracleDescribe(t, doc, ve, args)
		}
		return Call{}, fmt.Errorf("tool '%s': validating arguments: %w", t.Name, err)
	}
	return t.convert(args)
}

type oracleSchema struct {
	schema *jsonschema.Schema
	doc    Object
	err    error
}

var (
	oracleMu      sync.Mutex
	oracleSchemas = map[*Tool]*oracleSchema{}
)

// oracleCompiled compiles a tool's validation schema once.
func oracleCompiled(t *Tool) (*jsonschema.Schema, Object, error) {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	o := oracleSchemas[t]
	if o == nil {
		o = &oracleSchema{doc: t.validationSchema()}
		oracleSchemas[t] = o
		doc, err := o.doc.MarshalJSON()
		if err != nil {
			o.err = err
		} else {
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			const url = "tool.json"
			if o.err = c.AddResource(url, bytes.NewReader(doc)); o.err == nil {
				o.schema, o.err = c.Compile(url)
			}
		}
	}
	if o.err != nil {
		return nil, nil, fmt.Errorf("tool '%s': compiling its input schema: %w", t.Name, o.err)
	}
	return o.schema, o.doc, nil
}

// oracleDescribe is describe as it was: it turns jsonschema's error tree into
// one message naming the argument and what was expected. Of several faults it
// reports the first by argument order, so the message does not depend on map
// iteration.
func oracleDescribe(t *Tool, doc Object, ve *jsonschema.ValidationError, args map[string]any) error {
	var leaves []*jsonschema.ValidationError
	orNull := map[*jsonschema.ValidationError]bool{}
	// A Real's anyOf [{"type":T},{"enum":["NaN","Infinity","-Infinity"]}]
	// that a value fails is described by its type leaf alone, which says
	// that the three strings would do too (nonFinite).
	nonFinite := map[*jsonschema.ValidationError]bool{}
	// nullAt is the instance location of the innermost nullable anyOf
	// whose null branch was left out ("\x00": none).
	var collect func(e *jsonschema.ValidationError, nullAt string)
	collect = func(e *jsonschema.ValidationError, nullAt string) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			orNull[e] = oracleLastSegment(e.KeywordLocation) == "type" && e.InstanceLocation == nullAt
			return
		}
		if oracleLastSegment(e.KeywordLocation) == "anyOf" {
			if alts, _ := oracleSchemaGet(oracleSchemaOf(doc, e), "anyOf").([]any); len(alts) == 2 {
				if enum, _ := alts[1].(Object); isNonFiniteEnum(enum) {
					for _, c := range e.Causes {
						if len(c.Causes) == 0 && oracleLastSegment(c.KeywordLocation) == "type" {
							leaves = append(leaves, c)
							orNull[c] = c.InstanceLocation == nullAt
							nonFinite[c] = true
						}
					}
					return
				}
			}
		}
		isNull := func(c *jsonschema.ValidationError) bool {
			return oracleLastSegment(e.KeywordLocation) == "anyOf" && len(c.Causes) == 0 &&
				oracleLastSegment(c.KeywordLocation) == "type" && oracleIsNullSchema(doc, c)
		}
		for _, c := range e.Causes {
			if isNull(c) {
				nullAt = e.InstanceLocation
			}
		}
		for _, c := range e.Causes {
			if !isNull(c) { // the null branch is left out: the value is not null
				collect(c, nullAt)
			}
		}
	}
	collect(ve, "\x00")
	order := map[string]int{}
	if pv, ok := t.InputSchema.Get("properties"); ok {
		for i, m := range pv.(Object) {
			order[m.Key] = i
		}
	}
	rank := func(e *jsonschema.ValidationError) (int, int) {
		segs := oraclePointer(e.InstanceLocation)
		prop := -1
		if len(segs) > 0 {
			prop = order[segs[0]]
		}
		kw := 2
		switch oracleLastSegment(e.KeywordLocation) {
		case "additionalProperties":
			kw = 0
		case "required":
			kw = 1
		}
		return prop, kw
	}
	sort.SliceStable(leaves, func(i, j int) bool {
		pi, ki := rank(leaves[i])
		pj, kj := rank(leaves[j])
		if pi != pj {
			return pi < pj
		}
		if ki != kj {
			return ki < kj
		}
		return leaves[i].InstanceLocation < leaves[j].InstanceLocation
	})
	return oracleDescribeLeaf(t, doc, leaves[0], orNull[leaves[0]], nonFinite[leaves[0]], args)
}

func oracleDescribeLeaf(t *Tool, doc Object, e *jsonschema.ValidationError, orNull, nonFinite bool, args map[string]any) error {
	keyword := oracleLastSegment(e.KeywordLocation)
	sch := oracleSchemaOf(doc, e)

	path, inst := faultPlace(args, oraclePointer(e.InstanceLocation))
	join := func(key string) string { return memberPath(path, key) }
	switch keyword {
	case "type":
		var want string
		switch x := oracleSchemaGet(sch, "type").(type) {
		case string:
			want = x
		case []any:
			names := make([]string, len(x))
			for i, n := range x {
				names[i], _ = n.(string)
			}
			want = strings.Join(names, " or ")
		}
		if orNull {
			want += " or null"
		}
		if nonFinite {
			got := manifest.JSONKind(inst)
			if s, ok := inst.(string); ok {
				got = "string " + shortJSON(s)
			}
			return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf(`expected %s or one of "NaN", "Infinity", "-Infinity", got %s`, want, got)}
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected %s, got %s", want, manifest.JSONKind(inst))}
	case "required":
		obj, _ := inst.(map[string]any)
		req, _ := oracleSchemaGet(sch, "required").([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				return &ArgError{Tool: t.Name, Arg: join(name), kind: missing}
			}
		}
	case "additionalProperties":
		obj, _ := inst.(map[string]any)
		props, _ := oracleSchemaGet(sch, "properties").(Object)
		var extra []string
		for k := range obj {
			if _, ok := props.Get(k); !ok {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			names := make([]string, len(props))
			for i, m := range props {
				names[i] = m.Key
			}
			want := "expected: none"
			if len(names) > 0 {
				want = "expected: " + strings.Join(names, ", ")
			}
			return &ArgError{Tool: t.Name, Arg: join(extra[0]), kind: unexpected, Msg: want}
		}
	case "minItems", "maxItems":
		arr, _ := inst.([]any)
		lo, hi := oracleSchemaGet(sch, "minItems"), oracleSchemaGet(sch, "maxItems")
		if lo == hi && lo != nil {
			return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected an array of exactly %v items, got %d", lo, len(arr))}
		}
	case "minimum", "maximum":
		lo, _ := bigInteger(oracleSchemaGet(sch, "minimum"))
		hi, _ := bigInteger(oracleSchemaGet(sch, "maximum"))
		return &ArgError{Tool: t.Name, Arg: path, Msg: boundsMessage(lo, hi, inst)}
	case "enum":
		vals, _ := oracleSchemaGet(sch, "enum").([]any)
		quoted := make([]string, len(vals))
		for i, v := range vals {
			b, _ := Object{{"v", v}}.MarshalJSON()
			quoted[i] = string(b[5 : len(b)-1])
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected one of %s, got %s", strings.Join(quoted, ", "), shortJSON(inst))}
	}
	return &ArgError{Tool: t.Name, Arg: path, Msg: e.Message}
}

// oracleSchemaOf is the schema (in doc) whose keyword e failed, found by
// e's absolute keyword location, which leads through "$ref"s to "$defs".
func oracleSchemaOf(doc Object, e *jsonschema.ValidationError) Object {
	loc := e.AbsoluteKeywordLocation
	loc = loc[strings.IndexByte(loc, '#')+1:]
	kwPath := oraclePointer(loc)
	var schemaAt any = doc
	for _, seg := range kwPath[:max(len(kwPath)-1, 0)] {
		schemaAt = oracleChild(schemaAt, seg)
	}
	sch, _ := schemaAt.(Object)
	return sch
}

// oracleIsNullSchema reports whether the leaf e is the type of a schema
// {"type":"null"}.
func oracleIsNullSchema(doc Object, e *jsonschema.ValidationError) bool {
	sch := oracleSchemaOf(doc, e)
	return len(sch) == 1 && sch[0].Key == "type" && sch[0].Value == "null"
}

func oracleSchemaGet(o Object, key string) any {
	v, _ := o.Get(key)
	return v
}

// child steps one JSON-pointer segment into a schema document.
func oracleChild(v any, seg string) any {
	switch x := v.(type) {
	case Object:
		c, _ := x.Get(seg)
		return c
	case []any:
		i, err := strconv.Atoi(seg)
		if err == nil && i >= 0 && i < len(x) {
			return x[i]
		}
	}
	return nil
}

// pointer splits a JSON pointer as jsonschema writes it (segments
// URL-escaped, then ~1 and ~0 escaped).
func oraclePointer(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

func oracleLastSegment(p string) string {
	segs := oraclePointer(p)
	if len(segs) == 0 {
		return ""
	}
	return segs[len(segs)-1]
}
