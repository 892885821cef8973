package morloccorpus

// MCPTools is a port, line for line, of what morloc 0.98.2's nexus prints
// for `--mcp-tools`, kept apart from nexus's own code so that it can check
// it: nothing here calls nexus's packages. The Rust it follows, in morloc's source
// (data/rust/):
//
//   - morloc-nexus/src/json_help.rs: print_mcp_tools, build_tool_shapes,
//     command_to_tool_shape, mcp_type, set_description, opt_name,
//     schema_to_json_schema, object_schema, with_null, schema_is_optional,
//     schema_str_excluded, schema_tree_excluded;
//   - morloc-runtime-types/src/schema.rs: parse_schema (the wire schema
//     grammar: z b s F O I i u f a j ? t m T < & ^);
//   - morloc-manifest/src/lib.rs: which manifest fields an Arg reads, and
//     their defaults;
//   - serde_json's to_string_pretty with preserve_order (Cargo.toml), which
//     prints members in insertion order, two-space indented.
//
// It is calibrated on morloc's own output (argmap's
// TestMorlocRefCalibration).

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ---- the manifest, as morloc-manifest deserialises it ----

// refManifest holds what lib.rs's Manifest reads. The fields --mcp-tools
// does not print are read all the same, with their types: a value serde
// cannot read as its type makes the manifest fail to load, and morloc
// prints no tools at all.
type refManifest struct {
	Commands            []refCommand `json:"commands"`
	Epilogues           [][]string   `json:"epilogues"`
	UnsafeSkipNullCheck bool         `json:"unsafe_skip_null_check"`
	InlineSize          *int64       `json:"inline_size"`
	NoShm               bool         `json:"no_shm"`
	Tmpdir              *string      `json:"tmpdir"`
	RunLog              *struct {
		Prologue     *string `json:"prologue"`
		EpilogueOk   *string `json:"epilogue_ok"`
		EpilogueFail *string `json:"epilogue_fail"`
	} `json:"run_log"`
	Capabilities []string `json:"capabilities"`
}

type refCommand struct {
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Desc        []string        `json:"desc"`
	Args        []refArg        `json:"args"`
	Return      refReturn       `json:"return"`
	Constraints json.RawMessage `json:"constraints"`
	Internal    bool            `json:"internal"`
	Terminals   []refTerminal   `json:"terminals"`
}

type refReturn struct {
	Schema      string          `json:"schema"`
	Constraints json.RawMessage `json:"constraints"`
}

type refTerminal struct {
	Long  string `json:"long"`
	Entry string `json:"entry"`
}

// refAtom reads one of lib.rs's unit enums (SourceAtom, FormAtom), which
// serde reads as one of its variants' names and nothing else (not null);
// absent, it is the field's default.
func refAtom(b json.RawMessage, what string, variants ...string) error {
	if b == nil {
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil || string(b) == "null" {
		return fmt.Errorf("%s: invalid type: %s, expected a string", what, b)
	}
	for _, ok := range variants {
		if v == ok {
			return nil
		}
	}
	return fmt.Errorf("%s: unknown variant `%s`, expected one of %v", what, v, variants)
}

// refChecks reads a Vec<Check>: each {"kind":"path","value":MODE} (tag
// "kind", content "value", Path's one field a string).
func refChecks(b json.RawMessage, what string) error {
	if b == nil {
		return nil
	}
	var checks []struct {
		Kind  *string         `json:"kind"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &checks); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	for _, c := range checks {
		var mode string
		switch {
		case c.Kind == nil:
			return fmt.Errorf("%s: missing field `kind`", what)
		case *c.Kind != "path":
			return fmt.Errorf("%s: unknown variant `%s`, expected `path`", what, *c.Kind)
		case json.Unmarshal(c.Value, &mode) != nil || string(c.Value) == "null":
			return fmt.Errorf("%s: path's value must be a string, got %s", what, c.Value)
		}
	}
	return nil
}

type refArg struct {
	Kind     string          `json:"kind"`
	Schema   *string         `json:"schema"`
	Type     *string         `json:"type"`
	Name     *string         `json:"name"`
	Many     bool            `json:"many"`
	Stdin    bool            `json:"stdin"`
	Short    *string         `json:"short"`
	Long     *string         `json:"long"`
	Default  *string         `json:"default"`
	Desc     []string        `json:"desc"`
	GroupOpt json.RawMessage `json:"group_opt"`
	Entries  []struct {
		Key string `json:"key"`
		Arg refArg `json:"arg"`
	} `json:"entries"`
	Constraints json.RawMessage `json:"constraints"`
	// The shape of a positional's or an option's value (its argument
	// fields: testdata/morloc/README.md), which lib.rs reads for those two
	// kinds only (a flag or a group ignores them, as serde ignores unknown
	// fields). command_to_tool_shape uses none of them: a tool's property
	// is the value's schema whatever its source, form or checks.
	Source     json.RawMessage `json:"source"`
	Form       json.RawMessage `json:"form"`
	Checks     json.RawMessage `json:"checks"`
	ListSource json.RawMessage `json:"list_source"`
	ListForm   json.RawMessage `json:"list_form"`
	ListChecks json.RawMessage `json:"list_checks"`
	Format     *string         `json:"format"`
}

// check is what serde refuses in an Arg beyond the Go types: an unknown
// kind, and for a positional or an option an unknown source or form, a
// check other than path, a constraint without its type.
func (a *refArg) check() error {
	sources := []string{"auto", "inline", "file"}
	forms := []string{"auto", "packet", "bytes", "bytes-only", "list"}
	switch a.Kind {
	case "pos", "opt":
		for _, err := range []error{
			refAtom(a.Source, "source", sources...), refAtom(a.Form, "form", forms...),
			refAtom(a.ListSource, "list_source", sources...), refAtom(a.ListForm, "list_form", forms...),
			refChecks(a.Checks, "checks"), refChecks(a.ListChecks, "list_checks"),
			refConstraints(a.Constraints),
		} {
			if err != nil {
				return err
			}
		}
	case "flag":
	case "grp":
		if err := refConstraints(a.Constraints); err != nil {
			return err
		}
		for i := range a.Entries {
			if err := a.Entries[i].Arg.check(); err != nil {
				return fmt.Errorf("entry '%s': %w", a.Entries[i].Key, err)
			}
		}
	default:
		return fmt.Errorf("unknown variant `%s`, expected one of `pos`, `opt`, `flag`, `grp`", a.Kind)
	}
	return nil
}

// refConstraints reads a Vec<Constraint>: each has a string "type" and any
// "value".
func refConstraints(b json.RawMessage) error {
	if b == nil {
		return nil
	}
	var cs []struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		return fmt.Errorf("constraints: %v", err)
	}
	for _, c := range cs {
		if c.Type == nil {
			return fmt.Errorf("constraints: missing field `type`")
		}
	}
	return nil
}

func (a *refArg) hasGroupOpt() bool {
	s := strings.TrimSpace(string(a.GroupOpt))
	return s != "" && s != "null"
}

// ---- wire schemas (schema.rs parse_schema) ----

type refSchema struct {
	kind   byte // z b s F O I i u f a j ? t m T, or 'R' for a back-reference
	params []*refSchema
	keys   []string
}

func refParseSchema(s string) (*refSchema, error) {
	sc, end, err := refParseSchemaAt(s, 0, map[string]bool{})
	if err != nil {
		return nil, err
	}
	if end != len(s) {
		return nil, fmt.Errorf("trailing characters after schema at position %d", end)
	}
	return sc, nil
}

func refBase62(c byte) (int, error) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), nil
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10, nil
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 36, nil
	}
	return 0, fmt.Errorf("bad base-62 digit %q", c)
}

func refParseKey(s string, p int) (string, int, error) {
	if p >= len(s) {
		return "", 0, fmt.Errorf("expected key length")
	}
	n, err := refBase62(s[p])
	if err != nil {
		return "", 0, err
	}
	p++
	if p+n > len(s) {
		return "", 0, fmt.Errorf("key extends past end")
	}
	return s[p : p+n], p + n, nil
}

func refParseSchemaAt(s string, pos int, declared map[string]bool) (*refSchema, int, error) {
	if pos >= len(s) {
		return nil, 0, fmt.Errorf("unexpected end of schema")
	}
	c := s[pos]
	cur := pos + 1
	switch c {
	case '<': // a hint, nested <...>, then the type itself
		depth := 1
		for ; cur < len(s) && depth > 0; cur++ {
			switch s[cur] {
			case '<':
				depth++
			case '>':
				depth--
			}
		}
		if depth != 0 {
			return nil, 0, fmt.Errorf("unclosed '<' in hint")
		}
		return refParseSchemaAt(s, cur, declared)
	case '&': // a named (recursive) type: its body is the schema
		name, after, err := refParseKey(s, cur)
		if err != nil {
			return nil, 0, err
		}
		declared[name] = true
		return refParseSchemaAt(s, after, declared)
	case '^':
		name, after, err := refParseKey(s, cur)
		if err != nil {
			return nil, 0, err
		}
		if !declared[name] {
			return nil, 0, fmt.Errorf("back-reference to undeclared name '%s'", name)
		}
		return &refSchema{kind: 'R'}, after, nil
	case 'z', 'b', 's', 'F', 'O', 'I', 'j':
		return &refSchema{kind: c}, cur, nil
	case 'i', 'u', 'f':
		if cur >= len(s) {
			return nil, 0, fmt.Errorf("expected size")
		}
		return &refSchema{kind: c}, cur + 1, nil
	case 'a':
		if cur < len(s) && s[cur] == ':' {
			cur++
			for cur < len(s) && s[cur] >= '0' && s[cur] <= '9' {
				cur++
			}
		}
		child, end, err := refParseSchemaAt(s, cur, declared)
		if err != nil {
			return nil, 0, err
		}
		return &refSchema{kind: 'a', params: []*refSchema{child}}, end, nil
	case '?':
		child, end, err := refParseSchemaAt(s, cur, declared)
		if err != nil {
			return nil, 0, err
		}
		return &refSchema{kind: '?', params: []*refSchema{child}}, end, nil
	case 't':
		if cur >= len(s) {
			return nil, 0, fmt.Errorf("expected tuple size")
		}
		n, err := refBase62(s[cur])
		if err != nil {
			return nil, 0, err
		}
		out := &refSchema{kind: 't'}
		p := cur + 1
		for i := 0; i < n; i++ {
			child, end, err := refParseSchemaAt(s, p, declared)
			if err != nil {
				return nil, 0, err
			}
			out.params = append(out.params, child)
			p = end
		}
		return out, p, nil
	case 'm', 'T':
		out := &refSchema{kind: c}
		if c == 'T' {
			if cur >= len(s) || s[cur] != ':' {
				return out, cur, nil // bare T: no declared columns
			}
			cur++
		}
		if cur >= len(s) {
			return nil, 0, fmt.Errorf("expected field count")
		}
		n, err := refBase62(s[cur])
		if err != nil {
			return nil, 0, err
		}
		p := cur + 1
		for i := 0; i < n; i++ {
			key, after, err := refParseKey(s, p)
			if err != nil {
				return nil, 0, err
			}
			child, end, err := refParseSchemaAt(s, after, declared)
			if err != nil {
				return nil, 0, err
			}
			out.keys = append(out.keys, key)
			out.params = append(out.params, child)
			p = end
		}
		return out, p, nil
	}
	return nil, 0, fmt.Errorf("unknown schema character '%c' at position %d", c, pos)
}

// ---- json_help.rs ----

// refSchemaToJSONSchema is schema_to_json_schema.
func refSchemaToJSONSchema(s *refSchema) Object {
	switch s.kind {
	case 'z':
		return Object{{"type", "null"}}
	case 'b':
		return Object{{"type", "boolean"}}
	case 'i', 'u', 'j':
		return Object{{"type", "integer"}}
	case 'f':
		return Object{{"type", "number"}}
	case 's', 'F', 'O', 'I': // stream handles surface as their path string
		return Object{{"type", "string"}}
	case 'a':
		return Object{{"type", "array"}, {"items", refSchemaToJSONSchema(s.params[0])}}
	case 't':
		prefix := []any{}
		for _, p := range s.params {
			prefix = append(prefix, refSchemaToJSONSchema(p))
		}
		return Object{{"type", "array"}, {"prefixItems", prefix}, {"minItems", len(prefix)}, {"maxItems", len(prefix)}}
	case 'm':
		return refObjectSchema(s.keys, s.params)
	case 'T': // each column's Array peeled to its element
		cols := make([]*refSchema, len(s.params))
		for i, p := range s.params {
			cols[i] = p
			if p.kind == 'a' {
				cols[i] = p.params[0]
			}
		}
		return Object{{"type", "array"}, {"items", refObjectSchema(s.keys, cols)}}
	case '?':
		return refWithNull(refSchemaToJSONSchema(s.params[0]))
	case 'R': // a back-reference into a recursive record: not expanded
		return Object{{"type", "object"}}
	}
	panic("refSchemaToJSONSchema: " + string(s.kind))
}

// refObjectSchema is object_schema: a field is required unless Optional.
func refObjectSchema(keys []string, fields []*refSchema) Object {
	props := Object{}
	required := []any{}
	for i, f := range fields {
		key := fmt.Sprintf("field%d", i)
		if i < len(keys) {
			key = keys[i]
		}
		if f.kind != '?' {
			required = append(required, key)
		}
		props = props.Insert(key, refSchemaToJSONSchema(f))
	}
	return Object{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}}
}

// refWithNull is with_null: "null" joins the type (a string or an array);
// a schema with no type is left as it is.
func refWithNull(o Object) Object {
	t, ok := o.Get("type")
	if !ok {
		return o
	}
	switch x := t.(type) {
	case string:
		return o.Insert("type", []any{x, "null"})
	case []any:
		for _, e := range x {
			if e == "null" {
				return o
			}
		}
		return o.Insert("type", append(x, "null"))
	}
	return o
}

func refParsed(schema *string) *refSchema {
	if schema == nil {
		return nil
	}
	p, err := refParseSchema(*schema)
	if err != nil {
		return nil // parse_schema(..).ok(): an unparsable schema reads as none
	}
	return p
}

func refIsOptional(schema *string) bool {
	p := refParsed(schema)
	return p != nil && p.kind == '?'
}

func refTreeExcluded(s *refSchema) bool {
	switch s.kind {
	case 'T', 'F', 'I', 'O':
		return true
	}
	for _, p := range s.params {
		if refTreeExcluded(p) {
			return true
		}
	}
	return false
}

func refStrExcluded(schema *string) bool {
	p := refParsed(schema)
	return p != nil && refTreeExcluded(p)
}

// refMCPType is mcp_type.
func refMCPType(schema *string, many bool) Object {
	base := Object{}
	if p := refParsed(schema); p != nil {
		base = refSchemaToJSONSchema(p)
	}
	if many {
		if t, _ := base.Get("type"); t == "array" {
			return base
		}
		return Object{{"type", "array"}, {"items", base}}
	}
	return base
}

// refSetDescription is set_description.
func refSetDescription(prop Object, desc []string, def *string) Object {
	var parts []string
	for _, l := range desc {
		if l != "" {
			parts = append(parts, l)
		}
	}
	if def != nil {
		parts = append(parts, "(default: "+*def+")")
	}
	if len(parts) == 0 {
		return prop
	}
	return prop.Insert("description", strings.Join(parts, " "))
}

func refOptName(long, short *string) string {
	if long != nil {
		return *long
	}
	if short != nil {
		return *short
	}
	return "option"
}

// refToolShape is command_to_tool_shape: the tool object, or why the
// command is excluded.
func refToolShape(c *refCommand) (Object, string) {
	for i := range c.Args {
		a := &c.Args[i]
		if a.Kind == "pos" && a.Stdin {
			return nil, "reads from @stdin"
		}
		if a.Kind != "flag" && refStrExcluded(a.Schema) {
			return nil, "argument has an Arrow Table or stream-handle type"
		}
	}
	if c.Return.Schema != "" && refStrExcluded(&c.Return.Schema) {
		return nil, "return has an Arrow Table or stream-handle type"
	}
	props := Object{}
	required := []any{}
	insert := func(name string, prop Object) string {
		if _, dup := props.Get(name); dup {
			return fmt.Sprintf("property name collision on '%s'", name)
		}
		props = append(props, Member{name, prop})
		return ""
	}
	pos := 0
	for i := range c.Args {
		a := &c.Args[i]
		var why string
		switch a.Kind {
		case "pos":
			name := fmt.Sprintf("_%d", pos+1)
			if a.Name != nil && *a.Name != "" {
				name = *a.Name
			}
			prop := refSetDescription(refMCPType(a.Schema, a.Many), a.Desc, nil)
			if !refIsOptional(a.Schema) && !a.Stdin {
				required = append(required, name)
			}
			why = insert(name, prop)
			pos++
		case "opt":
			prop := refSetDescription(refMCPType(a.Schema, a.Many), a.Desc, a.Default)
			why = insert(refOptName(a.Long, a.Short), prop)
		case "flag":
			prop := refSetDescription(Object{{"type", "boolean"}}, a.Desc, a.Default)
			why = insert(refOptName(a.Long, a.Short), prop)
		case "grp":
			parsed := refParsed(a.Schema)
			if a.hasGroupOpt() {
				name := "group"
				if a.Type != nil {
					name = strings.ToLower(*a.Type)
				}
				prop := Object{{"type", "object"}}
				if parsed != nil {
					prop = refSchemaToJSONSchema(parsed)
				}
				why = insert(name, refSetDescription(prop, a.Desc, nil))
				break
			}
			if parsed == nil {
				break
			}
			for _, e := range a.Entries {
				var field *refSchema
				for k, key := range parsed.keys {
					if key == e.Key && k < len(parsed.params) {
						field = parsed.params[k]
						break
					}
				}
				prop := Object{}
				if field != nil {
					prop = refSchemaToJSONSchema(field)
				}
				var def *string
				if e.Arg.Kind == "opt" || e.Arg.Kind == "flag" {
					def = e.Arg.Default
				}
				prop = refSetDescription(prop, e.Arg.Desc, def)
				if def == nil && field != nil && field.kind != '?' {
					required = append(required, e.Key)
				}
				if why = insert(e.Key, prop); why != "" {
					break
				}
			}
		}
		if why != "" {
			return nil, why
		}
	}
	if len(c.Terminals) > 0 {
		enum := []any{"raw"}
		for _, t := range c.Terminals {
			enum = append(enum, t.Long)
		}
		if why := insert("_render", Object{
			{"type", "string"}, {"enum", enum}, {"default", "raw"},
			{"description", "Output projection: 'raw' returns the underlying typed value; a renderer name returns that projection (e.g. an image)."},
		}); why != "" {
			return nil, why
		}
	}
	tool := Object{
		{"name", c.Name},
		{"description", strings.Join(c.Desc, "\n")},
		{"inputSchema", Object{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}}},
	}
	if ret := refParsed(&c.Return.Schema); ret != nil && ret.kind == 'm' {
		tool = append(tool, Member{"outputSchema", refSchemaToJSONSchema(ret)})
	}
	return tool, ""
}

// MCPTools is print_mcp_tools for a manifest.json's bytes: what
// morloc prints on stdout, and its exclusion notes on stderr.
func MCPTools(manifestJSON []byte) (stdout, stderr string, err error) {
	var m refManifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return "", "", err
	}
	for i := range m.Commands {
		c := &m.Commands[i]
		if c.Type != "remote" && c.Type != "pure" {
			return "", "", fmt.Errorf("command '%s': type: unknown variant `%s`, expected `remote` or `pure`", c.Name, c.Type)
		}
		for _, err := range []error{refConstraints(c.Constraints), refConstraints(c.Return.Constraints)} {
			if err != nil {
				return "", "", fmt.Errorf("command '%s': %w", c.Name, err)
			}
		}
		for k := range c.Args {
			if err := c.Args[k].check(); err != nil {
				return "", "", fmt.Errorf("command '%s', argument %d: %w", c.Name, k+1, err)
			}
		}
	}
	tools := []any{}
	var notes strings.Builder
	for i := range m.Commands {
		c := &m.Commands[i]
		if c.Internal {
			continue
		}
		tool, why := refToolShape(c)
		if why != "" {
			fmt.Fprintf(&notes, "morloc mcp: excluding command '%s' from the tool surface (%s)\n", c.Name, why)
			continue
		}
		tools = append(tools, tool)
	}
	return Pretty(Object{{"tools", tools}}), notes.String(), nil
}
