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

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Call is what to send to a pool: which command (the tool's own, or a
// terminal's internal entry when _render is not "raw"), one JSON value per
// manifest argument, the numeric arrays among them (their places in Args
// hold null; docs/pool-protocol.md, "Arrays"), and whether the result may
// come back as an array.
type Call struct {
	Command *manifest.Command
	Args    []json.RawMessage
	Arrays  []ndarray.Array
	Ret     *ndarray.Ret
}

// ArgError is a tools/call whose arguments do not fit the tool: the message
// of a -32602 reply. Arg is the argument's path ("_1", "sysconfig.numThreads",
// "_1[0][1]"); empty when the fault is the arguments as a whole.
type ArgError struct {
	Tool, Arg, Msg string
	kind           argErrorKind
}

type argErrorKind int

const (
	badValue   argErrorKind = iota // argument 'A' of 'T': Msg
	missing                        // missing required argument 'A' of 'T'[: Msg]
	unexpected                     // unexpected argument 'A' of 'T' (Msg)
	notObject                      // arguments of 'T' must be an object, got Msg
)

func (e *ArgError) Error() string {
	switch e.kind {
	case missing:
		if e.Msg != "" {
			return fmt.Sprintf("missing required argument '%s' of '%s': %s", e.Arg, e.Tool, e.Msg)
		}
		return fmt.Sprintf("missing required argument '%s' of '%s'", e.Arg, e.Tool)
	case unexpected:
		return fmt.Sprintf("unexpected argument '%s' of '%s' (%s)", e.Arg, e.Tool, e.Msg)
	case notObject:
		return fmt.Sprintf("arguments of '%s' must be an object, got %s", e.Tool, e.Msg)
	}
	return fmt.Sprintf("argument '%s' of '%s': %s", e.Arg, e.Tool, e.Msg)
}

// ToPositional validates a tools/call's arguments against the tool's input
// schema, fills defaults and rebuilds the positional call. Absent or null
// arguments are an empty object. Numbers keep their text, so integers beyond
// 2^53 reach the pool byte for byte; an integer written 2.0 is sent as 2.
func (t *Tool) ToPositional(arguments json.RawMessage) (Call, error) {
	if call, ok := t.fastPositional(arguments); ok {
		return call, nil
	}
	return t.fullPositional(arguments)
}

// fullPositional is ToPositional by the book: arguments decoded, checked
// against the compiled schema, converted value by value. It decides every
// call the fast path declines, and words every error.
func (t *Tool) fullPositional(arguments json.RawMessage) (Call, error) {
	args := map[string]any{}
	if trimmed := bytes.TrimSpace(arguments); len(trimmed) > 0 && string(trimmed) != "null" {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return Call{}, &ArgError{Tool: t.Name, kind: notObject, Msg: "invalid JSON"}
		}
		if dec.More() {
			return Call{}, &ArgError{Tool: t.Name, kind: notObject, Msg: "trailing data after the object"}
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return Call{}, &ArgError{Tool: t.Name, kind: notObject, Msg: jsonKind(v)}
		}
		args = obj
	}
	if err := t.checkNumbers(args); err != nil {
		return Call{}, err
	}
	schema, err := t.compiled()
	if err != nil {
		return Call{}, err
	}
	if err := schema.Validate(args); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return Call{}, t.describe(ve, args)
		}
		return Call{}, fmt.Errorf("tool '%s': validating arguments: %w", t.Name, err)
	}

	s := newSupplied()
	for _, sl := range t.plan.slots {
		if sl.kind == manifest.KindGrp {
			if err := t.supplyGroup(s, sl, args); err != nil {
				return Call{}, err
			}
			continue
		}
		v, ok := args[sl.prop]
		if !ok {
			continue
		}
		raw, verr := toPool(argType(sl.arg), v)
		if verr != nil {
			return Call{}, &ArgError{Tool: t.Name, Arg: sl.prop + verr.Path, Msg: verr.Msg}
		}
		s.vals[sl] = raw
	}
	out, err := t.plan.assemble(s)
	if err != nil {
		var me *missingError
		if errors.As(err, &me) {
			return Call{}, t.missing(me)
		}
		return Call{}, err
	}
	cmd := t.Command
	if r, ok := args["_render"].(string); ok && r != "raw" {
		if entry := t.renders[r]; entry != nil {
			cmd = entry
		}
	}
	return Call{Command: cmd, Args: out, Ret: retOf(cmd)}, nil
}

// Bounds on number literals, checked before schema validation: the
// validator turns every number at an integer position into a big.Rat, which
// for a long literal or a huge exponent costs seconds, or panics.
const (
	maxNumberLen      = 4096
	maxNumberExponent = maxIntExponent
)

// checkNumbers rejects number literals beyond maxNumberLen characters or
// with an exponent beyond ±maxNumberExponent, wherever they are.
func (t *Tool) checkNumbers(args map[string]any) error {
	var walk func(v any, path valuePath) error
	walk = func(v any, path valuePath) error {
		switch x := v.(type) {
		case json.Number:
			if !numberInBounds(string(x)) {
				return &ArgError{Tool: t.Name, Arg: path.String(), Msg: fmt.Sprintf("number %s is out of range (at most %d characters, exponent within ±%d)",
					shortText(string(x)), maxNumberLen, maxNumberExponent)}
			}
		case []any:
			for i, e := range x {
				if err := walk(e, path.index(i)); err != nil {
					return err
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := walk(x[k], path.key(k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(args, nil)
}

func numberInBounds(s string) bool {
	if len(s) > maxNumberLen {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err == nil && exp <= maxNumberExponent && exp >= -maxNumberExponent
}

func shortText(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// argType is the type of the value an argument takes: a variadic argument
// whose schema is not already a list takes a list of it.
func argType(a *manifest.Arg) *manifest.Type {
	if a.Many && a.T.Unwrap().Kind != manifest.List {
		return &manifest.Type{Kind: manifest.List, Elem: a.T}
	}
	return a.T
}

func (t *Tool) supplyGroup(s *supplied, sl *slot, args map[string]any) error {
	if sl.whole {
		v, ok := args[sl.prop]
		if !ok {
			return nil
		}
		obj, _ := v.(map[string]any) // validated: an object
		s.wholeGiven[sl] = true
		for _, f := range sl.fields {
			fv, ok := obj[f.key]
			if !ok {
				continue
			}
			raw, verr := toPool(f.t, fv)
			if verr != nil {
				return &ArgError{Tool: t.Name, Arg: sl.prop + "." + f.key + verr.Path, Msg: verr.Msg}
			}
			s.fields[f] = raw
		}
		return nil
	}
	for _, f := range sl.fields {
		fv, ok := args[f.key]
		if !ok {
			continue
		}
		raw, verr := toPool(f.t, fv)
		if verr != nil {
			return &ArgError{Tool: t.Name, Arg: f.key + verr.Path, Msg: verr.Msg}
		}
		s.fields[f] = raw
	}
	return nil
}

func (t *Tool) missing(me *missingError) error {
	sl := me.slot
	switch {
	case me.field == nil:
		return &ArgError{Tool: t.Name, Arg: sl.prop, kind: missing}
	case sl.whole:
		// Only reached when the whole record was left out: a partial record
		// missing such a field fails validation first.
		return &ArgError{Tool: t.Name, Arg: sl.prop, kind: missing, Msg: fmt.Sprintf("field '%s' has no default", me.field.key)}
	}
	return &ArgError{Tool: t.Name, Arg: me.field.key, kind: missing}
}

// describe turns jsonschema's error tree into one message naming the
// argument and what was expected. Of several faults it reports the first by
// argument order, so the message does not depend on map iteration.
func (t *Tool) describe(ve *jsonschema.ValidationError, args map[string]any) error {
	var leaves []*jsonschema.ValidationError
	var collect func(*jsonschema.ValidationError)
	collect = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			collect(c)
		}
	}
	collect(ve)
	order := map[string]int{}
	if pv, ok := t.InputSchema.Get("properties"); ok {
		for i, m := range pv.(Object) {
			order[m.Key] = i
		}
	}
	rank := func(e *jsonschema.ValidationError) (int, int) {
		segs := pointer(e.InstanceLocation)
		prop := -1
		if len(segs) > 0 {
			prop = order[segs[0]]
		}
		kw := 2
		switch lastSegment(e.KeywordLocation) {
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
	return t.describeLeaf(leaves[0], args)
}

func (t *Tool) describeLeaf(e *jsonschema.ValidationError, args map[string]any) error {
	keyword := lastSegment(e.KeywordLocation)
	kwPath := pointer(e.KeywordLocation)
	var schemaAt any = t.schemaDoc
	for _, seg := range kwPath[:max(len(kwPath)-1, 0)] {
		schemaAt = child(schemaAt, seg)
	}
	sch, _ := schemaAt.(Object)

	var inst any = args
	path := ""
	for _, seg := range pointer(e.InstanceLocation) {
		switch x := inst.(type) {
		case map[string]any:
			if path == "" {
				path = seg
			} else {
				path += "." + seg
			}
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
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch keyword {
	case "type":
		var want string
		switch x := schemaGet(sch, "type").(type) {
		case string:
			want = x
		case []any:
			names := make([]string, len(x))
			for i, n := range x {
				names[i], _ = n.(string)
			}
			want = strings.Join(names, " or ")
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected %s, got %s", want, jsonKind(inst))}
	case "required":
		obj, _ := inst.(map[string]any)
		req, _ := schemaGet(sch, "required").([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				return &ArgError{Tool: t.Name, Arg: join(name), kind: missing}
			}
		}
	case "additionalProperties":
		obj, _ := inst.(map[string]any)
		props, _ := schemaGet(sch, "properties").(Object)
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
		lo, hi := schemaGet(sch, "minItems"), schemaGet(sch, "maxItems")
		if lo == hi && lo != nil {
			return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected an array of exactly %v items, got %d", lo, len(arr))}
		}
	case "enum":
		vals, _ := schemaGet(sch, "enum").([]any)
		quoted := make([]string, len(vals))
		for i, v := range vals {
			b, _ := Object{{"v", v}}.MarshalJSON()
			quoted[i] = string(b[5 : len(b)-1])
		}
		return &ArgError{Tool: t.Name, Arg: path, Msg: fmt.Sprintf("expected one of %s, got %s", strings.Join(quoted, ", "), shortJSON(inst))}
	}
	return &ArgError{Tool: t.Name, Arg: path, Msg: e.Message}
}

// shortJSON renders a value for a message, cut to a readable length.
func shortJSON(v any) string {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return jsonKind(v)
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func schemaGet(o Object, key string) any {
	v, _ := o.Get(key)
	return v
}

// child steps one JSON-pointer segment into a schema document.
func child(v any, seg string) any {
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
func pointer(p string) []string {
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

func lastSegment(p string) string {
	segs := pointer(p)
	if len(segs) == 0 {
		return ""
	}
	return segs[len(segs)-1]
}

// JSONArgs returns the call's arguments with its arrays written back into
// them as JSON, for a callee that takes no arrays.
func (c Call) JSONArgs() ([]json.RawMessage, error) {
	if len(c.Arrays) == 0 {
		return c.Args, nil
	}
	args := append([]json.RawMessage(nil), c.Args...)
	for i := range c.Arrays {
		a := &c.Arrays[i]
		text, err := ndarray.AppendPoolJSON(nil, a)
		if err != nil {
			return nil, err
		}
		idx, ok := a.Path[0].(int)
		if !ok || idx < 0 || idx >= len(args) {
			return nil, fmt.Errorf("array path %v names no argument", a.Path)
		}
		if args[idx], err = ndarray.Place(args[idx], a.Path[1:], text); err != nil {
			return nil, err
		}
	}
	return args, nil
}
