package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The launcher scripts morloc wrote, from 0.69 on, are TARGETs like any
// other (docs/spec.md §3): internal/manifest/testdata/launchers holds them
// (its README says where each comes from), and argmap's golden files hold
// their tool surfaces.

func launcherFixture(parts ...string) string {
	return filepath.Join(append([]string{repoRoot, "internal", "manifest", "testdata", "launchers"}, parts...)...)
}

func launcherGolden(name string) string {
	return filepath.Join(repoRoot, "internal", "argmap", "testdata", "launchers", name+".tools.golden.json")
}

// `nexus run <launcher> --mcp-tools` prints the surface argmap pins, with no
// exclusion notes, for every era's launcher.
func TestMorlocLaunchersMCPTools(t *testing.T) {
	for _, tc := range []struct{ path, golden string }{
		{launcherFixture("v0.69-py", "nexus"), "v0.69-py_nexus"},
		{launcherFixture("v0.69-r", "nexus"), "v0.69-r_nexus"},
		{launcherFixture("v0.69-cpp", "nexus"), "v0.69-cpp_nexus"},
		{launcherFixture("v0.69-cross", "nexus"), "v0.69-cross_nexus"},
		{launcherFixture("morloc-repo", "v1-pool-crash-cpp"), "morloc-repo_v1-pool-crash-cpp"},
		{launcherFixture("written-v0.75-py", "nexus"), "written-v0.75-py_nexus"},
		{launcherFixture("morloc-repo", "v0.84.0-let-do-fusion"), "morloc-repo_v0.84.0-let-do-fusion"},
		{launcherFixture("morloc-repo", "v0.95.0-rust-error"), "morloc-repo_v0.95.0-rust-error"},
		{launcherFixture("written-v0.96-py", "nexus"), "written-v0.96-py_nexus"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runNexus(t, "run", tc.path, "--mcp-tools")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want, err := os.ReadFile(launcherGolden(tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("--mcp-tools differs from %s\n--- got\n%s", launcherGolden(tc.golden), out)
			}
			if strings.Contains(errOut, "excluding") {
				t.Errorf("exclusion notes: %s", errOut)
			}
		})
	}
}

// morlocProgramCopy copies a 0.69 fixture's launcher into a new directory
// with its build_dir pointing at a directory that does not exist, so that
// no pool can start on any machine: what is tested here needs none.
func morlocProgramCopy(t *testing.T, fixture string) string {
	t.Helper()
	data, err := os.ReadFile(launcherFixture(fixture, "nexus"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	from := `"build_dir":"/tmp/mf-build/` + strings.TrimPrefix(fixture, "v0.69-") + `"`
	if !bytes.Contains(data, []byte(from)) {
		t.Fatalf("%s has no %s", fixture, from)
	}
	data = bytes.Replace(data, []byte(from), []byte(`"build_dir":"`+filepath.Join(dir, "gone")+`"`), 1)
	path := filepath.Join(dir, "nexus")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Over MCP on stdio, a 0.69 launcher's tools are listed, its pure command
// runs in nexus, and an argument its types refuse (a 32-bit Int out of
// range, a wrong type) is invalid params, answered before any pool.
func TestMorlocLauncherMCP(t *testing.T) {
	s := startServer(t, morlocProgramCopy(t, "v0.69-py"))
	s.handshake()
	if got := strings.Join(s.toolNames(2), " "); got != "wordStats scale shout window maybeHalf configure pairUp" {
		t.Errorf("tools %s", got)
	}
	reply := s.request(3, "tools/call", map[string]any{"name": "pairUp", "arguments": map[string]any{"_1": "hi"}})
	if text, isErr := toolText(t, reply); isErr || text != `["hi","hi"]` {
		t.Errorf("pairUp: %q (isError %v), want [\"hi\",\"hi\"]", text, isErr)
	}
	for i, tc := range []struct{ tool, args, want string }{
		{"window", `{"_1":2147483648,"_2":1,"_3":[]}`, "argument '_1' of 'window': expected an integer from -2147483648 to 2147483647 (i4), got 2147483648"},
		{"window", `{"_1":0,"_2":1,"_3":[1,-2147483649]}`, "argument '_3[1]' of 'window': expected an integer from -2147483648 to 2147483647 (i4), got -2147483649"},
		{"configure", `{"config":{"dir":"/x","threads":1e10,"verbose":true}}`, "argument 'config.threads' of 'configure': expected an integer from -2147483648 to 2147483647 (i4), got 10000000000"},
		{"shout", `{"times":"two","_1":"a"}`, "argument 'times' of 'shout': expected integer, got string"},
	} {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, 10+i, tc.tool, tc.args))
		m := s.recv()
		if code := errCode(m); code != -32602 || !strings.Contains(errMessage(m), tc.want) {
			t.Errorf("%s %s: code %d %q, want -32602 saying %q", tc.tool, tc.args, code, errMessage(m), tc.want)
		}
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// `nexus serve <launcher>` serves a 0.69 program over HTTP, and `nexus
// launcher <launcher>` writes a script that runs it.
func TestMorlocLauncherServeAndLauncher(t *testing.T) {
	target := morlocProgramCopy(t, "v0.69-py")
	srv := startHTTP(t, nil, "serve", "--port", "0", target)
	resp, err := http.Post(srv.base+"/call/main/pairUp", "application/json", strings.NewReader(`["hi"]`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := strings.TrimSpace(string(body)); got != `{"status":"ok","result":["hi","hi"]}` {
		t.Errorf("POST /call/main/pairUp: %d %s", resp.StatusCode, got)
	}
	srv.stop()

	script := writeLauncher(t, target, "prog")
	out, err := exec.Command(script, "pairUp", "ho").Output()
	if err != nil || strings.TrimSpace(string(out)) != `["ho","ho"]` {
		t.Errorf("%s pairUp ho: %q %v", script, out, err)
	}
	out, err = exec.Command(script, "--mcp-tools").Output()
	want, _ := os.ReadFile(launcherGolden("v0.69-py_nexus"))
	if err != nil || string(out) != string(want) {
		t.Errorf("%s --mcp-tools: %v\n%s", script, err, out)
	}
}
