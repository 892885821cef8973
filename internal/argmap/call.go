package argmap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Call is what to send to a pool: which command (the tool's own, or a
// terminal's internal entry when _render is not "raw"), one JSON value per
// manifest argument, the numeric arrays among them (their places in Args
// hold null; docs/internals.md, "Arrays"), and whether the result may
// come back as an array.
type Call struct {
	Command *manifest.Command
	Args    []json.RawMessage
	Arrays  []ndarray.Array
	Ret     *ndarray.Ret
	// Inputs are the files to read and paths to check before the call
	// runs (inputs.go): Resolve does them.
	Inputs []Input
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
	if !t.shaped {
		if call, ok := t.fastPositional(arguments); ok {
			return call, nil
		}
	}
	return t.fullPositional(arguments)
}

// fullPositional is ToPositional by the book: arguments decoded, checked
// against the tool's validation schema, converted value by value. It
// decides every call the fast path declines, and words every error.
func (t *Tool) fullPositional(arguments json.RawMessage) (Call, error) {
	args, err := t.decodeArguments(arguments)
	if err != nil {
		return Call{}, err
	}
	if err := t.checkNumbers(args); err != nil {
		return Call{}, err
	}
	if err := t.validate(args); err != nil {
		return Call{}, err
	}
	return t.convert(args)
}

// decodeArguments decodes a tools/call's arguments, numbers as
// json.Number; absent or null arguments are an empty object.
func (t *Tool) decodeArguments(arguments json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if trimmed := bytes.TrimSpace(arguments); len(trimmed) > 0 && string(trimmed) != "null" {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, &ArgError{Tool: t.Name, kind: notObject, Msg: "invalid JSON"}
		}
		if dec.More() {
			return nil, &ArgError{Tool: t.Name, kind: notObject, Msg: "trailing data after the object"}
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, &ArgError{Tool: t.Name, kind: notObject, Msg: manifest.JSONKind(v)}
		}
		args = obj
	}
	return args, nil
}

// convert turns validated arguments into the positional call: each value
// in pool form (its own faults, such as a sized integer's range, reported
// here), defaults filled, and the command _render names chosen.
func (t *Tool) convert(args map[string]any) (Call, error) {
	s := newSupplied()
	var nonFinite bool // a Real argument is NaN or an infinity
	for _, sl := range t.plan.slots {
		if sl.kind == manifest.KindGrp {
			saw, err := t.supplyGroup(s, sl, args)
			if err != nil {
				return Call{}, err
			}
			nonFinite = nonFinite || saw
			continue
		}
		v, ok := args[sl.prop]
		if !ok {
			continue
		}
		raw, saw, verr := argToPool(surfaceType(sl.arg), v)
		if verr != nil {
			return Call{}, &ArgError{Tool: t.Name, Arg: sl.prop + verr.Path, Msg: verr.Msg}
		}
		s.vals[sl] = raw
		nonFinite = nonFinite || saw
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
	var arrays []ndarray.Array
	if nonFinite {
		// The function gets the double itself, as from the CLI.
		out, arrays = nonFiniteArrays(t.Command, out)
	}
	return Call{Command: cmd, Args: out, Arrays: arrays, Ret: retOf(cmd), Inputs: t.plan.inputs(s, true)}, nil
}

// argToPool is toPool for a tools/call's argument, where a Real may be
// "NaN", "Infinity" or "-Infinity"; nonFinite reports whether one was.
func argToPool(t *manifest.Type, v any) (raw json.RawMessage, nonFinite bool, err *valueError) {
	e := &poolEncoder{nonFinite: true}
	if err := e.value(t, v, nil); err != nil {
		return nil, false, err
	}
	return json.RawMessage(e.b.Bytes()), e.sawNonFinite, nil
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
			for _, k := range slices.Sorted(maps.Keys(x)) {
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

// supplyGroup writes a group's fields into s; nonFinite reports whether a
// Real among them is NaN or an infinity.
func (t *Tool) supplyGroup(s *supplied, sl *slot, args map[string]any) (nonFinite bool, err error) {
	// An unrolled group's fields are arguments; a whole one's are members
	// of its property's object.
	fields, prefix := args, ""
	if sl.whole {
		v, ok := args[sl.prop]
		if !ok {
			return false, nil
		}
		fields, _ = v.(map[string]any) // validated: an object
		prefix = sl.prop + "."
		s.wholeGiven[sl] = true
	}
	for _, f := range sl.fields {
		fv, ok := fields[f.key]
		if !ok {
			continue
		}
		raw, saw, verr := argToPool(f.surface(), fv)
		if verr != nil {
			return false, &ArgError{Tool: t.Name, Arg: prefix + f.key + verr.Path, Msg: verr.Msg}
		}
		s.fields[f] = raw
		nonFinite = nonFinite || saw
	}
	return nonFinite, nil
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

// shortJSON renders a value for a message, cut to a readable length.
func shortJSON(v any) string {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return manifest.JSONKind(v)
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
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
