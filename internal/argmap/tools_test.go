package argmap

import (
	"strings"
	"testing"
)

// TestToolObjects checks the tool object of one command per argument kind
// (docs/spec.md §4.5): property names, required, descriptions and defaults
// notes.
func TestToolObjects(t *testing.T) {
	cases := []struct {
		name    string
		command string
		want    string
	}{
		{"no arguments",
			remote("f", "j", ``, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}`},
		{"description lines joined by newline; none gives empty string",
			strings.Replace(remote("f", "j", ``, ``), `"desc":["Does f"]`, `"desc":["one","two"]`, 1) + "," +
				strings.Replace(remote("g", "j", ``, ``), `"desc":["Does g"]`, `"desc":[]`, 1),
			`{"name":"f","description":"one\ntwo","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}` +
				`{"name":"g","description":"","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}`},
		{"positional: _N counts positionals only; desc lines joined by a space",
			remote("f", "j", opt("j", "count", `"2"`, ``)+","+pos("s", `,"desc":["Monster","name"]`)+","+flagArg("loud", "false", ``)+","+pos("j", ``), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{` +
				`"count":{"type":"integer","description":"(default: 2)"},` +
				`"_1":{"type":"string","description":"Monster name"},` +
				`"loud":{"type":"boolean","description":"(default: false)"},` +
				`"_2":{"type":"integer"}},"required":["_1","_2"],"additionalProperties":false}}`},
		{"named positional keeps its index for later ones",
			remote("f", "j", pos("s", `,"name":"who"`)+","+pos("j", ``), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"who":{"type":"string"},"_2":{"type":"integer"}},"required":["who","_2"],"additionalProperties":false}}`},
		{"metavar is never a key",
			remote("f", "j", pos("j", `,"metavar":"INT"`)+","+pos("j", `,"metavar":"INT"`), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"_1":{"type":"integer"},"_2":{"type":"integer"}},"required":["_1","_2"],"additionalProperties":false}}`},
		{"optional positional is not required",
			remote("f", "?j", pos("?j", ``), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"_1":{"type":["integer","null"]}},"required":[],"additionalProperties":false}}`},
		{"many: list schema stays, scalar schema is wrapped",
			remote("f", "j", pos("aj", `,"many":true`)+","+pos("s", `,"many":true`), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"_1":{"type":"array","items":{"type":"integer"}},"_2":{"type":"array","items":{"type":"string"}}},"required":["_1","_2"],"additionalProperties":false}}`},
		{"option: long name, else short; default as written",
			remote("f", "j", opt("s", "tmp-dir", `"\"/tmp\""`, `,"desc":["Scratch","dir"]`)+","+
				`{"kind":"opt","schema":"f8","short":"x","default":"2.5","desc":[]}`+","+
				`{"kind":"opt","schema":"j","long":"plain","desc":[]}`, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{` +
				`"tmp-dir":{"type":"string","description":"Scratch dir (default: \"/tmp\")"},` +
				`"x":{"type":"number","description":"(default: 2.5)"},` +
				`"plain":{"type":"integer"}},"required":[],"additionalProperties":false}}`},
		{"flag: short name, default true noted",
			remote("f", "j", `{"kind":"flag","short":"v","default":"true","desc":["Talk"]}`, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"v":{"type":"boolean","description":"Talk (default: true)"}},"required":[],"additionalProperties":false}}`},
		{"group unrolled: one property per field with its default",
			remote("f", "s", sysConfig("null"), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{` +
				`"tmpDir":{"type":"string","description":"Scratch dir (default: \"/tmp\")"},` +
				`"numThreads":{"type":"integer","description":"Threads (default: 1)"},` +
				`"removeCaches":{"type":"boolean","description":"Purge caches (default: false)"}},"required":[],"additionalProperties":false}}`},
		{"group unrolled: a field without default or optional type is required",
			remote("f", "s", `{"kind":"grp","schema":"m34names3age?j4nick?s","type":"P","group_opt":null,"entries":[
				{"key":"name","arg":{"kind":"opt","long":"name","desc":[]}},
				{"key":"age","arg":{"kind":"opt","long":"age","desc":[]}},
				{"key":"nick","arg":{"kind":"opt","long":"nick","default":"null","desc":[]}}]}`, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{` +
				`"name":{"type":"string"},"age":{"type":["integer","null"]},"nick":{"type":["string","null"],"description":"(default: null)"}},` +
				`"required":["name"],"additionalProperties":false}}`},
		{"group whole: record schema named after the type, then the description",
			remote("f", "s", sysConfig(`{"short":null,"long":"sys-config"}`), ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"sysconfig":{"type":"object","properties":{` +
				`"tmpDir":{"type":"string"},"numThreads":{"type":"integer"},"removeCaches":{"type":"boolean"}},` +
				`"required":["tmpDir","numThreads","removeCaches"],"additionalProperties":false,"description":"System configuration"}},` +
				`"required":[],"additionalProperties":false}}`},
		{"terminals add _render last",
			remote("f", "as", pos("s", ``)+","+opt("j", "n", `"3"`, ``),
				`,"terminals":[{"short":"l","long":"lines","entry":"g","description":"d"},{"short":"p","entry":"g","description":"d"}]`) + "," +
				strings.Replace(remote("g", "z", pos("s", ``)+","+opt("j", "n", `"3"`, ``), ``), `"type":"remote"`, `"type":"remote","internal":true`, 1),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{"_1":{"type":"string"},"n":{"type":"integer","description":"(default: 3)"},` +
				`"_render":{"type":"string","enum":["raw","lines","p"],"default":"raw","description":"` + renderDescription + `"}},` +
				`"required":["_1"],"additionalProperties":false}}`},
		{"record return gets an outputSchema",
			remote("f", "<dict>m24names3agej", ``, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false},` +
				`"outputSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false}}`},
		{"optional record, list and scalar returns get none",
			remote("f", "?m11xj", ``, ``) + "," + remote("g", "am11xj", ``, ``),
			`{"name":"f","description":"Does f","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}` +
				`{"name":"g","description":"Does g","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools, excl := Tools(manifestOf(t, c.command))
			if len(excl) != 0 {
				t.Fatalf("excluded: %v", excl)
			}
			var got strings.Builder
			for _, tool := range tools {
				got.WriteString(mustJSON(t, tool))
			}
			if got.String() != c.want {
				t.Errorf("\n got %s\nwant %s", got.String(), c.want)
			}
		})
	}
}

func TestExclusions(t *testing.T) {
	cases := []struct {
		name    string
		command string
		reason  string
	}{
		{"stdin", remote("x", "j", pos("s", `,"stdin":true`), ``), "reads from @stdin"},
		{"stdout in command metadata", remote("x", "z", ``, `,"metadata":{"stdout":true}`), "streams to stdout"},
		{"streaming return metadata", strings.Replace(remote("x", "as", ``, ``), `"desc":[]}`, `"desc":[],"metadata":{"streaming":true}}`, 1), "streams to stdout"},
		{"stdout node in a pure expression", `{"name":"x","type":"pure","desc":[],"args":[],"return":{"schema":"z"},"expr":{"tag":"app","args":[{"tag":"stdout","schema":"as"}]}}`, "streams to stdout"},
		{"Table argument", remote("x", "j", pos("T:21xaj1yaj", ``), ``), "argument has an Arrow Table or stream-handle type: '_1' has a Table type"},
		{"Table inside a record option", remote("x", "j", opt("m11tT", "data", `"null"`, ``), ``), "argument has an Arrow Table or stream-handle type: --data has a Table type"},
		{"Table in a group field", remote("x", "j", `{"kind":"grp","schema":"m11tT","type":"G","group_opt":null,"entries":[]}`, ``), "argument has an Arrow Table or stream-handle type: 'g' has a Table type"},
		{"Table return", remote("x", "T", ``, ``), "return has an Arrow Table or stream-handle type: a Table"},
		{"file handle argument", remote("x", "j", pos("F", ``), ``), "argument has an Arrow Table or stream-handle type: '_1' has a file handle (F) type"},
		{"input stream in a list", remote("x", "j", pos("aI", ``), ``), "argument has an Arrow Table or stream-handle type: '_1' has an input stream (I) type"},
		{"output stream return", remote("x", "O", ``, ``), "return has an Arrow Table or stream-handle type: an output stream (O)"},
		{"positional name clashes with an option", remote("x", "s", pos("s", `,"name":"count"`)+","+opt("j", "count", `"1"`, ``), ``), "property name collision on 'count'"},
		{"group field clashes with an option", remote("x", "s", sysConfig("null")+","+opt("j", "tmpDir", `"1"`, ``), ``), "property name collision on 'tmpDir'"},
		{"positional named _render clashes with _render", remote("x", "s", pos("s", `,"name":"_render"`), `,"terminals":[{"long":"up","entry":"x"}]`), "property name collision on '_render'"},
		{"default not of the option's type", remote("x", "j", opt("j", "threads", `"abc"`, ``), ``), `default "abc" of option --threads: expected an integer, got "abc"`},
		{"group default not of the field's type", remote("x", "j", strings.Replace(sysConfig("null"), `"default":"1"`, `"default":"many"`, 1), ``), `default "many" of sysconfig field 'numThreads': expected an integer, got "many"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools, excl := Tools(manifestOf(t, c.command))
			if len(tools) != 0 || len(excl) != 1 {
				t.Fatalf("want one exclusion, got tools %d, exclusions %v", len(tools), excl)
			}
			if excl[0].Reason != c.reason {
				t.Errorf("reason %q, want %q", excl[0].Reason, c.reason)
			}
			want := "nexus mcp: excluding command 'x' from the tool surface (" + c.reason + ")"
			if excl[0].String() != want {
				t.Errorf("note %q, want %q", excl[0].String(), want)
			}
		})
	}
}

// TestExclusionLeavesOthers: excluded commands and internal ones do not
// disturb the rest, which keep manifest order.
func TestExclusionLeavesOthers(t *testing.T) {
	m := manifestOf(t,
		remote("a", "j", ``, ``),
		remote("b", "j", pos("s", `,"stdin":true`), ``),
		strings.Replace(remote("c", "j", ``, ``), `"type":"remote"`, `"type":"remote","internal":true`, 1),
		remote("d", "j", ``, ``))
	tools, excl := Tools(m)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "a,d" {
		t.Errorf("tools %v, want a,d", names)
	}
	if len(excl) != 1 || excl[0].Command != "b" {
		t.Errorf("exclusions %v, want b only", excl)
	}
}

// A pure command is a tool like a remote one (docs/spec.md §7): the caller
// evaluates it, and leaves off those it cannot run.
func TestPureCommandIsATool(t *testing.T) {
	tools, excl := Tools(manifestOf(t, `{"name":"x","type":"pure","desc":["Forty-two"],"args":[],"return":{"schema":"j"},"expr":{"tag":"lit","schema":"j","lit_type":"j","value":"42"}}`))
	if len(tools) != 1 || len(excl) != 0 || tools[0].Name != "x" {
		t.Fatalf("tools %v, exclusions %v; want the pure command as a tool", tools, excl)
	}
}
