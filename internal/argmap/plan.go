package argmap

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// plan binds each manifest argument of a command to where its value comes
// from (an MCP property, CLI tokens) and to its typed default. MCP calls and
// CLI runs both end in plan.assemble, so they fill defaults the same way.
type plan struct {
	cmd   *manifest.Command
	slots []*slot
}

type slot struct {
	kind  string // manifest.KindPos, KindOpt, KindFlag, KindGrp
	arg   *manifest.Arg
	index int    // position in the manifest's args
	prop  string // MCP property; for an unrolled group, unused
	// def is the typed default of an option or flag; nil when there is none.
	def json.RawMessage
	// A group's fields, in the record's field order; whole means the group
	// is one property (group_opt set), else one property per field.
	fields []*field
	whole  bool
}

type field struct {
	key   string
	t     *manifest.Type
	entry *manifest.Arg   // the option or flag setting this field; nil if none
	def   json.RawMessage // typed default; nil when there is none
}

// surface is the type of the field's value as a caller gives it: a path
// for a `source: file` entry (shape.go surfaceType).
func (f *field) surface() *manifest.Type {
	if f.entry != nil && f.entry.IsPath() {
		if f.t.Unwrap().Kind == manifest.Optional {
			return &manifest.Type{Kind: manifest.Optional, Code: "?", Elem: pathType}
		}
		return pathType
	}
	return f.t
}

func newPlan(c *manifest.Command) (*plan, error) {
	p := &plan{cmd: c}
	for i := range c.Args {
		a := &c.Args[i]
		s := &slot{kind: a.Kind, arg: a, index: i}
		switch a.Kind {
		case manifest.KindPos:
			s.prop = posProperty(c, i)
		case manifest.KindOpt:
			s.prop = a.DisplayName()
			if hasDefault(a) {
				def, msg := parseText(*a.Default, defaultType(a), false)
				if msg != "" {
					return nil, fmt.Errorf("default %s of option %s: %s", strconv.Quote(*a.Default), optSpelling(a), msg)
				}
				s.def = def
			}
		case manifest.KindFlag:
			s.prop = a.DisplayName()
			s.def = flagValue(a)
		case manifest.KindGrp:
			s.whole = a.GroupOpt != nil
			s.prop = groupProperty(a)
			rec := a.T.Unwrap()
			for _, rf := range rec.Fields {
				f := &field{key: rf.Key, t: rf.Type}
				for k := range a.Entries {
					if a.Entries[k].Key == rf.Key {
						f.entry = &a.Entries[k].Arg
					}
				}
				if e := f.entry; e != nil {
					switch {
					case e.Kind == manifest.KindFlag:
						f.def = flagValue(e)
					case hasDefault(e):
						def, msg := parseText(*e.Default, f.surface(), false)
						if msg != "" {
							return nil, fmt.Errorf("default %s of %s field '%s': %s", strconv.Quote(*e.Default), s.prop, f.key, msg)
						}
						f.def = def
					}
				}
				s.fields = append(s.fields, f)
			}
		}
		p.slots = append(p.slots, s)
	}
	return p, nil
}

// hasDefault: an empty default string counts as none.
func hasDefault(a *manifest.Arg) bool { return a.Default != nil && *a.Default != "" }

func flagValue(a *manifest.Arg) json.RawMessage {
	if a.Default != nil && *a.Default == "true" {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

// supplied holds the values a caller gave, already in pool form.
type supplied struct {
	vals   map[*slot]json.RawMessage
	fields map[*field]json.RawMessage
	// wholeGiven records the groups given as one value (even if empty).
	wholeGiven map[*slot]bool
}

func newSupplied() *supplied {
	return &supplied{vals: map[*slot]json.RawMessage{}, fields: map[*field]json.RawMessage{}, wholeGiven: map[*slot]bool{}}
}

// missingError says which required value is absent: the slot, and for a
// group the field.
type missingError struct {
	slot  *slot
	field *field
}

func (e *missingError) Error() string { return "missing value" }

// assemble builds the positional call: one value per manifest argument.
func (p *plan) assemble(s *supplied) ([]json.RawMessage, error) {
	args := make([]json.RawMessage, 0, len(p.slots))
	for _, sl := range p.slots {
		switch sl.kind {
		case manifest.KindPos:
			v, ok := s.vals[sl]
			if !ok {
				if !isOptional(sl.arg.T) {
					return nil, &missingError{slot: sl}
				}
				v = json.RawMessage("null")
			}
			args = append(args, v)
		case manifest.KindOpt, manifest.KindFlag:
			v, ok := s.vals[sl]
			if !ok {
				v = sl.def
			}
			if v == nil {
				v = json.RawMessage("null")
			}
			args = append(args, v)
		case manifest.KindGrp:
			var b []byte
			b = append(b, '{')
			for i, f := range sl.fields {
				v, ok := s.fields[f]
				if !ok {
					v = f.def
				}
				if v == nil {
					if !isOptional(f.t) {
						return nil, &missingError{slot: sl, field: f}
					}
					v = json.RawMessage("null")
				}
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, quoteRaw(f.key)...)
				b = append(b, ':')
				b = append(b, v...)
			}
			b = append(b, '}')
			args = append(args, json.RawMessage(b))
		}
	}
	return args, nil
}
