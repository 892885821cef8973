package argmap

import (
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// scalarMetavars are the placeholders of the scalar kinds; help shows any
// other value as JSON.
var scalarMetavars = map[manifest.Kind]string{manifest.Int: "INT", manifest.Float: "NUM", manifest.Str: "STR", manifest.Bool: "BOOL"}

// metavarOf is the placeholder help shows for a value of type t.
func metavarOf(t *manifest.Type) string {
	if t.Kind == manifest.Optional || t.Kind == manifest.Recursive {
		return metavarOf(t.Elem)
	}
	if mv, ok := scalarMetavars[t.Kind]; ok {
		return mv
	}
	return "JSON"
}

// posMetavar names a positional argument in usage: its metavar, else its
// name, else a placeholder for its type; `...` when variadic.
func posMetavar(a *manifest.Arg) string {
	var mv string
	switch {
	case a.Metavar != nil && *a.Metavar != "":
		mv = *a.Metavar
	case a.Name != nil && *a.Name != "":
		mv = strings.ToUpper(*a.Name)
	case a.Many:
		mv = metavarOf(elemOrSelf(a.T))
	default:
		mv = metavarOf(a.T)
	}
	if a.Many {
		mv += "..."
	}
	return mv
}

func elemOrSelf(t *manifest.Type) *manifest.Type {
	if u := t.Unwrap(); u.Kind == manifest.List {
		return u.Elem
	}
	return t
}

// optMetavar is the value placeholder of an option.
func optMetavar(a *manifest.Arg) string {
	if a.Metavar != nil && *a.Metavar != "" {
		return *a.Metavar
	}
	if a.T != nil {
		return metavarOf(a.T)
	}
	return "VALUE"
}

// usageLine is the one-line synopsis of a command.
func usageLine(c *manifest.Command) string {
	parts := []string{c.Name}
	hasOpts := len(c.Terminals) > 0
	for i := range c.Args {
		if c.Args[i].Kind != manifest.KindPos {
			hasOpts = true
		}
	}
	if hasOpts {
		parts = append(parts, "[OPTIONS]")
	}
	for i := range c.Args {
		a := &c.Args[i]
		if a.Kind != manifest.KindPos {
			continue
		}
		mv := posMetavar(a)
		if isOptional(a.T) {
			mv = "[" + mv + "]"
		}
		parts = append(parts, mv)
	}
	return strings.Join(parts, " ")
}
