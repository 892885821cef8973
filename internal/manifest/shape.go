package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// shape describes the JSON type expected at a manifest key, so that a fault
// is reported with its JSON path before decoding into Go structs (whose own
// errors lose array indices).
type shape struct {
	kind     string // "string", "int", "bool", "array", "object", "any"
	required bool
	nullable bool
	elem     *shape            // array element
	fields   map[string]*shape // object members that are checked
}

func str() *shape             { return &shape{kind: "string", nullable: true} }
func reqStr() *shape          { return &shape{kind: "string", required: true} }
func integer() *shape         { return &shape{kind: "int", nullable: true} }
func boolean() *shape         { return &shape{kind: "bool", nullable: true} }
func arrayOf(e *shape) *shape { return &shape{kind: "array", nullable: true, elem: e} }
func object(f map[string]*shape) *shape {
	return &shape{kind: "object", nullable: true, fields: f}
}
func required(s *shape) *shape { c := *s; c.required, c.nullable = true, false; return &c }

var argShape = object(map[string]*shape{
	"kind":      reqStr(),
	"schema":    str(),
	"type":      str(),
	"name":      str(),
	"metavar":   str(),
	"quoted":    boolean(),
	"many":      boolean(),
	"stdin":     boolean(),
	"desc":      arrayOf(reqStr()),
	"short":     str(),
	"long":      str(),
	"long_rev":  str(),
	"default":   str(),
	"group_opt": object(map[string]*shape{"short": str(), "long": str()}),
	"metadata":  object(nil),
	// argfields.go
	"source":      str(),
	"form":        str(),
	"checks":      arrayOf(checkEntryShape),
	"list_source": str(),
	"list_form":   str(),
	"list_checks": arrayOf(checkEntryShape),
	"format":      str(),
	"constraints": constraintsShape,
})

var checkEntryShape = object(map[string]*shape{"kind": reqStr(), "value": reqStr()})

var constraintsShape = arrayOf(object(map[string]*shape{"type": reqStr(), "value": {kind: "any", nullable: true}}))

func init() {
	// entries refer back to argShape.
	argShape.fields["entries"] = arrayOf(object(map[string]*shape{
		"key": reqStr(),
		"arg": required(argShape),
	}))
}

var manifestShape = required(object(map[string]*shape{
	"name": reqStr(),
	"build": object(map[string]*shape{
		"path": str(), "time": integer(), "morloc_version": str(), "build_params": str(),
	}),
	"pools": arrayOf(object(map[string]*shape{
		"lang":              reqStr(),
		"exec":              required(arrayOf(reqStr())),
		"socket":            str(),
		"pool_hash":         str(),
		"allow_string_null": boolean(),
		"metadata":          object(nil),
	})),
	"commands": required(arrayOf(object(map[string]*shape{
		"name":         reqStr(),
		"type":         reqStr(),
		"mid":          integer(),
		"pool":         integer(),
		"needed_pools": arrayOf(required(integer())),
		"desc":         arrayOf(reqStr()),
		"args":         arrayOf(required(argShape)),
		"return": object(map[string]*shape{
			"schema":      reqStr(),
			"type":        str(),
			"desc":        arrayOf(reqStr()),
			"mime":        str(),
			"metadata":    object(nil),
			"constraints": constraintsShape,
		}),
		"internal": boolean(),
		"terminals": arrayOf(object(map[string]*shape{
			"short": str(), "long": str(), "entry": reqStr(), "description": str(),
			"render": boolean(), "default": boolean(),
		})),
		"metadata":    object(nil),
		"group":       str(),
		"constraints": constraintsShape,
	}))),
	"groups": arrayOf(object(map[string]*shape{
		"name": reqStr(), "desc": arrayOf(reqStr()), "metadata": object(nil),
	})),
	"desc":        arrayOf(reqStr()),
	"metadata":    object(nil),
	"inline_size": integer(),
	"no_shm":      boolean(),
	"tmpdir":      str(),
	// argfields.go
	"epilogues":              arrayOf(arrayOf(reqStr())),
	"unsafe_skip_null_check": boolean(),
	"run_log":                object(map[string]*shape{"prologue": str(), "epilogue_ok": str(), "epilogue_fail": str()}),
	"capabilities":           arrayOf(reqStr()),
}))

// JSONKind names the JSON type of a value decoded with UseNumber, as
// messages say it: a number written without fraction or exponent is
// "integer", any other "number".
func JSONKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

var wantNames = map[string]string{
	"string": "a string", "int": "an integer", "bool": "a boolean",
	"array": "an array", "object": "an object",
}

func checkShape(v any, path string, s *shape) error {
	fail := func(format string, a ...any) error {
		return &Error{Path: path, Msg: fmt.Sprintf(format, a...)}
	}
	if v == nil {
		if s.nullable {
			return nil
		}
		return fail("expected %s, got null", wantNames[s.kind])
	}
	got := JSONKind(v)
	switch s.kind {
	case "string":
		if got != "string" {
			return fail("expected a string, got %s", got)
		}
	case "bool":
		if got != "boolean" {
			return fail("expected a boolean, got %s", got)
		}
	case "int":
		if got != "integer" {
			return fail("expected an integer, got %s", got)
		}
		if _, err := v.(json.Number).Int64(); err != nil {
			return fail("expected an integer of 64 bits, got %s", v)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fail("expected an array, got %s", got)
		}
		if s.elem != nil {
			for i, e := range arr {
				if err := checkShape(e, fmt.Sprintf("%s[%d]", path, i), s.elem); err != nil {
					return err
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("expected an object, got %s", got)
		}
		keys := make([]string, 0, len(s.fields))
		for k := range s.fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fs := s.fields[k]
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			fv, present := obj[k]
			if !present {
				if fs.required {
					return &Error{Path: sub, Msg: fmt.Sprintf("missing required key: expected %s", wantNames[fs.kind])}
				}
				continue
			}
			if err := checkShape(fv, sub, fs); err != nil {
				return err
			}
		}
	}
	return nil
}
