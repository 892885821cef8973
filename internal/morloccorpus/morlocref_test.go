package morloccorpus

import (
	"strings"
	"testing"
)

// A port that ignores what it should read would pass the calibration by
// luck only on json-help's shapes: each rule it ports shows here.
func TestMorlocRefRules(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{"?j", `{"type":["integer","null"]}`},
		{"<dict>m21af81b?s", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`},
		{"t2sj", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}`},
		{"&4Treem23valj8childrena^4Tree", `{"type":"object","properties":{"val":{"type":"integer"},"children":{"type":"array","items":{"type":"object"}}},"required":["val","children"],"additionalProperties":false}`},
		{"&5Chainm24words4next?^5Chain", `{"type":"object","properties":{"word":{"type":"string"},"next":{"type":["object","null"]}},"required":["word"],"additionalProperties":false}`},
		{"T:21xj1ys", `{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x","y"],"additionalProperties":false}}`},
		{"I", `{"type":"string"}`},
	} {
		s, err := refParseSchema(c.schema)
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		got := strings.Join(strings.Fields(Pretty(refSchemaToJSONSchema(s))), "")
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.schema, got, c.want)
		}
	}
}

// The port reads a manifest as lib.rs's serde derive does: the argument
// fields (source, form, checks, list_*, format) and the top-level fields
// load or refuse the manifest as there, and change no tool: a `source:
// file` positional is still its value's schema (command_to_tool_shape
// reads none of them).
func TestMorlocRefReads(t *testing.T) {
	manifestWith := func(top, arg string) []byte {
		return []byte(`{"name":"m","build":{"path":".","time":0,"morloc_version":"0.98.2"}` + top +
			`,"commands":[{"name":"f","type":"pure","args":[{"kind":"pos","schema":"aj"` + arg + `}],"return":{"schema":"j"}}]}`)
	}
	const tool = `{"tools":[{"name":"f","description":"","inputSchema":{"type":"object","properties":{"_1":{"type":"array","items":{"type":"integer"}}},"required":["_1"],"additionalProperties":false}}]}`
	for _, c := range []struct {
		name, top, arg string
		ok             bool
	}{
		{"no fields", "", "", true},
		{"every field", "", `,"source":"file","form":"list","checks":[{"kind":"path","value":"r"}],"list_source":"file","list_form":"packet","list_checks":[],"format":"path to a text file"`, true},
		{"bytes-only", "", `,"form":"bytes-only"`, true},
		{"unknown source", "", `,"source":"stdin"`, false},
		{"null source", "", `,"source":null`, false},
		{"snake-case form", "", `,"form":"bytes_only"`, false},
		{"unknown list_form", "", `,"list_form":"table"`, false},
		{"unknown check", "", `,"checks":[{"kind":"regex","value":"x"}]`, false},
		{"check value not a string", "", `,"checks":[{"kind":"path","value":1}]`, false},
		{"format not a string", "", `,"format":1`, false},
		{"constraint without its type", "", `,"constraints":[{"value":1}]`, false},
		{"top-level fields", `,"epilogues":[["a"]],"unsafe_skip_null_check":true,"inline_size":4096,"no_shm":true,"tmpdir":"/t","run_log":{"prologue":"p"},"capabilities":["log"]`, "", true},
		{"inline_size as text", `,"inline_size":"4k"`, "", false},
		{"capabilities not a list", `,"capabilities":"log"`, "", false},
		{"run_log template not a string", `,"run_log":{"prologue":1}`, "", false},
	} {
		out, _, err := MCPTools(manifestWith(c.top, c.arg))
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: morloc reads it, the port refuses it: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: morloc refuses it, the port reads it", c.name)
		case c.ok && strings.Join(strings.Fields(out), "") != tool:
			t.Errorf("%s: %s, want %s", c.name, out, tool)
		}
	}
}
