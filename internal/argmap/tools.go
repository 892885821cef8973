package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Tool is one command as an MCP client sees it (docs/spec.md §4.5), plus what
// nexus needs to turn the client's named arguments back into a positional
// call.
type Tool struct {
	Name, Description string
	InputSchema       Object
	OutputSchema      Object // nil unless the return is a record
	// Annotations are the title and hints from the command's metadata; nil
	// when it declares none.
	Annotations *Annotations
	Command     *manifest.Command

	// ArrayMin is the fewest elements a numeric argument needs to travel
	// to its pool as an array (DefaultArrayMin); 0 sends every argument as
	// JSON.
	ArrayMin int

	plan *plan
	// shaped: an argument has a source, form or check to apply (shape.go);
	// such calls take the full path, which lists the Inputs.
	shaped  bool
	props   map[string]propTarget        // property name → what it fills (fast.go)
	renders map[string]*manifest.Command // _render value → terminal entry

	validOnce sync.Once
	valid     *argSchema // read from validationSchema on first use (validate.go)
	validErr  error
}

// MarshalJSON writes the tool with every member (FullView):
// {"name","title"?,"description","inputSchema","outputSchema"?,"annotations"?,"execution"?}.
func (t *Tool) MarshalJSON() ([]byte, error) {
	return t.Object(FullView).MarshalJSON()
}

// Exclusion is a command left off the tool surface and why (docs/spec.md §4.6).
type Exclusion struct {
	Command, Reason string
}

func (e Exclusion) String() string {
	return fmt.Sprintf("nexus mcp: excluding command '%s' from the tool surface (%s)", e.Command, e.Reason)
}

// Exclusion reasons. Where morloc 0.98.2 excludes a command too, the
// reason starts with its words (json_help.rs command_to_tool_shape), so
// that a note reads the same from either nexus; nexus may say more after
// a colon (which argument, which type).
const (
	reasonStdin     = "reads from @stdin"
	reasonArgStream = "argument has an Arrow Table or stream-handle type"
	reasonRetStream = "return has an Arrow Table or stream-handle type"
	reasonCollision = "property name collision on '%s'"
	reasonStdout    = "streams to stdout" // nexus only: its stdout is the protocol's
)

// renderDescription is the fixed description of the `_render` property.
const renderDescription = "Output projection: 'raw' returns the underlying typed value; a renderer name returns that projection (e.g. an image)."

// Tools builds one tool per exported, non-internal command, in manifest
// order, and lists the commands it leaves out with the reason.
//
// Pure commands are tools like remote ones (the caller evaluates them, and
// leaves off those whose expression it cannot run). A command is excluded
// when a `pos`
// argument has `stdin: true`; when it streams to stdout, which nexus detects
// as `"stdout": true` or `"streaming": true` in the command's or the return's
// metadata, or a `{"tag":"stdout"}` node in a pure command's expression;
// when an argument (a group's fields included) or the return has a Table or
// a file/stream handle (F, I, O) anywhere in its type; when two arguments
// would have the same property name; or when a default cannot be read as a
// value of its argument's type.
func Tools(m *manifest.Manifest) ([]*Tool, []Exclusion) {
	var tools []*Tool
	var excluded []Exclusion
	for _, c := range m.Exported() {
		t, reason := newTool(m, c)
		if reason != "" {
			excluded = append(excluded, Exclusion{Command: c.Name, Reason: reason})
			continue
		}
		tools = append(tools, t)
	}
	return tools, excluded
}

// exclusionReason applies the rules of docs/spec.md §4.6 that need no schema.
func exclusionReason(c *manifest.Command) string {
	for i := range c.Args {
		if a := &c.Args[i]; a.Kind == manifest.KindPos && a.Stdin {
			return reasonStdin
		}
	}
	if streamsToStdout(c) {
		return reasonStdout
	}
	for i := range c.Args {
		a := &c.Args[i]
		if what := unservable(a.T); what != "" {
			return fmt.Sprintf("%s: %s has %s type", reasonArgStream, argLabel(c, i), what)
		}
	}
	if what := unservable(c.Return.T); what != "" {
		return fmt.Sprintf("%s: %s", reasonRetStream, what)
	}
	return ""
}

// unservable names the first kind in t that has no JSON form over MCP.
func unservable(t *manifest.Type) string {
	switch {
	case t == nil:
		return ""
	case t.Contains(manifest.Table):
		return "a Table"
	case t.Contains(manifest.File):
		return "a file handle (F)"
	case t.Contains(manifest.InStream):
		return "an input stream (I)"
	case t.Contains(manifest.OutStream):
		return "an output stream (O)"
	}
	return ""
}

func streamsToStdout(c *manifest.Command) bool {
	for _, md := range []map[string]json.RawMessage{c.Metadata, c.Return.Metadata} {
		for _, k := range []string{"stdout", "streaming"} {
			if v, ok := md[k]; ok && string(bytes.TrimSpace(v)) == "true" {
				return true
			}
		}
	}
	if len(c.Expr) > 0 {
		var tree any
		if json.Unmarshal(c.Expr, &tree) == nil && hasTag(tree, "stdout", 0) {
			return true
		}
	}
	return false
}

func hasTag(v any, tag string, depth int) bool {
	if depth > 10000 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if x["tag"] == tag {
			return true
		}
		for _, e := range x {
			if hasTag(e, tag, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasTag(e, tag, depth+1) {
				return true
			}
		}
	}
	return false
}

// argLabel names argument i of c in messages: its property name for a
// positional or a group, its option for an option or a flag.
func argLabel(c *manifest.Command, i int) string {
	a := &c.Args[i]
	switch a.Kind {
	case manifest.KindPos:
		return "'" + posProperty(c, i) + "'"
	case manifest.KindOpt, manifest.KindFlag:
		return optSpelling(a)
	case manifest.KindGrp:
		return "'" + groupProperty(a) + "'"
	}
	return fmt.Sprintf("%d", i+1)
}

// PropertyName is the tool property that argument i of c maps to
// (docs/spec.md §4.5): a positional's name or _N, an option's or flag's long
// (else short) name, a whole group's record type in lowercase. (An unrolled
// group maps to one property per field, named by the field.)
func PropertyName(c *manifest.Command, i int) string {
	a := &c.Args[i]
	switch a.Kind {
	case manifest.KindPos:
		return posProperty(c, i)
	case manifest.KindOpt, manifest.KindFlag:
		if a.Long != "" {
			return a.Long
		}
		return a.Short
	case manifest.KindGrp:
		return groupProperty(a)
	}
	return a.Kind
}

// optSpelling is how a CLI user writes an option or flag: --long or -s.
func optSpelling(a *manifest.Arg) string {
	if a.Long != "" {
		return "--" + a.Long
	}
	return "-" + a.Short
}

// posProperty is the property of the positional argument i: its name, else
// _N by its 1-based index among positionals.
func posProperty(c *manifest.Command, i int) string {
	a := &c.Args[i]
	if a.Name != nil && *a.Name != "" {
		return *a.Name
	}
	n := 0
	for j := 0; j <= i; j++ {
		if c.Args[j].Kind == manifest.KindPos {
			n++
		}
	}
	return fmt.Sprintf("_%d", n)
}

// groupProperty is the property of a group passed whole: its record type's
// name in lowercase.
func groupProperty(a *manifest.Arg) string {
	if a.TypeName != "" {
		return strings.ToLower(a.TypeName)
	}
	return "group"
}

// description joins an argument's docstring lines with a space and appends
// ` (default: D)` for a default as written in the manifest.
func description(desc []string, def *string) string {
	var parts []string
	for _, l := range desc {
		if l != "" {
			parts = append(parts, l)
		}
	}
	if def != nil {
		parts = append(parts, "(default: "+*def+")")
	}
	return strings.Join(parts, " ")
}

// withDescription appends the description key last, when there is text.
func withDescription(o Object, text string) Object {
	if text == "" {
		return o
	}
	return append(o, Member{"description", text})
}

// flagDefault is a flag's default as written, "false" when absent.
func flagDefault(a *manifest.Arg) string {
	if a.Default != nil && *a.Default == "true" {
		return "true"
	}
	if a.Default != nil {
		return *a.Default
	}
	return "false"
}

func newTool(m *manifest.Manifest, c *manifest.Command) (*Tool, string) {
	if c.Fault != nil {
		return nil, c.Fault.Msg + " at " + c.Fault.Path
	}
	if reason := exclusionReason(c); reason != "" {
		return nil, reason
	}
	p, err := newPlan(c)
	if err != nil {
		return nil, err.Error()
	}
	props := Object{}
	required := []any{}
	defs := &schemaDefs{input: true} // the input schema's $defs, shared by its properties
	add := func(name string, schema Object, req bool) string {
		if _, dup := props.Get(name); dup {
			return fmt.Sprintf(reasonCollision, name)
		}
		props = append(props, Member{name, schema})
		if req {
			required = append(required, name)
		}
		return ""
	}
	for _, s := range p.slots {
		a := s.arg
		var reason string
		switch s.kind {
		case manifest.KindPos:
			sch := defs.schema(surfaceType(a))
			reason = add(s.prop, withDescription(sch, withConstraints(argDescription(a, description(a.Desc, nil)), a.Constraints)), !isOptional(a.T))
		case manifest.KindOpt:
			sch := defs.schema(surfaceType(a))
			reason = add(s.prop, withDescription(sch, withConstraints(argDescription(a, description(a.Desc, a.Default)), a.Constraints)), false)
		case manifest.KindFlag:
			def := flagDefault(a)
			reason = add(s.prop, withDescription(Object{{"type", "boolean"}}, description(a.Desc, &def)), false)
		case manifest.KindGrp:
			if s.whole {
				reason = add(s.prop, withDescription(defs.schema(a.T), description(a.Desc, nil)), false)
				break
			}
			for _, f := range s.fields {
				sch := defs.schema(f.surface())
				var text string
				if f.entry != nil {
					def := f.entry.Default
					if f.entry.Kind == manifest.KindFlag {
						d := flagDefault(f.entry)
						def = &d
					}
					text = argDescription(f.entry, description(f.entry.Desc, def))
				}
				if reason = add(f.key, withDescription(sch, text), f.def == nil && !isOptional(f.t)); reason != "" {
					break
				}
			}
		}
		if reason != "" {
			return nil, reason
		}
	}
	t := &Tool{
		Name:        c.Name,
		Description: strings.Join(append(append([]string(nil), c.Desc...), commandConstraints(c)...), "\n"),
		Annotations: annotationsOf(c),
		Command:     c,
		ArrayMin:    DefaultArrayMin,
		plan:        p,
		shaped:      shapedPlan(p),
		props:       fastProps(p),
	}
	if len(c.Terminals) > 0 {
		enum := []any{"raw"}
		t.renders = map[string]*manifest.Command{}
		for _, term := range c.Terminals {
			name := term.Long
			if name == "" {
				name = term.Short
			}
			enum = append(enum, name)
			t.renders[name] = m.Command(term.Entry)
		}
		if reason := add("_render", Object{
			{"type", "string"}, {"enum", enum}, {"default", "raw"}, {"description", renderDescription},
		}, false); reason != "" {
			return nil, reason
		}
	}
	t.InputSchema = defs.root(Object{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}})
	if c.Return.T.IsRecord() {
		t.OutputSchema = typeSchema(c.Return.T)
	}
	return t, ""
}

// validationSchema is the input schema nexus validates against. It differs
// from the advertised one in two ways (docs/spec.md §4.5): a Real also
// takes "NaN", "Infinity" and "-Infinity" (widenReals), and a group passed
// whole may leave out the fields that have defaults, which nexus fills in.
func (t *Tool) validationSchema() Object {
	doc := t.InputSchema.clone()
	widenReals(doc)
	pv, _ := doc.Get("properties")
	props := pv.(Object)
	for _, s := range t.plan.slots {
		if s.kind != manifest.KindGrp || !s.whole {
			continue
		}
		gv, _ := props.Get(s.prop)
		g := gv.(Object)
		req := []any{}
		for _, f := range s.fields {
			if f.def == nil && !isOptional(f.t) {
				req = append(req, f.key)
			}
		}
		props.set(s.prop, g.set("required", req))
	}
	return doc
}
