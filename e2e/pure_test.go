package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// testdata/pure holds one pure command for each command of the golden
// fixtures (docs/spec.md §7.6: internal/eval/testdata/golden/caseNN.json),
// written by testdata/pure/gen.py. These tests call every one over MCP on
// stdio, over HTTP (the plain /call API and MCP) and on the CLI, and compare
// nexus's answer with morloc's expected output byte for byte. The program
// has no pools: nexus must start no process for it.

// pureCase is one command of a fixture.
type pureCase struct {
	Case        int                       `json:"-"`
	Test        string                    `json:"-"`
	Name        string                    `json:"name"` // in the fixture
	Args        []struct{ Schema string } `json:"args"`
	Return      string                    `json:"return"`
	Expr        json.RawMessage           `json:"expr"`
	Call        []json.RawMessage         `json:"call"` // one value per argument; "<tmpdir>" in strings
	Expect      *string                   `json:"expect"`
	ExpectError string                    `json:"expect_error"`
	ErrorKind   string                    `json:"error_kind"` // "thrown" or "unsupported"
	Refusal     string                    `json:"refusal"`    // why nexus leaves the command off its surface
	Files       map[string]string         `json:"files"`      // files, relative to the program, a call writes

	prog string // its name in testdata/pure
}

// pureCases reads the fixtures and names each command as gen.py does: a
// name two cases share gets its case number.
func pureCases(t *testing.T) []*pureCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal", "eval", "testdata", "golden", "case*.json"))
	if err != nil || len(files) != 25 {
		t.Fatalf("want the 25 golden fixtures (docs/spec.md §7.6), found %d (%v)", len(files), err)
	}
	sort.Strings(files)
	var cases []*pureCase
	count := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx struct {
			Case     int         `json:"case"`
			Test     string      `json:"test"`
			Scope    string      `json:"scope"`
			Commands []*pureCase `json:"commands"`
		}
		if err := json.Unmarshal(data, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if fx.Scope != "in" {
			t.Fatalf("%s: scope %q: every case is in scope", f, fx.Scope)
		}
		for _, c := range fx.Commands {
			c.Case, c.Test = fx.Case, fx.Test
			count[c.Name]++
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		c.prog = c.Name
		if count[c.Name] > 1 {
			c.prog = c.Name + strconv.Itoa(c.Case)
		}
		if c.Expect == nil && c.ExpectError == "" {
			t.Fatalf("case %d %s: neither expect nor expect_error", c.Case, c.Name)
		}
	}
	return cases
}

func (c *pureCase) String() string { return fmt.Sprintf("case %d %s", c.Case, c.prog) }

// served reports whether nexus serves the command: those that need
// morloc's binary formats are refused.
func (c *pureCase) served() bool { return c.Refusal == "" }

// values gives the call's arguments as raw JSON, "<tmpdir>" replaced by dir.
func (c *pureCase) values(t *testing.T, dir string) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(c.Call))
	for i, v := range c.Call {
		var s string
		if json.Unmarshal(v, &s) == nil && strings.Contains(s, "<tmpdir>") {
			b, err := json.Marshal(strings.ReplaceAll(s, "<tmpdir>", dir))
			if err != nil {
				t.Fatal(err)
			}
			v = b
		}
		var compact bytes.Buffer // the fixtures are indented
		if err := json.Compact(&compact, v); err != nil {
			t.Fatalf("%s: argument %d: %v", c, i+1, err)
		}
		out[i] = compact.Bytes()
	}
	return out
}

// toolArgs is the MCP arguments object: the values as _1, _2, ..., with
// their exact JSON text.
func toolArgs(values []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"_%d":%s`, i+1, v)
	}
	b.WriteByte('}')
	return b.String()
}

// cliArgs are the values as CLI words: a string as its text, any other
// value as its JSON text.
func cliArgs(values []json.RawMessage) []string {
	out := make([]string, len(values))
	for i, v := range values {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[i] = s
		} else {
			out[i] = string(v)
		}
	}
	return out
}

// pureProgram copies testdata/pure into a new temporary directory and
// returns it: test25 writes obs-saved.txt beside the manifest (nexus
// resolves a relative @save path against the program's directory), which
// must not land in the source tree, and each transport checks its own.
func pureProgram(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(program("pure"), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pure")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkFiles checks the files a call wrote into the program's directory,
// then removes them, so that the next transport must write them anew.
func checkFiles(t *testing.T, how string, c *pureCase, dir string) {
	t.Helper()
	for name, want := range c.Files {
		p := filepath.Join(dir, name)
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s %s: %s holds %q (%v), want %q", how, c, name, got, err, want)
		}
		os.Remove(p)
	}
}

// noPools fails when nexus (pid) runs any process but its reaper.
func noPools(t *testing.T, pid int) {
	t.Helper()
	for p, cmdline := range descendants(pid) {
		if !strings.HasPrefix(cmdline, "nexus-reaper") {
			t.Errorf("nexus started process %d (%s) for a program of pure commands", p, cmdline)
		}
	}
}

// The program is the fixtures, unchanged: gen.py was run after the
// fixtures last changed.
func TestPureProgramMatchesFixtures(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(program("pure"), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Pools    []json.RawMessage `json:"pools"`
		Commands []struct {
			Name   string          `json:"name"`
			Type   string          `json:"type"`
			Mid    *int            `json:"mid"`
			Pool   *int            `json:"pool"`
			Needed json.RawMessage `json:"needed_pools"`
			Args   []struct {
				Kind   string `json:"kind"`
				Schema string `json:"schema"`
				Quoted bool   `json:"quoted"`
			} `json:"args"`
			Return struct {
				Schema string `json:"schema"`
			} `json:"return"`
			Expr json.RawMessage `json:"expr"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Pools) != 0 {
		t.Errorf("testdata/pure has %d pools, want none", len(m.Pools))
	}
	cases := pureCases(t)
	if len(m.Commands) != len(cases) {
		t.Fatalf("testdata/pure has %d commands, the fixtures %d: run python3 testdata/pure/gen.py", len(m.Commands), len(cases))
	}
	stale := false
	for i, c := range cases {
		mc := m.Commands[i]
		switch {
		case mc.Name != c.prog:
			t.Errorf("command %d is %s, want %s (%s)", i, mc.Name, c.prog, c)
			stale = true
			continue
		case mc.Type != "pure" || mc.Mid != nil || mc.Pool != nil || mc.Needed != nil:
			t.Errorf("%s: type %q, mid %v, pool %v, needed_pools %s: want a pure command without them", c, mc.Type, mc.Mid, mc.Pool, mc.Needed)
		}
		if !sameJSON(mc.Expr, c.Expr) || mc.Return.Schema != c.Return || len(mc.Args) != len(c.Args) {
			t.Errorf("%s: expr, return or arguments differ from the fixture's", c)
			stale = true
			continue
		}
		for k, a := range mc.Args {
			if a.Kind != "pos" || a.Schema != c.Args[k].Schema || a.Quoted != (a.Schema == "s") {
				t.Errorf("%s: argument %d is %+v, want a positional of schema %s, quoted when a Str", c, k+1, a, c.Args[k].Schema)
				stale = true
			}
		}
	}
	if stale {
		t.Log("testdata/pure/manifest.json differs from the fixtures: run python3 testdata/pure/gen.py")
	}
}

// Over MCP on stdio: the tool list is every served command in manifest
// order, each call gives morloc's answer (a thrown error as isError with
// the bare message), and no process is started.
func TestPureCommandsMCP(t *testing.T) {
	cases := pureCases(t)
	dir := pureProgram(t)
	s := startServer(t, dir)
	s.handshake()

	var want []string
	for _, c := range cases {
		if c.served() {
			want = append(want, c.prog)
		}
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	r := s.request(1, "tools/list", nil)
	b, _ := json.Marshal(r["result"])
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("tools/list: %v", r)
	}
	var got []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tools/list:\n got %v\nwant %v", got, want)
	}
	for _, c := range cases {
		if !c.served() && !strings.Contains(s.stderr.String(), "excluding command '"+c.prog+"' from the tool surface (uses "+c.Refusal) {
			t.Errorf("no stderr note naming %s for %s:\n%s", c.Refusal, c, s.stderr.String())
		}
	}

	files := t.TempDir()
	id := 1
	for _, c := range cases {
		id++
		args := toolArgs(c.values(t, files))
		if !c.served() {
			r := s.request(id, "tools/call", map[string]any{"name": c.prog, "arguments": json.RawMessage(args)})
			if errCode(r) != -32602 || !strings.Contains(errMessage(r), c.prog) {
				t.Errorf("%s (refused): %v, want the unknown-tool error -32602", c, r)
			}
			continue
		}
		res := s.callRaw(id, c.prog, args)
		switch {
		case c.ExpectError != "":
			if !res.isError || res.text != c.ExpectError {
				t.Errorf("%s: %q (isError %v), want isError with %q", c, res.text, res.isError, c.ExpectError)
			}
		case res.isError || res.text != *c.Expect:
			t.Errorf("%s %s:\n got %q (isError %v)\nwant %q", c, args, res.text, res.isError, *c.Expect)
		case strings.HasPrefix(c.Return, "m") && string(res.structuredContent) != *c.Expect:
			t.Errorf("%s: structuredContent %s, want %s", c, res.structuredContent, *c.Expect)
		case !strings.HasPrefix(c.Return, "m") && res.structuredContent != nil:
			t.Errorf("%s: structuredContent %s for a result that is not a record", c, res.structuredContent)
		}
		checkFiles(t, "MCP", c, dir)
	}
	noPools(t, s.cmd.Process.Pid)
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// apiCall posts the positional values to /call/pure/<command>.
func (s *httpServer) apiCall(command string, values []json.RawMessage) (status int, result json.RawMessage, message string) {
	s.t.Helper()
	body, _ := json.Marshal(values)
	if values == nil {
		body = []byte("[]")
	}
	status, result, message, _ = s.callAPI("pure", command, string(body))
	return status, result, message
}

// statelessCall is an MCP tools/call of protocol 2026-07-28, without a
// session; it returns the result's text and isError.
func (s *httpServer) statelessCall(id int, name, args string) (string, bool) {
	s.t.Helper()
	resp, text := s.rpc(statelessCallBody(id, name, args, ""), statelessHeaders(name)...)
	if resp.StatusCode != 200 {
		s.t.Fatalf("stateless tools/call %s: %d %s", name, resp.StatusCode, text)
	}
	return toolText(s.t, decode(s.t, text))
}

// Over HTTP: every command through the plain API, and some through MCP
// (stateless); an evaluation error is a 500 with the bare message.
func TestPureCommandsHTTP(t *testing.T) {
	cases := pureCases(t)
	dir := pureProgram(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", dir)
	files := t.TempDir()
	for _, c := range cases {
		status, result, msg := srv.apiCall(c.prog, c.values(t, files))
		switch {
		case !c.served():
			if status != 404 || !strings.Contains(msg, c.Refusal) {
				t.Errorf("%s (refused): %d %q, want 404 naming %s", c, status, msg, c.Refusal)
			}
		case c.ExpectError != "":
			if status != 500 || msg != c.ExpectError {
				t.Errorf("%s: %d %q, want 500 with %q", c, status, msg, c.ExpectError)
			}
		case status != 200 || string(result) != *c.Expect:
			t.Errorf("%s:\n got %d %s %q\nwant 200 %s", c, status, result, msg, *c.Expect)
		}
		checkFiles(t, "/call", c, dir)
	}

	mcpFiles := t.TempDir()
	some := map[string]bool{"letWithArg": true, "combo": true, "test13": true, "throwInt": true,
		"jsonTup": true, "showRecord": true, "unitTop": true, "test25": true}
	id := 0
	for _, c := range cases {
		if !some[c.prog] {
			continue
		}
		delete(some, c.prog)
		id++
		text, isErr := srv.statelessCall(id, c.prog, toolArgs(c.values(t, mcpFiles)))
		want := c.ExpectError
		if c.Expect != nil {
			want = *c.Expect
		}
		if text != want || isErr != (c.ExpectError != "") {
			t.Errorf("MCP %s: %q (isError %v), want %q", c, text, isErr, want)
		}
		checkFiles(t, "MCP over HTTP", c, dir)
	}
	if len(some) > 0 {
		t.Errorf("no such commands: %v", some)
	}
	noPools(t, srv.cmd.Process.Pid)
}

// On the CLI: `nexus run <program> <command> <args>`, stdout is the
// answer and a newline; a thrown error exits 1 with morloc's words.
//
// As morloc's CLI, nexus prints nothing for a top-level null (case 23's
// unitTop and optNone) unless --keep-null is given.
func TestPureCommandsCLI(t *testing.T) {
	cases := pureCases(t)
	dir := pureProgram(t)
	files := t.TempDir()
	type run struct {
		argv        []string
		out, errOut string
		code        int
		err         error
	}
	runs := make([]run, len(cases))
	for i, c := range cases {
		runs[i].argv = append([]string{"run", dir, c.prog}, cliArgs(c.values(t, files))...)
	}
	// Eight at a time: the runs are independent processes.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func(r *run) {
			defer func() { <-sem; wg.Done() }()
			cmd := exec.Command(nexusBin, r.argv...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.code = ee.ExitCode()
			} else {
				r.err = err
			}
			r.out, r.errOut = o.String(), e.String()
		}(&runs[i])
	}
	wg.Wait()
	for i, c := range cases {
		out, errOut, code := runs[i].out, runs[i].errOut, runs[i].code
		switch {
		case runs[i].err != nil:
			t.Errorf("%s: %v", c, runs[i].err)
		case !c.served():
			if code != 1 || out != "" || !strings.Contains(errOut, "pure command '"+c.prog+"' uses "+c.Refusal) {
				t.Errorf("%s (refused): exit %d, stdout %q, stderr %q; want 1 and a message naming %s", c, code, out, errOut, c.Refusal)
			}
		case c.ExpectError != "":
			if code != 1 || out != "" || errOut != "Error: evaluation failed: "+c.ExpectError+"\n" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and Error: evaluation failed: %s", c, code, out, errOut, c.ExpectError)
			}
		case code != 0 || out != cliExpect(*c.Expect):
			t.Errorf("%s %q:\n got %q (exit %d, stderr %q)\nwant %q", c, runs[i].argv[3:], out, code, errOut, cliExpect(*c.Expect))
		}
		// Case 23 as morloc prints it: nothing, and null with --keep-null
		// (given before the command, as morloc takes it).
		if c.prog == "unitTop" || c.prog == "optNone" {
			if out != "" || code != 0 {
				t.Errorf("run %s: %q (exit %d), want nothing", c.prog, out, code)
			}
			kept, errOut, code := runNexus(t, append([]string{"run", dir, "--keep-null", c.prog}, runs[i].argv[3:]...)...)
			if kept != "null\n" || code != 0 {
				t.Errorf("run --keep-null %s: %q (exit %d, stderr %q), want null", c.prog, kept, code, errOut)
			}
		}
		checkFiles(t, "CLI", c, dir)
	}
}

// cliExpect is what the CLI prints for a result: its JSON and a newline,
// or nothing for a top-level null (dispatch.rs print_result_c).
func cliExpect(result string) string {
	if result == "null" {
		return ""
	}
	return result + "\n"
}

// A pure command beside Python pools (testdata/shapes' pureAnswer).
func TestShapesPureAnswer(t *testing.T) {
	testenv.NeedPython(t)
	s := startServer(t, program("shapes"))
	s.handshake()
	if res := s.callRaw(1, "pureAnswer", `{}`); res.isError || res.text != "42" {
		t.Errorf("MCP pureAnswer: %q (isError %v), want 42", res.text, res.isError)
	}
	// A remote command still answers beside it.
	if res := s.callRaw(2, "addInt", `{"_1":41}`); res.isError || res.text != "42" {
		t.Errorf("MCP addInt 41: %q (isError %v), want 42", res.text, res.isError)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
	if out, errOut, code := runNexus(t, "run", program("shapes"), "pureAnswer"); out != "42\n" || code != 0 {
		t.Errorf("run shapes pureAnswer: %q (exit %d, stderr %q), want 42", out, code, errOut)
	}
}

// A malformed expr breaks only its own command: loading leaves it off the
// tool surface with a note naming the JSON path of the fault, and its CLI
// run fails clearly while the good command works. A command that writes a
// stream file is served, also in morloc 0.90's form (the element's schema on
// open_ostream, docs/spec.md §7.7).
func TestPureBadExprBreaksOnlyItsCommand(t *testing.T) {
	dir := t.TempDir()
	const manifest = `{"name":"badexpr","build":{"path":".","time":1755350000,"morloc_version":"0.98.2","build_params":""},
 "pools":[],
 "commands":[
  {"name":"good","type":"pure","desc":["The answer"],"args":[],
   "return":{"schema":"j","type":"Int","desc":[],"constraints":[],"metadata":{}},
   "expr":{"tag":"lit","schema":"j","lit_type":"j","value":"42"},
   "constraints":[],"internal":false,"terminals":[],"metadata":{},"group":null},
  {"name":"badTag","type":"pure","desc":["An expression with an unknown tag"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":null,"metavar":null,"quoted":false,"many":false,"stdin":false,"desc":[],"constraints":[],"metadata":{},"source":"inline","form":"auto","checks":[]}],
   "return":{"schema":"j","type":"Int","desc":[],"constraints":[],"metadata":{}},
   "expr":{"tag":"lambda","vars":["x@0"],"body":{"tag":"app","schema":"j",
     "func":{"tag":"lambda","vars":["y@1"],"body":{"tag":"bound","schema":"j","var":"y@1"}},
     "args":[{"tag":"frobnicate","schema":"j","child":{"tag":"bound","schema":"j","var":"x@0"}}]}},
   "constraints":[],"internal":false,"terminals":[],"metadata":{},"group":null},
  {"name":"writeStream","type":"pure","desc":["Opens an output stream"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":null,"metavar":null,"quoted":true,"many":false,"stdin":false,"desc":[],"constraints":[],"metadata":{},"source":"inline","form":"auto","checks":[]}],
   "return":{"schema":"z","type":"()","desc":[],"constraints":[],"metadata":{}},
   "expr":{"tag":"lambda","vars":["path@0"],"body":{"tag":"app","schema":"z",
     "func":{"tag":"lambda","vars":["o@1"],"body":{"tag":"close","handle":{"tag":"bound","schema":"O","var":"o@1"}}},
     "args":[{"tag":"open_ostream","schema":"j","path":{"tag":"bound","schema":"s","var":"path@0"}}]}},
   "constraints":[],"internal":false,"terminals":[],"metadata":{},"group":null}],
 "groups":[],"desc":[],"epilogues":[],"unsafe_skip_null_check":false,"inline_size":null,
 "no_shm":false,"tmpdir":null,"run_log":null,"capabilities":["log"],"metadata":{}}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	checkNotes := func(how, stderr string) {
		t.Helper()
		for _, want := range []struct{ name, part string }{
			{"badTag", `expr.body.args[0]: unknown tag "frobnicate"`},
		} {
			found := false
			for _, line := range strings.Split(stderr, "\n") {
				if strings.Contains(line, "excluding command '"+want.name+"'") && strings.Contains(line, want.part) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no stderr note excluding %s with %q:\n%s", how, want.name, want.part, stderr)
			}
		}
		if strings.Contains(stderr, "'good'") || strings.Contains(stderr, "'writeStream'") {
			t.Errorf("%s: a note names a good command:\n%s", how, stderr)
		}
	}

	out, errOut, code := runNexus(t, "run", dir, "--mcp-tools")
	var payload struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &payload) != nil || len(payload.Tools) != 2 || payload.Tools[0].Name != "good" || payload.Tools[1].Name != "writeStream" {
		t.Errorf("--mcp-tools: exit %d, %s; want exactly the tools good and writeStream", code, out)
	}
	checkNotes("--mcp-tools", errOut)

	s := startServer(t, dir)
	s.handshake()
	r := s.request(1, "tools/list", nil)
	b, _ := json.Marshal(r["result"])
	if err := json.Unmarshal(b, &payload); err != nil || len(payload.Tools) != 2 || payload.Tools[0].Name != "good" || payload.Tools[1].Name != "writeStream" {
		t.Errorf("tools/list: %s; want exactly the tools good and writeStream", b)
	}
	if res := s.callRaw(2, "good", `{}`); res.isError || res.text != "42" {
		t.Errorf("good: %q (isError %v), want 42", res.text, res.isError)
	}
	if r := s.request(3, "tools/call", map[string]any{"name": "badTag", "arguments": map[string]any{"_1": 1}}); errCode(r) != -32602 {
		t.Errorf("tools/call badTag: %v, want the unknown-tool error", r)
	}
	toolStream := filepath.Join(dir, "tool.stream")
	r = s.request(4, "tools/call", map[string]any{"name": "writeStream", "arguments": map[string]any{"_1": toolStream}})
	if res, _ := r["result"].(map[string]any); res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), "file://"+toolStream) {
		t.Errorf("writeStream: %v, want the file named", r)
	}
	noPools(t, s.cmd.Process.Pid)
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
	checkNotes("nexus mcp", s.stderr.String())

	if out, errOut, code := runNexus(t, "run", dir, "good"); out != "42\n" || code != 0 {
		t.Errorf("run good: %q (exit %d, stderr %q), want 42", out, code, errOut)
	}
	out, errOut, code = runNexus(t, "run", dir, "badTag", "1")
	if code != 1 || out != "" || !strings.Contains(errOut, "failed to build expression") || !strings.Contains(errOut, `expr.body.args[0]: unknown tag "frobnicate"`) {
		t.Errorf("run badTag: exit %d, stdout %q, stderr %q; want 1 and the fault's JSON path", code, out, errOut)
	}
	stream := filepath.Join(dir, "out.stream")
	out, errOut, code = runNexus(t, "run", dir, "writeStream", stream)
	if code != 0 {
		t.Errorf("run writeStream: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	checkStream(t, stream, "aj", nil)
	checkStream(t, toolStream, "aj", nil)
}
