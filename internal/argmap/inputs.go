package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Input is work a call's arguments need before they go to the pool (or the
// evaluator): a `source: file` value to read, a path to check. Calls carry
// them, and Resolve does them when the call runs: over MCP a failure is
// then the call's error (isError), naming the argument and the check,
// while the server goes on serving.
type Input struct {
	Arg   int    // the argument's index in the command's args
	Field string // a group's field; "" for the argument itself
	// Label names the value in messages: "argument '_1'", "option
	// --config", "field 'pathr' of 'opts'".
	Label string
	Spec  *manifest.Arg  // the pos, opt or group entry whose fields apply
	Type  *manifest.Type // the value's own type (a path's file holds one)
	// Given: the caller gave the value (not a default); only then do
	// checks apply, as in morloc (phase2.rs preprocess_cli_value).
	Given bool
	// Elements: check each element of a list of paths (list_checks), for a
	// value given as JSON (over MCP); on the CLI form: list checks lines.
	Elements bool
}

// InputError is an Input that failed: its label and what was wrong.
type InputError struct {
	Label, Msg string
}

func (e *InputError) Error() string {
	if e.Label == "" {
		return e.Msg
	}
	return e.Label + ": " + e.Msg
}

// inputs lists the Inputs of the assembled args: s says which values the
// caller gave; elements whether list checks apply to JSON lists (MCP).
func (p *plan) inputs(s *supplied, elements bool) []Input {
	cli := !elements
	var out []Input
	add := func(in Input) {
		a := in.Spec
		switch {
		case a == nil || a.Many:
		case a.IsPath():
			out = append(out, in)
		case len(a.Checks) > 0 && in.Given:
			out = append(out, in)
		case elements && len(a.ListChecks) > 0 && in.Given:
			in.Elements = true
			out = append(out, in)
		}
	}
	for _, sl := range p.slots {
		switch sl.kind {
		case manifest.KindPos, manifest.KindOpt:
			_, given := s.vals[sl]
			add(Input{Arg: sl.index, Label: slotLabel(sl, cli), Spec: sl.arg, Type: sl.arg.T, Given: given})
		case manifest.KindGrp:
			for _, f := range sl.fields {
				if f.entry == nil {
					continue
				}
				_, given := s.fields[f]
				label := fmt.Sprintf("field '%s' of '%s'", f.key, sl.prop)
				if cli && f.entry.Kind == manifest.KindOpt {
					label = "option " + optSpelling(f.entry)
				}
				add(Input{Arg: sl.index, Field: f.key, Label: label, Spec: f.entry, Type: f.t, Given: given})
			}
		}
	}
	return out
}

// slotLabel names a positional by its property (on the CLI its metavar),
// an option by its spelling.
func slotLabel(sl *slot, cli bool) string {
	switch {
	case sl.kind == manifest.KindOpt:
		return "option " + optSpelling(sl.arg)
	case cli:
		return "argument " + posMetavar(sl.arg)
	}
	return "argument '" + sl.prop + "'"
}

// Resolve does the call's Inputs: it reads each `source: file` value's
// file (on the machine nexus runs on) as its form says, and checks each
// given path; the result is the call with those values in place, ready
// for the pool. It does no work for a call without Inputs.
func Resolve(call Call) (Call, error) {
	return resolve(call, osFS)
}

func resolve(call Call, fs dataFS) (Call, error) {
	if len(call.Inputs) == 0 {
		return call, nil
	}
	args := append([]json.RawMessage(nil), call.Args...)
	for _, in := range call.Inputs {
		if in.Arg >= len(args) {
			continue
		}
		raw := args[in.Arg]
		var obj map[string]json.RawMessage
		if in.Field != "" {
			if json.Unmarshal(raw, &obj) != nil {
				continue
			}
			raw = obj[in.Field]
		}
		v, err := resolveOne(in, raw, fs)
		if err != nil {
			return Call{}, &InputError{Label: in.Label, Msg: err.Error()}
		}
		if in.Field == "" {
			args[in.Arg] = v
			continue
		}
		args[in.Arg] = rebuildRecord(args[in.Arg], in.Field, v)
	}
	out := call
	out.Args = args
	out.Inputs = nil
	return out, nil
}

// rebuildRecord replaces one member of the record object rec, keeping the
// order of its members (the record's field order).
func rebuildRecord(rec json.RawMessage, key string, v json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(rec))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return rec
	}
	var b []byte
	b = append(b, '{')
	first := true
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return rec
		}
		k, _ := kt.(string)
		var mv json.RawMessage
		if err := dec.Decode(&mv); err != nil {
			return rec
		}
		if k == key {
			mv = v
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, quoteRaw(k)...)
		b = append(b, ':')
		b = append(b, mv...)
	}
	return append(b, '}')
}

func resolveOne(in Input, raw json.RawMessage, fs dataFS) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	a := in.Spec
	switch {
	case in.Elements:
		var paths []string
		if json.Unmarshal(raw, &paths) != nil {
			return raw, nil
		}
		for n, p := range paths {
			for _, c := range a.ListChecks {
				if err := listCheck(p, c.Value); err != nil {
					return nil, fmt.Errorf("element %d: %v", n+1, err)
				}
			}
		}
		return raw, nil
	case a.IsPath():
		var p string
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("expected the path of a file, got %s", raw)
		}
		if in.Given {
			if err := applyChecks(a, p); err != nil {
				return nil, err
			}
		}
		b, err := fs.readFile(p)
		if err != nil {
			return nil, fmt.Errorf("source: file: cannot open '%s': %v", p, unwrapPathError(err))
		}
		v, err := readForm(b, p, a, in.Type, fs)
		if err != nil {
			return nil, fmt.Errorf("file '%s': %v", p, err)
		}
		return v, nil
	default:
		var p string
		if err := json.Unmarshal(raw, &p); err != nil {
			return raw, nil
		}
		if err := applyChecks(a, p); err != nil {
			return nil, err
		}
		return raw, nil
	}
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	if pe, ok := err.(interface{ Unwrap() error }); ok {
		if inner := pe.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// FirstNul finds the first string in the JSON value raw holding a NUL
// character and says where, as morloc words it (null_check.rs
// first_null_in_json): "" for the value itself, "[2].name" inside it,
// then " (byte N of M)" (bytes of the UTF-8 string).
func FirstNul(raw json.RawMessage) (string, bool) {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	return firstNul(v, "")
}

func firstNul(v any, path string) (string, bool) {
	switch x := v.(type) {
	case string:
		if i := bytes.IndexByte([]byte(x), 0); i >= 0 {
			return fmt.Sprintf("%s (byte %d of %d)", path, i, len(x)), true
		}
	case []any:
		for i, e := range x {
			if at, ok := firstNul(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return at, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if at, ok := firstNul(x[k], path+"."+k); ok {
				return at, true
			}
		}
	}
	return "", false
}
