package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The fields morloc 0.98 writes on every pos and opt argument to say how a
// CLI value is read (morloc-manifest lib.rs SourceAtom, FormAtom, Check;
// the compiler's Nexus.hs ioShapeFields), and the constraints it writes on
// arguments, returns and commands.

// Where an argument's bytes come from.
const (
	// SourceAuto: morloc's classifier: stdin for "-", inline for a token
	// shaped like JSON, else an existing file. The default.
	SourceAuto = "auto"
	// SourceInline: the value itself.
	SourceInline = "inline"
	// SourceFile: the value names a file whose content is the value.
	SourceFile = "file"
)

// How the bytes are read.
const (
	// FormAuto: a structured format (JSON, msgpack, a morloc packet; raw
	// text for a Str). The default.
	FormAuto = "auto"
	// FormPacket: a morloc data packet only.
	FormPacket = "packet"
	// FormBytes: a morloc packet, else the raw bytes of a list of
	// fixed-width numbers.
	FormBytes = "bytes"
	// FormBytesOnly: the raw bytes of a list of fixed-width numbers.
	FormBytesOnly = "bytes-only"
	// FormList: one element per line.
	FormList = "list"
)

// CheckPath is the one check kind morloc has: the value is a path that
// must satisfy a mode (r, w, x or rw).
const CheckPath = "path"

var (
	sources    = []string{SourceAuto, SourceInline, SourceFile}
	forms      = []string{FormAuto, FormPacket, FormBytes, FormBytesOnly, FormList}
	listForms  = []string{FormAuto, FormPacket, FormBytes, FormBytesOnly}
	pathModes  = []string{"r", "w", "x", "rw"}
	checkKinds = []string{CheckPath}
)

// Check is a value-invariant check carried on an argument:
// {"kind": "path", "value": "r"}.
type Check struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Constraint is one entry of a constraints list: {"type": ..., "value": ...}.
// morloc's compiler writes only "kind" (record, object or table) on named
// types; lib.rs reserves min, max, length, non_empty, regex, enum, unique,
// row_count and sorted. Value is nil when absent.
type Constraint struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// String renders a constraint as help shows it: "min 0", "non_empty".
func (c Constraint) String() string {
	if len(c.Value) == 0 || string(c.Value) == "null" {
		return c.Type
	}
	return c.Type + " " + string(c.Value)
}

// RunLog is the run-scope log templates a program's YAML declares
// (prologue:, epilogue: ok/fail), with the compile-time placeholders
// already filled in; nil fields emit nothing.
type RunLog struct {
	Prologue     *string `json:"prologue"`
	EpilogueOK   *string `json:"epilogue_ok"`
	EpilogueFail *string `json:"epilogue_fail"`
}

// Shaped reports whether a's value is read other than as an inline value
// of its type: any source, form or check other than the defaults. (A flag
// or group is never shaped itself; a group's entries may be.)
func (a *Arg) Shaped() bool {
	if a.Kind != KindPos && a.Kind != KindOpt {
		return false
	}
	return (a.Source != SourceAuto && a.Source != SourceInline) || a.Form != FormAuto ||
		len(a.Checks) > 0 || a.ListSource != SourceInline || a.ListForm != FormAuto || len(a.ListChecks) > 0
}

// IsPath reports whether a's value is the path of a file holding the
// value (source: file): over MCP a client passes the path, and nexus reads
// the file on its own machine. Never for a many argument, whose source is
// ignored (readShapes).
func (a *Arg) IsPath() bool {
	return (a.Kind == KindPos || a.Kind == KindOpt) && a.Source == SourceFile && !a.Many
}

// PathMode is the mode of a's path check ("r", "w", "x", "rw"), "" when
// it has none.
func (a *Arg) PathMode() string {
	for _, c := range a.Checks {
		if c.Kind == CheckPath {
			return c.Value
		}
	}
	return ""
}

// fillShape sets the defaults of the shape fields a manifest leaves out
// (nexus's own programs, morloc before 0.97): the source morloc's compiler
// writes (Nexus.hs resolvedSourceJson: "inline" for a Str or a scalar,
// "auto" for the rest), and lib.rs's defaults for the others.
func (a *Arg) fillShape() {
	if a.Source == "" {
		a.Source = SourceAuto
		if t := a.T.Unwrap(); t != nil && t.Kind == Optional {
			a.Source = defaultSource(t.Elem.Unwrap())
		} else {
			a.Source = defaultSource(t)
		}
	}
	if a.Form == "" {
		a.Form = FormAuto
	}
	if a.ListSource == "" {
		a.ListSource = SourceInline
	}
	if a.ListForm == "" {
		a.ListForm = FormAuto
	}
}

func oneOf(v string, known []string) bool {
	for _, k := range known {
		if v == k {
			return true
		}
	}
	return false
}

func knownList(known []string) string {
	q := make([]string, len(known))
	for i, k := range known {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}

// shapeFault returns the fault of a shape field whose value nexus does not
// know (morloc's reader refuses the whole manifest for one; nexus refuses
// only the command, naming the field), or nil.
func (a *Arg) shapeFault(at string) *Error {
	unknown := func(field, what, v string, known []string) *Error {
		return &Error{Path: at + "." + field, Msg: fmt.Sprintf("unknown %s %q (nexus knows %s)", what, v, knownList(known))}
	}
	switch {
	case !oneOf(a.Source, sources):
		return unknown("source", "source", a.Source, sources)
	case !oneOf(a.Form, forms):
		return unknown("form", "form", a.Form, forms)
	case !oneOf(a.ListSource, sources):
		return unknown("list_source", "source", a.ListSource, sources)
	case !oneOf(a.ListForm, listForms):
		return unknown("list_form", "per-element form", a.ListForm, listForms)
	}
	for field, checks := range map[string][]Check{"checks": a.Checks, "list_checks": a.ListChecks} {
		for i, c := range checks {
			p := fmt.Sprintf("%s[%d]", field, i)
			if c.Kind != CheckPath {
				return unknown(p+".kind", "check", c.Kind, checkKinds)
			}
			if !oneOf(c.Value, pathModes) {
				return unknown(p+".value", "path mode", c.Value, pathModes)
			}
		}
	}
	return nil
}

// Capabilities morloc's nexus knows (lib.rs Manifest.capabilities): "log"
// unlocks --log-dir, --summary and --quiet; "debug_trace" the --debug-*
// options.
const (
	CapabilityLog        = "log"
	CapabilityDebugTrace = "debug_trace"
)

// topLevelKeys are the manifest keys nexus reads; Unread lists the others.
var topLevelKeys = map[string]bool{
	"name": true, "build": true, "pools": true, "commands": true, "groups": true, "desc": true,
	"metadata": true, "inline_size": true, "no_shm": true, "tmpdir": true, "epilogues": true,
	"unsafe_skip_null_check": true, "run_log": true, "capabilities": true, "service": true,
}

// unreadKeys lists the top-level keys of the manifest object raw that nexus
// does not read, sorted.
func unreadKeys(raw any) []string {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for k := range obj {
		if !topLevelKeys[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// readDefaults applies the defaults morloc's reader gives keys the
// manifest leaves out (capabilities ["log"], allow_string_null true) and
// lists the top-level keys nexus does not read. raw is the decoded JSON.
func (m *Manifest) readDefaults(raw any) {
	obj, _ := raw.(map[string]any)
	if _, ok := obj["capabilities"]; !ok {
		m.Capabilities = []string{CapabilityLog}
	}
	pools, _ := obj["pools"].([]any)
	for i := range m.Pools {
		if i < len(pools) {
			if p, ok := pools[i].(map[string]any); ok {
				if v, ok := p["allow_string_null"]; !ok || v == nil {
					m.Pools[i].AllowStringNull = true
				}
			}
		}
	}
	m.Unread = unreadKeys(raw)
}

// readShapes fills the shape defaults of c's arguments (group entries
// too), records in c.Fault the first value nexus does not know, and notes
// in m.Ignored a shape on a many argument, which morloc's nexus ignores
// (dispatch.rs: its compiler refuses every source, form and check there).
func (m *Manifest) readShapes(c *Command, at string) {
	visit := func(a *Arg, aat string) {
		if a.Kind != KindPos && a.Kind != KindOpt {
			return
		}
		a.fillShape()
		if c.Fault == nil {
			if f := a.shapeFault(aat); f != nil {
				c.Fault = f
			}
		}
		if a.Many && a.Shaped() {
			m.Ignored = append(m.Ignored, aat+": source, form and checks on a many argument (each value is read as the element type, as morloc's nexus does)")
		}
	}
	for j := range c.Args {
		a := &c.Args[j]
		aat := fmt.Sprintf("%s.args[%d]", at, j)
		visit(a, aat)
		for k := range a.Entries {
			visit(&a.Entries[k].Arg, fmt.Sprintf("%s.entries[%d].arg", aat, k))
		}
	}
}

func defaultSource(t *Type) string {
	if t == nil {
		return SourceAuto
	}
	switch t.Kind {
	case Str, Bool, Int, Float, Nil:
		return SourceInline
	}
	return SourceAuto
}
