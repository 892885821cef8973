package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baseManifest has one command of every argument kind, a terminal with its
// internal entry and a pure command. The error tests break it one key at a time.
const baseManifest = `{
  "name": "kinds",
  "build": {"path": ".", "time": 1755350000, "morloc_version": "0.98.2", "build_params": ""},
  "pools": [{"lang": "py", "exec": ["python3", "pools/py/pool.py"], "socket": "pipe-py",
             "pool_hash": "0123456789abcdef", "allow_string_null": true, "metadata": {}}],
  "commands": [
    {"name": "plain", "type": "remote", "mid": 3, "pool": 0, "needed_pools": [0], "desc": ["One positional"],
     "args": [{"kind": "pos", "schema": "j", "type": "Int", "name": null, "metavar": null, "quoted": false,
               "many": false, "stdin": false, "desc": ["Enemy Armor Class"], "constraints": [], "metadata": {},
               "source": "inline", "form": "auto", "checks": []}],
     "return": {"schema": "j", "type": "Int", "desc": [], "constraints": [], "metadata": {}},
     "constraints": [], "internal": false, "terminals": [], "metadata": {}, "group": null},
    {"name": "every", "type": "remote", "mid": 7, "pool": 0, "needed_pools": [0], "desc": ["Every kind", "second line"],
     "args": [
       {"kind": "pos", "schema": "aj", "type": "[Int]", "name": "numbers", "metavar": "INT", "quoted": false,
        "many": true, "stdin": false, "desc": ["Numbers"], "constraints": [], "metadata": {}},
       {"kind": "opt", "schema": "f8", "type": "Real", "metavar": null, "quoted": false, "many": false,
        "short": "f", "long": "factor", "default": "2.5", "desc": ["Multiplier"], "constraints": [], "metadata": {}},
       {"kind": "flag", "short": "v", "long": "verbose", "long_rev": "no-verbose", "default": "false",
        "desc": ["Talk more"], "metadata": {}},
       {"kind": "grp", "schema": "<dict>m36tmpDirsanumThreadsjcremoveCachesb", "type": "SysConfig", "metavar": null,
        "desc": ["System configuration"], "group_opt": {"short": null, "long": "sys-config"},
        "entries": [
          {"key": "tmpDir", "arg": {"kind": "opt", "type": "Str", "short": null, "long": "tmp-dir",
                                    "default": "\"/tmp\"", "desc": ["Scratch directory"], "metadata": {}}},
          {"key": "numThreads", "arg": {"kind": "opt", "type": "Int", "short": "n", "long": null,
                                        "default": "1", "desc": [], "metadata": {}}},
          {"key": "removeCaches", "arg": {"kind": "flag", "short": null, "long": "remove-caches",
                                          "long_rev": null, "default": "false", "desc": [], "metadata": {}}}],
        "constraints": [{"type": "kind", "value": "record"}], "metadata": {}}],
     "return": {"schema": "m24names3agej", "type": "Person", "desc": ["A person"], "mime": null,
                "constraints": [{"type": "kind", "value": "record"}], "metadata": {}},
     "constraints": [], "internal": false,
     "terminals": [{"short": "u", "long": "upper", "entry": "mlcp_every_upper", "description": "Shout it",
                    "render": false, "default": false}],
     "metadata": {}, "group": "misc"},
    {"name": "mlcp_every_upper", "type": "remote", "mid": 8, "pool": 0, "needed_pools": [0], "desc": [],
     "args": [], "return": {"schema": "s", "type": "Str", "desc": [], "constraints": [], "metadata": {}},
     "constraints": [], "internal": true, "terminals": [], "metadata": {}, "group": null},
    {"name": "answer", "type": "pure", "desc": ["The answer"], "args": [],
     "return": {"schema": "j", "type": "Int", "desc": [], "constraints": [], "metadata": {}},
     "constraints": [], "internal": false, "terminals": [], "metadata": {}, "group": null,
     "expr": {"tag": "lit", "schema": "j", "lit_type": "j", "value": "42"}}
  ],
  "groups": [{"name": "misc", "desc": ["Miscellany"], "metadata": {}}],
  "desc": ["A test program"],
  "epilogues": [], "unsafe_skip_null_check": false, "inline_size": null, "no_shm": false,
  "tmpdir": null, "run_log": null, "capabilities": ["log"], "metadata": {}
}`

func TestParseArgumentKinds(t *testing.T) {
	m, err := Parse("/prog/manifest.json", []byte(baseManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "kinds" || m.Version() != "0.98.2" || m.Dir != "/prog" || m.Path != "/prog/manifest.json" {
		t.Errorf("name %q version %q dir %q path %q", m.Name, m.Version(), m.Dir, m.Path)
	}
	if len(m.Pools) != 1 || m.Pools[0].Lang != "py" || strings.Join(m.Pools[0].Exec, " ") != "python3 pools/py/pool.py" ||
		m.Pools[0].Socket != "pipe-py" || m.Pools[0].PoolHash != "0123456789abcdef" || !m.Pools[0].AllowStringNull {
		t.Errorf("pool = %+v", m.Pools)
	}
	if len(m.Groups) != 1 || m.Groups[0].Name != "misc" || len(m.Desc) != 1 {
		t.Errorf("groups %+v desc %q", m.Groups, m.Desc)
	}

	every := m.Command("every")
	if every == nil {
		t.Fatal(`Command("every") = nil`)
	}
	if every.Mid != 7 || every.Pool != 0 || every.Group == nil || *every.Group != "misc" || len(every.Desc) != 2 {
		t.Errorf("every = mid %d pool %d group %v desc %q", every.Mid, every.Pool, every.Group, every.Desc)
	}
	if !every.Return.T.IsRecord() || every.Return.TypeName != "Person" {
		t.Errorf("return = %s %q, want a Person record", every.Return.T, every.Return.TypeName)
	}

	tests := []struct {
		arg      int
		kind     string
		typ      string // the parsed type, re-encoded
		display  string
		defaultV string // "" for none
	}{
		{0, KindPos, "aj", "", ""},
		{1, KindOpt, "f8", "factor", "2.5"},
		{2, KindFlag, "b", "verbose", "false"},
		{3, KindGrp, "<dict>m36tmpDirsanumThreadsjcremoveCachesb", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			a := every.Args[tc.arg]
			if a.Kind != tc.kind {
				t.Fatalf("kind = %q, want %q", a.Kind, tc.kind)
			}
			if a.T == nil || a.T.String() != tc.typ {
				t.Errorf("type = %v, want %s", a.T, tc.typ)
			}
			if got := a.DisplayName(); got != tc.display {
				t.Errorf("DisplayName() = %q, want %q", got, tc.display)
			}
			got := ""
			if a.Default != nil {
				got = *a.Default
			}
			if got != tc.defaultV {
				t.Errorf("default = %q, want %q", got, tc.defaultV)
			}
		})
	}

	pos := every.Args[0]
	if pos.Name == nil || *pos.Name != "numbers" || pos.Metavar == nil || *pos.Metavar != "INT" || !pos.Many || pos.Stdin {
		t.Errorf("pos = name %v metavar %v many %v stdin %v", pos.Name, pos.Metavar, pos.Many, pos.Stdin)
	}
	if flag := every.Args[2]; flag.Short != "v" || flag.LongRev != "no-verbose" {
		t.Errorf("flag short %q long_rev %q", flag.Short, flag.LongRev)
	}

	grp := every.Args[3]
	if grp.GroupOpt == nil || grp.GroupOpt.Long != "sys-config" || grp.GroupOpt.Short != "" || grp.TypeName != "SysConfig" {
		t.Errorf("group_opt %+v type %q", grp.GroupOpt, grp.TypeName)
	}
	entries := []struct{ key, kind, typ, display, defaultV string }{
		{"tmpDir", KindOpt, "s", "tmp-dir", `"/tmp"`},
		{"numThreads", KindOpt, "j", "n", "1"},
		{"removeCaches", KindFlag, "b", "remove-caches", "false"},
	}
	if len(grp.Entries) != len(entries) {
		t.Fatalf("%d entries, want %d", len(grp.Entries), len(entries))
	}
	for i, want := range entries {
		e := grp.Entries[i]
		if e.Key != want.key || e.Arg.Kind != want.kind || e.Arg.T == nil || e.Arg.T.String() != want.typ ||
			e.Arg.DisplayName() != want.display || e.Arg.Default == nil || *e.Arg.Default != want.defaultV {
			t.Errorf("entry %d = %s %s %v %q, want %+v", i, e.Key, e.Arg.Kind, e.Arg.T, e.Arg.DisplayName(), want)
		}
	}

	if len(every.Terminals) != 1 {
		t.Fatalf("terminals = %+v", every.Terminals)
	}
	term := every.Terminals[0]
	if term.Short != "u" || term.Long != "upper" || term.Entry != "mlcp_every_upper" || term.Description != "Shout it" {
		t.Errorf("terminal = %+v", term)
	}
	if entry := m.Command(term.Entry); entry == nil || !entry.Internal {
		t.Errorf("terminal entry %q: %+v, want an internal command", term.Entry, entry)
	}

	answer := m.Command("answer")
	var expr map[string]string
	if err := json.Unmarshal(answer.Expr, &expr); err != nil || expr["tag"] != "lit" || expr["value"] != "42" {
		t.Errorf("pure expr = %s (%v)", answer.Expr, err)
	}
	if answer.Type != Pure {
		t.Errorf("answer type = %q", answer.Type)
	}

	var names []string
	for _, c := range m.Exported() {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "plain,every,answer" {
		t.Errorf("Exported() = %s, want plain,every,answer", got)
	}
	if m.Command("nope") != nil {
		t.Error(`Command("nope") != nil`)
	}
}

func TestVersionWithoutBuild(t *testing.T) {
	m, err := Parse("/m.json", []byte(`{"name":"bare","commands":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Version() != "0.0.0" || len(m.Exported()) != 0 {
		t.Errorf("Version() = %q, exported %d", m.Version(), len(m.Exported()))
	}
}

// edit changes the decoded base manifest before it is re-encoded and parsed.
type edit func(root map[string]any)

// at walks decoded JSON by object keys and array indices.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// set puts value at path (the last step a key); a nil-typed deleteKey removes the key.
func set(value any, path ...any) edit {
	return func(root map[string]any) {
		parent := at(root, path[:len(path)-1]...)
		switch k := path[len(path)-1].(type) {
		case string:
			if value == deleteKey {
				delete(parent.(map[string]any), k)
			} else {
				parent.(map[string]any)[k] = value
			}
		case int:
			parent.([]any)[k] = value
		}
	}
}

var deleteKey = &struct{}{}

func TestParseErrors(t *testing.T) {
	grpEntries := []any{"commands", 1, "args", 3, "entries"}
	tests := []struct {
		name string
		edit edit
		path string
		msg  string
	}{
		{"schema is a number deep down", set(5, "commands", 1, "args", 0, "schema"),
			"commands[1].args[0].schema", "expected a string, got integer"},
		{"mid is a string", set("3", "commands", 0, "mid"), "commands[0].mid", "expected an integer, got string"},
		{"mid is fractional", set(1.5, "commands", 0, "mid"), "commands[0].mid", "expected an integer, got number"},
		{"mid is beyond 64 bits", set(json.Number("99999999999999999999"), "commands", 0, "mid"), "commands[0].mid", "expected an integer of 64 bits, got 99999999999999999999"},
		{"mid has an exponent", set(json.Number("1e2"), "commands", 0, "mid"), "commands[0].mid", "expected an integer, got number"},
		{"desc line is not a string", set([]any{"ok", 3}, "commands", 0, "desc"), "commands[0].desc[1]", "expected a string, got integer"},
		{"argument is null", set(nil, "commands", 1, "args", 0), "commands[1].args[0]", "expected an object, got null"},
		{"commands missing", set(deleteKey, "commands"), "commands", "missing required key: expected an array"},
		{"name missing", set(deleteKey, "name"), "name", "missing required key: expected a string"},
		{"name empty", set("", "name"), "name", "expected a non-empty program name"},
		{"pool exec missing", set(deleteKey, "pools", 0, "exec"), "pools[0].exec", "missing required key: expected an array"},
		{"pool exec empty", set([]any{}, "pools", 0, "exec"), "pools[0].exec", "expected a non-empty argv array"},
		{"pool lang empty", set("", "pools", 0, "lang"), "pools[0].lang", `expected a language name such as "py"`},
		{"entry key is a bool", set(true, append(grpEntries, 0, "key")...), "commands[1].args[3].entries[0].key", "expected a string, got boolean"},
		{"terminal render is a string", set("yes", "commands", 1, "terminals", 0, "render"),
			"commands[1].terminals[0].render", "expected a boolean, got string"},
		{"pool index out of range", set(3, "commands", 0, "pool"), "commands[0].pool",
			"pool index 3 out of range: the manifest has 1 pool(s)"},
		{"negative pool index", set(-1, "commands", 0, "pool"), "commands[0].pool", "pool index -1 out of range"},
		{"needed pool out of range", set([]any{0, 2}, "commands", 0, "needed_pools"), "commands[0].needed_pools[1]",
			"pool index 2 out of range"},
		{"unknown argument kind", set("posn", "commands", 1, "args", 0, "kind"), "commands[1].args[0].kind",
			`unknown argument kind "posn" (expected "pos", "opt", "flag" or "grp")`},
		{"unknown command type", set("local", "commands", 0, "type"), "commands[0].type",
			`unknown command type "local" (expected "remote" or "pure")`},
		{"bad argument schema", set("m2", "commands", 1, "args", 0, "schema"), "commands[1].args[0].schema",
			`type string "m2" at offset 2: expected a base-62 record field key length, got end of string`},
		{"bad option schema", set("q", "commands", 1, "args", 1, "schema"), "commands[1].args[1].schema", `unknown type code 'q'`},
		{"bad return schema", set("ajj", "commands", 0, "return", "schema"), "commands[0].return.schema",
			`unexpected trailing "j" after a complete type`},
		{"missing return schema", set(deleteKey, "commands", 0, "return", "schema"), "commands[0].return.schema",
			"missing required key: expected a string"},
		{"group schema not a record", set("aj", "commands", 1, "args", 3, "schema"), "commands[1].args[3].schema",
			"expected a record type (m...) for a group argument, got a list"},
		{"group entry key not in record", set("threads", append(grpEntries, 1, "key")...), "commands[1].args[3].entries[1].key",
			`field "threads" is not in the group's record <dict>m36tmpDirsanumThreadsjcremoveCachesb`},
		{"group entry is positional", set("pos", append(grpEntries, 0, "arg", "kind")...), "commands[1].args[3].entries[0].arg.kind",
			`expected "opt" or "flag", got "pos"`},
		{"flag entry for a non-Bool field", set("flag", append(grpEntries, 1, "arg", "kind")...), "commands[1].args[3].entries[1].arg.kind",
			`a flag sets a Bool, but field "numThreads"`},
		{"option without a name", func(r map[string]any) {
			set(nil, "commands", 1, "args", 1, "short")(r)
			set(nil, "commands", 1, "args", 1, "long")(r)
		}, "commands[1].args[1]", "expected an option with a long or short name"},
		{"flag without a name", func(r map[string]any) {
			set(deleteKey, "commands", 1, "args", 2, "short")(r)
			set("", "commands", 1, "args", 2, "long")(r)
		}, "commands[1].args[2]", "expected a flag with a long or short name"},
		{"duplicate command names", set("plain", "commands", 2, "name"), "commands[2].name",
			`command "plain" is already defined at commands[0]`},
		{"empty command name", set("", "commands", 3, "name"), "commands[3].name", "expected a non-empty command name"},
		{"terminal entry missing", set("mlcp_every_lower", "commands", 1, "terminals", 0, "entry"),
			"commands[1].terminals[0].entry", `entry "mlcp_every_lower" names no command in the manifest`},
		{"terminal without a name", func(r map[string]any) {
			set(nil, "commands", 1, "terminals", 0, "short")(r)
			set(nil, "commands", 1, "terminals", 0, "long")(r)
		}, "commands[1].terminals[0]", "expected a terminal with a long or short name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var root map[string]any
			if err := json.Unmarshal([]byte(baseManifest), &root); err != nil {
				t.Fatal(err)
			}
			tc.edit(root)
			data, err := json.Marshal(root)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "manifest.json")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := Load(file)
			if err == nil {
				t.Fatalf("Load accepted the broken manifest %q", m.Name)
			}
			wantManifestError(t, err, file, tc.path, tc.msg)
		})
	}
}

func TestParseInvalidJSON(t *testing.T) {
	tests := []struct {
		name string
		data string
		msg  string
	}{
		{"bad value", "{\n  \"name\": x}", "not valid JSON at line 2, column 11: invalid character 'x'"},
		{"trailing comma", "{\"name\": \"a\",\n\"commands\": [],}", "not valid JSON at line 2, column 16: invalid character '}'"},
		{"first byte", "x", "not valid JSON at line 1, column 1: invalid character 'x'"},
		{"truncated", "{\"name\":\n", "not valid JSON at line 2, column 1: unexpected end of file"},
		{"empty file", "", "not valid JSON: the file is empty"},
		{"blank file", " \n\t", "not valid JSON: the file is empty"},
		{"second object", "{\"name\": \"a\", \"commands\": []}\n{}", "not valid JSON at line 2, column 1: trailing data after the top-level object"},
		{"stray brace", "{\"name\": \"a\", \"commands\": []} }", "not valid JSON at line 1, column 31: trailing data"},
		{"array at top level", "[]", "expected an object, got array"},
		{"null at top level", "null", "expected an object, got null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("/some/prog/manifest.json", []byte(tc.data))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			wantManifestError(t, err, "/some/prog/manifest.json", "", tc.msg)
		})
	}
}

func wantManifestError(t *testing.T, err error, file, path, msg string) {
	t.Helper()
	var me *Error
	if !errors.As(err, &me) {
		t.Fatalf("error %q is a %T, want *manifest.Error", err, err)
	}
	if me.File != file || me.Path != path {
		t.Errorf("error at file %q path %q, want %q %q", me.File, me.Path, file, path)
	}
	text := err.Error()
	for _, want := range []string{file, path, msg} {
		if !strings.Contains(text, want) {
			t.Errorf("error %q does not contain %q", text, want)
		}
	}
	if errors.Is(err, ErrNotFound) {
		t.Errorf("a broken manifest is reported as not found: %v", err)
	}
}

const minimalManifest = `{"name": "tiny", "pools": [], "commands": []}`

func TestLoadTargets(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "tiny-build", "manifest.json")
	odd := filepath.Join(dir, "it's here", "manifest.json") // a quote and a space in the path
	for _, p := range []string{manifest, odd} {
		write(t, p, minimalManifest)
	}
	launcher := func(line string) string {
		return "#!/bin/sh\n# generated launcher\nset -e\n" + line + "\n"
	}
	write(t, filepath.Join(dir, "tiny"), launcher(fmt.Sprintf(`exec morloc-nexus run '%s' "$@"`, manifest)))
	write(t, filepath.Join(dir, "tiny-nexus"), launcher(fmt.Sprintf(`exec /usr/local/bin/nexus run '%s' "$@"`, manifest)))
	write(t, filepath.Join(dir, "tiny-rel"), launcher(`exec morloc-nexus run 'tiny-build/manifest.json' "$@"`))
	write(t, filepath.Join(dir, "odd"), launcher(`exec morloc-nexus run '`+strings.ReplaceAll(odd, "'", `'\''`)+`' "$@"`))

	tests := []struct {
		name, target, want string
	}{
		{"manifest file", manifest, manifest},
		{"program directory", filepath.Dir(manifest), manifest},
		{"morloc launcher", filepath.Join(dir, "tiny"), manifest},
		{"nexus launcher", filepath.Join(dir, "tiny-nexus"), manifest},
		{"launcher with a relative path", filepath.Join(dir, "tiny-rel"), manifest},
		{"launcher with quoting", filepath.Join(dir, "odd"), odd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if m.Path != tc.want || m.Dir != filepath.Dir(tc.want) || m.Name != "tiny" {
				t.Errorf("loaded %s (dir %s, name %q), want %s", m.Path, m.Dir, m.Name, tc.want)
			}
		})
	}

	// A relative target is made absolute.
	t.Run("relative target", func(t *testing.T) {
		t.Chdir(dir)
		m, err := Load("tiny-build")
		if err != nil {
			t.Fatal(err)
		}
		if m.Path != manifest {
			t.Errorf("Path = %s, want %s", m.Path, manifest)
		}
	})
}

func TestLoadNotFound(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "gone"), "#!/bin/sh\nexec morloc-nexus run '/nonexistent/gone-build/manifest.json' \"$@\"\n")
	write(t, filepath.Join(dir, "noexec"), "#!/bin/sh\necho hello\n")
	write(t, filepath.Join(dir, "norun"), "#!/bin/sh\nexec python3 main.py \"$@\"\n")
	if err := os.Mkdir(filepath.Join(dir, "empty-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, target, msg string
	}{
		{"missing file", filepath.Join(dir, "nope.json"), "nope.json"},
		{"directory without manifest.json", filepath.Join(dir, "empty-dir"), "empty-dir is a directory without manifest.json"},
		{"launcher naming a missing manifest", filepath.Join(dir, "gone"), "/nonexistent/gone-build/manifest.json, which does not exist"},
		{"launcher without exec", filepath.Join(dir, "noexec"), "has no `exec ... run '<manifest>'` line"},
		{"launcher exec without run", filepath.Join(dir, "norun"), "exec line names no manifest after `run`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.target)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Load(%s) = %v, want ErrNotFound", tc.target, err)
			}
			if !strings.Contains(err.Error(), "program not found") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to say %q", err, tc.msg)
			}
		})
	}
}

func TestLoadEmptyTarget(t *testing.T) {
	for _, target := range []string{"", "  "} {
		_, err := Load(target)
		if err == nil || !strings.Contains(err.Error(), "missing program") {
			t.Errorf("Load(%q) = %v, want a missing program error", target, err)
		}
	}
	// An empty manifest file is a broken program, not a missing one.
	file := filepath.Join(t.TempDir(), "manifest.json")
	write(t, file, "")
	_, err := Load(file)
	wantManifestError(t, err, file, "", "not valid JSON: the file is empty")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
