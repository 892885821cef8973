package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// launcherFixture is a fixture under testdata/launchers (README.md there).
func launcherFixture(parts ...string) string {
	return filepath.Join(append([]string{"testdata", "launchers"}, parts...)...)
}

// Every launcher morloc has written loads as a program: the format it is
// in, the morloc version its pools speak, where they run, and what they
// are. The programs' commands are pinned by argmap's golden tool lists.
func TestLoadMorlocLaunchers(t *testing.T) {
	const repo = "/home/z/projects/morloc-core/morloc-workspace/compiler/morloc/test-suite/"
	tests := []struct {
		path                    string
		format                  Format
		wire, dir               string
		langs                   string // the pools' languages, in order
		commands                string // the command names, in order
		inlineSize              int64  // -1: not set
		firstExec, firstCommand string
	}{
		{launcherFixture("v0.69-py", "nexus"), FormatV1, "0.69.0", "/tmp/mf-build/py", "py",
			"wordStats scale shout window maybeHalf configure pairUp", -1, "python3 pools/main/pool.py", "wordStats"},
		{launcherFixture("v0.69-r", "nexus"), FormatV1, "0.69.0", "/tmp/mf-build/r", "r",
			"total describe topN normalize birthday", -1, "Rscript pools/main/pool.R", "total"},
		{launcherFixture("v0.69-cpp", "nexus"), FormatV1, "0.69.0", "/tmp/mf-build/cpp", "cpp",
			"mean clampAll stats factorial counts", -1, "pools/main/pool-cpp.out", "mean"},
		{launcherFixture("v0.69-cross", "nexus"), FormatV1, "0.69.0", "/tmp/mf-build/cross", "r cpp py",
			"report spread", -1, "Rscript pools/main/pool.R", "report"},
		{launcherFixture("morloc-repo", "v1-pool-crash-cpp"), FormatV1, "0.69.0", repo + "error-message-tests/pool-crash-cpp", "cpp",
			"crashme", -1, "pools/main/pool-cpp.out", "crashme"},
		{launcherFixture("written-v0.75-py", "nexus"), FormatEmbedded, "0.75.0", "/home/user/wordy", "py",
			"wordStats scale shout window maybeHalf configure pairUp", -1, "python3 pools/main/pool.py", "wordStats"},
		{launcherFixture("morloc-repo", "v0.84.0-let-do-fusion"), FormatEmbedded, "0.84.0", repo + "golden-tests/let-do-fusion", "cpp r py",
			"fusedCppChain effectOrderCpp effectOrderPolyglot doBlockBareThenBind diamondReuse doInLet letInDo doInDoForced " +
				"doInDoLet letBndTailEffect constTailWithEffect deepLetChain factWithLetChain forcedThrice mixedSameLangFanOut " +
				"doOnlyBareStatements shadowedBinding crossLangIntoSameLangFinish", -1,
			"/home/z/projects/morloc-core/morloc-workspace/compiler/morloc/test-suite/golden-tests/let-do-fusion/pools/main/pool-cpp.out", "fusedCppChain"},
		{launcherFixture("morloc-repo", "v0.85.0-caret-position-typeerror"), FormatEmbedded, "0.85.0", repo + "golden-tests/caret-position-typeerror", "py",
			"val", -1, "python3 " + repo + "golden-tests/caret-position-typeerror/pools/foo/pool.py", "val"},
		{launcherFixture("morloc-repo", "v0.95.0-rust-error"), FormatEmbedded, "0.95.0", repo + "golden-tests/rust-error", "rust py",
			"checkLen safeCheck crossThrow catchBare", -1, repo + "golden-tests/rust-error/pools/main/pool-rust.out", "checkLen"},
		{launcherFixture("written-v0.96-py", "nexus"), FormatEmbedded, "0.96.0", "/home/user/wordy", "py",
			"wordStats scale shout window maybeHalf configure pairUp", 65536, "python3 /home/user/wordy/pools/main/pool.py", "wordStats"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			m, err := Load(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(tc.path)
			if m.Path != abs {
				t.Errorf("Path %s, want the launcher %s", m.Path, abs)
			}
			if m.Format != tc.format || m.WireVersion() != tc.wire || m.Dir != tc.dir {
				t.Errorf("format %q, wire version %q, dir %s; want %q, %q, %s", m.Format, m.WireVersion(), m.Dir, tc.format, tc.wire, tc.dir)
			}
			var langs, names []string
			for _, p := range m.Pools {
				langs = append(langs, p.Lang)
				if p.Runtime != RuntimeMorloc {
					t.Errorf("pool %s: runtime %q, want morloc", p.Lang, p.Runtime)
				}
				if p.Socket != "pipe-"+p.Lang {
					t.Errorf("pool %s: socket %q", p.Lang, p.Socket)
				}
			}
			for _, c := range m.Commands {
				names = append(names, c.Name)
			}
			if got := strings.Join(langs, " "); got != tc.langs {
				t.Errorf("pools %s, want %s", got, tc.langs)
			}
			if got := strings.Join(names, " "); got != tc.commands {
				t.Errorf("commands %s\nwant %s", got, tc.commands)
			}
			if got := strings.Join(m.Pools[0].Exec, " "); got != tc.firstExec {
				t.Errorf("pools[0].exec %s, want %s", got, tc.firstExec)
			}
			switch {
			case tc.inlineSize < 0 && m.InlineSize != nil:
				t.Errorf("inline size %d, want none", *m.InlineSize)
			case tc.inlineSize >= 0 && (m.InlineSize == nil || *m.InlineSize != tc.inlineSize):
				t.Errorf("inline size %v, want %d", m.InlineSize, tc.inlineSize)
			}
		})
	}
}

// How morloc 0.69's manifest becomes the later schema's structs (v1.go),
// on the real launcher of v0.69-py.
func TestVersion1Conversion(t *testing.T) {
	m, err := Load(launcherFixture("v0.69-py", "nexus"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "main" || m.Build.Path != "/tmp/mf-build/py" || m.Build.Time == 0 || m.Build.MorlocVersion != "" || m.Version() != "0.0.0" {
		t.Errorf("name %q build %+v version %s", m.Name, m.Build, m.Version())
	}
	arg := func(cmd string, i int) Arg { t.Helper(); return argOf(t, m, cmd, i) }
	cfg := arg("configure", 0)
	tests := []struct {
		what      string
		got, want any
	}{
		{"wordStats: remote, mid, pool", fmt.Sprintf("%s %d %d %v", m.Command("wordStats").Type, m.Command("wordStats").Mid, m.Command("wordStats").Pool, m.Command("wordStats").NeededPools), "remote 1 0 [0]"},
		{"a positional: schema, type, quoted", arg("wordStats", 0).Kind + " " + arg("wordStats", 0).Schema + " " + arg("wordStats", 0).TypeName + " " + fmt.Sprint(arg("wordStats", 0).Quoted), "pos <str>s Str true"},
		{"a positional has no name", arg("wordStats", 0).Name == nil, true},
		{"a positional's metavar", deref(arg("scale", 1).Metavar), "NUMBERS"},
		{"the return", m.Command("wordStats").Return.Schema + " " + m.Command("wordStats").Return.TypeName, "<dict>m26nwords<int>i47longest<str>s Stats"},
		{"the return's description", strings.Join(m.Command("wordStats").Return.Desc, "|"), "its word count and longest word"},
		{"the return is a record", m.Command("wordStats").Return.T.IsRecord(), true},
		{"the command's description", strings.Join(m.Command("wordStats").Desc, "|"), "Count the words of a text and find the longest"},
		{"an option", arg("scale", 0).Kind + " " + arg("scale", 0).Schema + " " + arg("scale", 0).Short + " " + arg("scale", 0).Long + " " + deref(arg("scale", 0).Default), "opt <float>f8 f factor 2.5"},
		{"a flag has no schema, and is a Bool", arg("shout", 0).Kind + " " + arg("shout", 0).Schema + "|" + arg("shout", 0).T.Kind.String(), "flag |bool"},
		{"a flag's names and default", arg("shout", 0).Short + " " + arg("shout", 0).Long + " " + arg("shout", 0).LongRev + "|" + deref(arg("shout", 0).Default), "l loud |false"},
		{"an Int is i4 with its hint", arg("window", 0).T.Code + " " + arg("window", 0).T.Hint, "i4 int"},
		{"an optional return keeps its hints", m.Command("maybeHalf").Return.Schema, "<int>?<int>i4"},
		{"a group: kind and schema", cfg.Kind + " " + cfg.Schema, "grp <dict>m33dir<str>s7threads<int>i47verbose<bool>b"},
		{"a group's type is its metavar, the record's name", cfg.TypeName, "Config"},
		{"a group's option", cfg.GroupOpt != nil && cfg.GroupOpt.Long == "config" && cfg.GroupOpt.Short == "", true},
		{"a group's entries", len(cfg.Entries), 3},
		{"an entry option", cfg.Entries[1].Key + " " + cfg.Entries[1].Arg.Kind + " " + cfg.Entries[1].Arg.Short + " " + cfg.Entries[1].Arg.Long + " " + deref(cfg.Entries[1].Arg.Default) + " " + cfg.Entries[1].Arg.T.Code, "threads opt t threads 1 i4"},
		{"an entry's literal string default", deref(cfg.Entries[0].Arg.Default) + " " + fmt.Sprint(cfg.Entries[0].Arg.Quoted), `"/tmp" true`},
		{"an entry flag", cfg.Entries[2].Key + " " + cfg.Entries[2].Arg.Kind + " " + cfg.Entries[2].Arg.Long + " " + cfg.Entries[2].Arg.LongRev, "verbose flag verbose quiet"},
		{"an entry has no schema of its own", cfg.Entries[1].Arg.Schema, ""},
		{"a pure command", m.Command("pairUp").Type, Pure},
		{"its expression is kept", pureTag(t, m.Command("pairUp").Expr), "lambda"},
		{"no command is internal", len(m.Exported()), len(m.Commands)},
		{"no groups", len(m.Groups), 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}

func pureTag(t *testing.T, raw []byte) string {
	t.Helper()
	var e struct{ Tag string }
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("expr %s: %v", raw, err)
	}
	return e.Tag
}

// v1Base is a small version-1 manifest with every argument kind, which the
// error tests break one key at a time.
const v1Base = `{"version":1,"name":"main","build_dir":"/b","build_time":1,
"pools":[{"lang":"py","exec":["python3","pools/main/pool.py"],"socket":"pipe-py"}],
"commands":[
 {"name":"f","type":"remote","mid":1,"pool":0,"needed_pools":[0],"arg_schemas":["<int>i4","<bool>b","<dict>m11a<int>i4"],
  "return_schema":"<int>i4","desc":[],"return_type":"Int","return_desc":[],
  "args":[{"kind":"pos","metavar":null,"type_desc":"Int","quoted":false,"desc":[]},
          {"kind":"flag","short":"v","long":null,"long_rev":null,"default":"false","desc":[]},
          {"kind":"grp","metavar":"A","desc":[],"group_opt":null,"entries":[
            {"key":"a","arg":{"kind":"opt","metavar":"Int","type_desc":"Int","quoted":false,"short":"a","long":null,"default":"1","desc":[]}}]}],
  "group":null}],
"groups":[]}`

func v1Launcher(manifest string) string {
	return "#!/bin/sh\nexec morloc-nexus \"$0\" \"$@\"\n### MANIFEST ###\n" + manifest
}

// A broken embedded manifest is reported with the launcher's path and the
// JSON path inside the manifest; a syntax error with its line in the file.
func TestEmbeddedManifestErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want string
	}{
		{"version 1 as is", v1Launcher(v1Base), ""},
		{"unknown version", v1Launcher(strings.Replace(v1Base, `"version":1`, `"version":2`, 1)),
			"at version: unknown manifest version 2: nexus reads version 1 (morloc 0.69 to 0.74) and the unversioned manifests of morloc 0.75 on"},
		{"version not a number", v1Launcher(strings.Replace(v1Base, `"version":1`, `"version":"1"`, 1)),
			"at version: expected an integer, got string"},
		{"a schema fewer than arguments", v1Launcher(strings.Replace(v1Base, `"arg_schemas":["<int>i4","<bool>b",`, `"arg_schemas":["<int>i4",`, 1)),
			"at commands[0].arg_schemas: expected one schema per argument: 2 schema(s) for 3 argument(s)"},
		{"a bad schema string", v1Launcher(strings.Replace(v1Base, `"<bool>b"`, `"<bool>q"`, 1)),
			`at commands[0].arg_schemas[1]: type string "<bool>q" at offset 6: unknown type code 'q'`},
		{"a bad return schema", v1Launcher(strings.Replace(v1Base, `"return_schema":"<int>i4"`, `"return_schema":"<int>i3"`, 1)),
			`at commands[0].return_schema: type string "<int>i3" at offset 6: expected a width 1, 2, 4 or 8 after 'i'`},
		{"a missing socket", v1Launcher(strings.Replace(v1Base, `,"socket":"pipe-py"`, ``, 1)),
			"at pools[0].socket: missing required key: expected a string"},
		{"an argument kind", v1Launcher(strings.Replace(v1Base, `"kind":"pos"`, `"kind":"positional"`, 1)),
			`at commands[0].args[0].kind: unknown argument kind "positional"`},
		{"a group entry's key", v1Launcher(strings.Replace(v1Base, `"key":"a"`, `"key":"b"`, 1)),
			`at commands[0].args[2].entries[0].key: field "b" is not in the group's record <dict>m11a<int>i4`},
		{"a pool index", v1Launcher(strings.Replace(v1Base, `"pool":0`, `"pool":3`, 1)),
			"at commands[0].pool: pool index 3 out of range: the manifest has 1 pool(s)"},
		{"a description line", v1Launcher(strings.Replace(v1Base, `"return_desc":[]`, `"return_desc":[7]`, 1)),
			"at commands[0].return_desc[0]: expected a string, got integer"},
		{"a version beside a build object is the later schema's", v1Launcher(`{"name":"p","version":"2.1","build":{"path":"/b"},"pools":[],"commands":[],"inline_size":-2}`),
			"at inline_size: expected a size in bytes"},
		{"the later schema, broken", v1Launcher(`{"name":"p","build":{"path":"/b","time":"now"},"pools":[],"commands":[]}`),
			"at build.time: expected an integer, got string"},
		{"metadata.runtime in a launcher", v1Launcher(`{"name":"p","pools":[{"lang":"py","exec":["python3"],"metadata":{"runtime":"py"}}],"commands":[]}`),
			`at pools[0].metadata.runtime: expected "nexus"`},
		{"negative inline size", v1Launcher(`{"name":"p","pools":[],"commands":[],"inline_size":-1}`),
			"at inline_size: expected a size in bytes (0 or more) or null, got -1"},
		{"a syntax error is placed in the launcher", v1Launcher("{\"version\":1,\n\"name\":\"main\",,\n}"),
			"not valid JSON at line 5, column 15"},
		{"a truncated manifest", v1Launcher(v1Base[:100]),
			"unexpected end of file"},
		{"nothing after the marker", v1Launcher(""),
			"not valid JSON: nothing follows the \"### MANIFEST ###\" line"},
		{"trailing data", v1Launcher(v1Base + "\nexit 0\n"),
			"trailing data after the top-level object"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("nexus%d", i))
			write(t, path, tc.content)
			m, err := Load(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Format != FormatV1 || len(m.Commands[0].Args) != 3 {
					t.Errorf("format %q, %d args", m.Format, len(m.Commands[0].Args))
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded; want an error saying %q", tc.want)
			}
			var me *Error
			if !errors.As(err, &me) || me.File != path || !me.Embedded {
				t.Fatalf("error %#v does not name the launcher %s as holding the manifest", err, path)
			}
			prefix := "manifest " + path + " (embedded after ### MANIFEST ###): "
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n %s\nwant it to start %q and say %q", err, prefix, tc.want)
			}
			if errors.Is(err, ErrNotFound) {
				t.Errorf("a broken manifest is reported as not found: %v", err)
			}
		})
	}
}

// Every launcher shape resolves to the file holding the manifest: morloc's
// of 0.69 to 0.88 and of 0.89 to 0.96 (the launcher itself), of 0.97 on
// (the manifest.json it names, in run or daemon mode), and nexus's own
// launcher of any of them.
func TestResolveLaunchers(t *testing.T) {
	dir := t.TempDir()
	v069, _ := filepath.Abs(launcherFixture("v0.69-py", "nexus"))
	v095, _ := filepath.Abs(launcherFixture("morloc-repo", "v0.95.0-rust-error"))
	build := filepath.Join(dir, "main-build")
	manifest := filepath.Join(build, "manifest.json")
	write(t, manifest, `{"name":"main","build":{"path":".","morloc_version":"0.98.2"},"pools":[{"lang":"py","exec":["python3","pools/py/pool.py"]}],"commands":[]}`)
	write(t, filepath.Join(dir, "main"), "#!/bin/sh\nexport MORLOC_PROG_NAME=\"$0\"\nexec morloc-nexus run '"+manifest+"' \"$@\"\n")
	write(t, filepath.Join(dir, "main-daemon"), "#!/bin/sh\nexport MORLOC_PROG_NAME=\"$0\"\nexec morloc-nexus daemon '"+manifest+"' \"$@\"\n")
	write(t, filepath.Join(dir, "of-069"), "#!/bin/sh\n# launcher for the program \"main\", written by nexus\nexec /usr/local/bin/nexus run '"+v069+"' \"$@\"\n")
	write(t, filepath.Join(dir, "of-095"), "#!/bin/sh\nexec /usr/local/bin/nexus run '"+v095+"' \"$@\"\n")
	write(t, filepath.Join(dir, "of-of-069"), "#!/bin/sh\nexec nexus run '"+filepath.Join(dir, "of-069")+"' \"$@\"\n")
	tests := []struct {
		name, target, want string
		dir                string
	}{
		{"morloc 0.69", v069, v069, "/tmp/mf-build/py"},
		{"morloc 0.95 (run \"$0\")", v095, v095, "/home/z/projects/morloc-core/morloc-workspace/compiler/morloc/test-suite/golden-tests/rust-error"},
		{"morloc 0.98", filepath.Join(dir, "main"), manifest, build},
		{"morloc 0.98 daemon launcher", filepath.Join(dir, "main-daemon"), manifest, build},
		{"nexus launcher of a 0.69 launcher", filepath.Join(dir, "of-069"), v069, "/tmp/mf-build/py"},
		{"nexus launcher of a 0.95 launcher", filepath.Join(dir, "of-095"), v095, "/home/z/projects/morloc-core/morloc-workspace/compiler/morloc/test-suite/golden-tests/rust-error"},
		{"a launcher of a launcher of a launcher", filepath.Join(dir, "of-of-069"), v069, "/tmp/mf-build/py"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Resolve = %s, want %s", got, tc.want)
			}
			m, err := Load(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if m.Path != tc.want || m.Dir != tc.dir {
				t.Errorf("Path %s Dir %s, want %s and %s", m.Path, m.Dir, tc.want, tc.dir)
			}
		})
	}
}

func TestResolveLauncherFaults(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "self"), "#!/bin/sh\nexec morloc-nexus run \"$0\" \"$@\"\n")
	write(t, filepath.Join(dir, "self-069"), "#!/bin/sh\nexec morloc-nexus \"$0\" \"$@\"\n")
	for i := 0; i < maxLauncherHops+1; i++ {
		write(t, filepath.Join(dir, fmt.Sprintf("loop%d", i)), fmt.Sprintf("#!/bin/sh\nexec nexus run 'loop%d' \"$@\"\n", (i+1)%(maxLauncherHops+1)))
	}
	tests := []struct{ name, target, msg string }{
		{"runs itself without a manifest", "self", `runs itself ("$0") but has no "### MANIFEST ###" line`},
		{"0.69's exec line without a manifest", "self-069", `runs itself ("$0") but has no "### MANIFEST ###" line`},
		{"launchers in a ring", "loop0", fmt.Sprintf("more than %d launchers name one another", maxLauncherHops)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(filepath.Join(dir, tc.target))
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Load: %v, want ErrNotFound saying %q", err, tc.msg)
			}
		})
	}
	// Parse given a script that embeds nothing says so.
	_, err := Parse("/x/prog", []byte("#!/bin/sh\necho hi\n"))
	if err == nil || !strings.Contains(err.Error(), `a script with no "### MANIFEST ###" line`) {
		t.Errorf("Parse of a plain script: %v", err)
	}
}

// The marker is found as morloc's readers find it: on a line of its own
// after the shebang, the manifest starting on the next line.
func TestEmbeddedManifestMarker(t *testing.T) {
	tests := []struct {
		data string
		off  int
		ok   bool
	}{
		{"#!/bin/sh\n### MANIFEST ###\n{}", 27, true},
		{"#!/bin/sh\nexec x \"$0\"\n### MANIFEST ###\r\n{}", 40, true},
		{"#!/bin/sh\n### MANIFEST ###", 26, true},
		{"#!/bin/sh\necho '### MANIFEST ###'\n{}", 0, false},
		{"#!/bin/sh ### MANIFEST ###\n{}", 0, false},
		{"{\"a\":1}\n### MANIFEST ###\n", 0, false},
	}
	for _, tc := range tests {
		off, ok := embeddedManifest([]byte(tc.data))
		if off != tc.off || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.data, off, ok, tc.off, tc.ok)
		}
	}
}

// The 0.98 keys the morloc driver passes to pools, and where the pools run.
func TestDriverFields(t *testing.T) {
	m, err := Parse("/p/main-build/manifest.json", []byte(`{"name":"p","build":{"path":".","morloc_version":"0.98.2"},
	  "pools":[],"commands":[],"inline_size":1024,"no_shm":true,"tmpdir":"/scratch"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.InlineSize == nil || *m.InlineSize != 1024 || !m.NoShm || m.TmpDir != "/scratch" || m.WireVersion() != "0.98.2" || m.Dir != "/p/main-build" || m.Format != FormatFile {
		t.Errorf("inline %v no_shm %v tmpdir %q wire %q dir %s format %q", m.InlineSize, m.NoShm, m.TmpDir, m.WireVersion(), m.Dir, m.Format)
	}
	m, err = Parse("/p/manifest.json", []byte(`{"name":"p","pools":[],"commands":[],"inline_size":null,"no_shm":false,"tmpdir":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.InlineSize != nil || m.NoShm || m.TmpDir != "" || m.WireVersion() != "" || m.Dir != "/p" {
		t.Errorf("nulls: inline %v no_shm %v tmpdir %q wire %q dir %s", m.InlineSize, m.NoShm, m.TmpDir, m.WireVersion(), m.Dir)
	}
	for _, tt := range []struct{ recorded, dir string }{
		{"", "/p/b"}, {".", "/p/b"}, {"sub", "/p/b/sub"}, {"../up", "/p/up"}, {"/abs/dir/", "/abs/dir"},
	} {
		if got := buildDir("/p/b/manifest.json", tt.recorded); got != tt.dir {
			t.Errorf("buildDir(%q) = %s, want %s", tt.recorded, got, tt.dir)
		}
	}
}

// A program moved after morloc built it says where its build directory was
// recorded; one in place is fine.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	inPlace := filepath.Join(dir, "nexus")
	write(t, inPlace, v1Launcher(strings.Replace(v1Base, `"build_dir":"/b"`, `"build_dir":"`+dir+`"`, 1)))
	m, err := Load(inPlace)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckDir(); err != nil {
		t.Errorf("in place: %v", err)
	}
	moved := filepath.Join(dir, "moved")
	write(t, moved, v1Launcher(strings.Replace(v1Base, `"build_dir":"/b"`, `"build_dir":"`+dir+`/gone"`, 1)))
	if m, err = Load(moved); err != nil {
		t.Fatal(err)
	}
	err = m.CheckDir()
	if err == nil || !strings.Contains(err.Error(), "the build directory "+dir+"/gone that "+moved+" records") ||
		!strings.Contains(err.Error(), "run `morloc make` again") {
		t.Errorf("moved: %v", err)
	}
}
