package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runNexus runs nexus with args, in this directory and environment.
func runNexus(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return nexusIn(t, "", nil, args...)
}

func TestCLIRun(t *testing.T) {
	out, errOut, code := runNexus(t, "run", program("combat"), "fighterDamage", "15")
	if code != 0 || out != "12\n" {
		t.Errorf("run fighterDamage 15: stdout %q code %d stderr %s; want 12", out, code, errOut)
	}
	out, _, code = runNexus(t, "run", program("shapes"), "chatty")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("run chatty: stdout %q (code %d), want only the JSON result", out, code)
	}
	_, errOut, code = runNexus(t, "run", program("combat"), "fighterDamage", "fifteen")
	if code == 0 || !strings.Contains(errOut, "fighterDamage") {
		t.Errorf("bad CLI argument: code %d stderr %q, want a failure naming the command", code, errOut)
	}
	_, errOut, code = runNexus(t, "run", program("shapes"), "fail", "x")
	if code != 1 || !strings.Contains(errOut, "boom") {
		t.Errorf("raising function: code %d stderr %q, want 1 and the message", code, errOut)
	}
	out, _, code = runNexus(t, "run", program("combat"), "--help")
	if code != 0 || !strings.Contains(out, "fighterDamage") || !strings.Contains(out, "Damage calculation for a fighter") {
		t.Errorf("--help: %q", out)
	}
	out, _, code = runNexus(t, "run", program("combat"), "fighterDamage", "--help")
	if code != 0 || !strings.Contains(out, "Enemy Armor Class") {
		t.Errorf("fighterDamage --help: %q", out)
	}
}

func TestCLIMissingProgram(t *testing.T) {
	for _, args := range [][]string{
		{"mcp"},
		{"mcp", "/no/such/program"},
		{"run", "/no/such/program", "--mcp-tools"},
	} {
		_, errOut, code := runNexus(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !(strings.Contains(errOut, "missing program") || strings.Contains(errOut, "program not found: /no/such/program")) {
			t.Errorf("nexus %v: code %d stderr %q; want exit 2 and one line naming what was looked for", args, code, errOut)
		}
	}
}

func TestMCPToolsAndConfig(t *testing.T) {
	out, errOut, code := runNexus(t, "run", program("shapes"), "--mcp-tools")
	if code != 0 {
		t.Fatalf("--mcp-tools: code %d: %s", code, errOut)
	}
	var payload struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &payload); err != nil || len(payload.Tools) == 0 {
		t.Fatalf("--mcp-tools is not a tools payload: %v", err)
	}
	if !strings.HasPrefix(out, "{\n  \"tools\": [\n    {\n") {
		t.Errorf("--mcp-tools is not indented by two spaces: %.80q", out)
	}
	for _, excluded := range []string{"readStdin", "tableSum", "openFile"} {
		if strings.Contains(out, `"`+excluded+`"`) {
			t.Errorf("%s should be excluded", excluded)
		}
		if !strings.Contains(errOut, "excluding command '"+excluded+"'") {
			t.Errorf("no stderr note for %s: %s", excluded, errOut)
		}
	}
	// A pure command is a tool like any other (docs/spec.md §7).
	if !strings.Contains(out, `"name": "pureAnswer"`) || strings.Contains(errOut, "'pureAnswer'") {
		t.Errorf("pureAnswer should be a tool, with no exclusion note: %s", errOut)
	}
}

type configEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func mcpConfigEntry(t *testing.T, out string) configEntry {
	t.Helper()
	var cfg struct {
		McpServers map[string]configEntry `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || len(cfg.McpServers) != 1 {
		t.Fatalf("--mcp-config: %v: %q", err, out)
	}
	entry, ok := cfg.McpServers["combat"]
	if !ok {
		t.Fatalf("--mcp-config names no server combat: %q", out)
	}
	return entry
}

// --mcp-config (docs/spec.md §3) carries the environment the pools need: a
// client starts servers with a minimal PATH, which would find the system
// python3 rather than the user's conda or pyenv one. Started as a client
// would, with nothing but the config's env, the server answers.
func TestMCPConfigCarriesEnvironment(t *testing.T) {
	path := filepath.Dir(nexusBin) + ":" + os.Getenv("PATH")
	cmd := exec.Command(nexusBin, "run", program("combat"), "--mcp-config")
	cmd.Env = []string{"PATH=" + path, "CONDA_PREFIX=/opt/conda", "VIRTUAL_ENV=", "HOME=/nowhere", "R_LIBS_USER=/home/u/R"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--mcp-config: %v: %s", err, stderr.String())
	}
	entry := mcpConfigEntry(t, string(out))
	wantManifest := filepath.Join(program("combat"), "manifest.json")
	if !filepath.IsAbs(entry.Command) || len(entry.Args) != 2 || entry.Args[0] != "mcp" || entry.Args[1] != wantManifest {
		t.Errorf("--mcp-config entry %+v, want absolute nexus and [mcp %s]", entry, wantManifest)
	}
	wantEnv := map[string]string{"PATH": path, "CONDA_PREFIX": "/opt/conda", "R_LIBS_USER": "/home/u/R"}
	if len(entry.Env) != len(wantEnv) {
		t.Errorf("env %v, want %v (set, non-empty PATH, PYTHONPATH, R_LIBS, R_LIBS_USER, CONDA_PREFIX, VIRTUAL_ENV)", entry.Env, wantEnv)
	}
	for k, v := range wantEnv {
		if entry.Env[k] != v {
			t.Errorf("env[%s] = %q, want %q", k, entry.Env[k], v)
		}
	}

	// As Claude Desktop starts it: the command, its args, and only env.
	client := exec.Command(entry.Command, entry.Args...)
	for k, v := range entry.Env {
		client.Env = append(client.Env, k+"="+v)
	}
	client.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fighterDamage","arguments":{"_1":15}}}
`)
	client.Stderr = &stderr
	reply, err := client.Output()
	if err != nil || !strings.Contains(string(reply), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"12"}],"isError":false}}`) {
		t.Errorf("started from its config, the server said %s (%v); stderr:\n%s", reply, err, stderr.String())
	}

	// --wsl: Claude Desktop on Windows starts wsl.exe; the variables go
	// through env(1), since the client's env would stop at wsl.exe.
	wslOut, errOut, code := runNexus(t, "run", program("combat"), "--mcp-config", "--wsl")
	if code != 0 {
		t.Fatalf("--mcp-config --wsl: code %d: %s", code, errOut)
	}
	wsl := mcpConfigEntry(t, wslOut)
	if wsl.Command != "wsl.exe" || len(wsl.Args) < 5 || wsl.Args[0] != "-e" || wsl.Args[1] != "env" ||
		!strings.HasPrefix(wsl.Args[2], "PATH=") || !slices.Equal(wsl.Args[len(wsl.Args)-3:], []string{entry.Command, "mcp", wantManifest}) || wsl.Env != nil {
		t.Errorf("--mcp-config --wsl: %+v, want wsl.exe -e env PATH=... %s mcp %s", wsl, entry.Command, wantManifest)
	}
	if _, errOut, code := runNexus(t, "run", program("combat"), "--mcp-config", "--mac"); code != 2 || !strings.Contains(errOut, `unknown option "--mac"`) {
		t.Errorf("--mcp-config --mac: code %d, stderr %q; want a usage error", code, errOut)
	}
}

// writeLauncher writes `nexus launcher`'s script for target, named name,
// into a directory of its own, and returns its path.
func writeLauncher(t *testing.T, target, name string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), name)
	if _, errOut, code := runNexus(t, "launcher", target, "-o", script); code != 0 {
		t.Fatalf("nexus launcher: exit %d: %s", code, errOut)
	}
	return script
}

// `nexus launcher` writes a script so that ./prog works as a program morloc
// compiled does.
func TestLauncher(t *testing.T) {
	prog := writeLauncher(t, program("combat"), "combat")
	run := func(args ...string) (string, int) {
		cmd := exec.Command(prog, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("fighterDamage", "15"); code != 0 || out != "12\n" {
		t.Errorf("./combat fighterDamage 15 = %q (code %d), want 12", out, code)
	}
	if out, code := run("--mcp-tools"); code != 0 || !strings.Contains(out, `"fighterDamage"`) {
		t.Errorf("./combat --mcp-tools = %q", out)
	}
	if out, code := run("--mcp-config"); code != 0 || !strings.Contains(out, filepath.Join(program("combat"), "manifest.json")) {
		t.Errorf("./combat --mcp-config = %q", out)
	}
	// The launcher is itself a valid TARGET.
	s := startServer(t, prog)
	s.handshake()
	if text, isErr := toolText(t, s.request(1, "tools/call", map[string]any{"name": "fighterDamage", "arguments": map[string]any{"_1": 15}})); isErr || text != "12" {
		t.Errorf("mcp via launcher: %q", text)
	}
}

// --once runs one method and exits (docs/spec.md §3), a debugging aid.
func TestOnce(t *testing.T) {
	out, errOut, code := runNexus(t, "mcp", program("combat"), "--once", "tools/list")
	if code != 0 || !strings.Contains(out, `"fighterDamage"`) {
		t.Fatalf("--once tools/list: code %d out %q err %s", code, out, errOut)
	}
	out, _, code = runNexus(t, "mcp", program("combat"), "--once", "tools/call", "--params", `{"name":"fighterDamage","arguments":{"_1":15}}`)
	if code != 0 || !strings.Contains(out, `"text": "12"`) {
		t.Errorf("--once tools/call: %q", out)
	}
}

// The binary's --mcp-tools for the json-help program is byte-identical to
// morloc's own golden output, 7 tools, the pure addOne and maybeDouble among
// them. The golden file is argmap's copy of morloc's, kept unchanged in the
// repository (internal/argmap/testdata/README.md): a test reads nothing
// outside it.
func TestMCPToolsMatchesMorlocGolden(t *testing.T) {
	out, errOut, code := runNexus(t, "run", program("json-help"), "--mcp-tools")
	if code != 0 {
		t.Fatalf("--mcp-tools: %s", errOut)
	}
	if strings.Contains(errOut, "excluding") {
		t.Errorf("a json-help command was left off the tool surface: %s", errOut)
	}
	golden := filepath.Join(repoRoot, "internal", "argmap", "testdata", "json-help.tools.golden.json")
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimRight(out, "\n") != strings.TrimRight(string(want), "\n") {
		t.Errorf("--mcp-tools differs from %s:\n%s", golden, out)
	}
}

// Output projections: `--upper` runs the terminal's internal entry command;
// CLI runs print no tool-surface notes.
func TestCLITerminals(t *testing.T) {
	out, errOut, code := runNexus(t, "run", program("shapes"), "renderLines", "a\nb")
	if code != 0 || out != "[\"a\",\"b\"]\n" || strings.Contains(errOut, "excluding") {
		t.Errorf("renderLines: %q %q (code %d)", out, errOut, code)
	}
	out, _, code = runNexus(t, "run", program("shapes"), "renderLines", "--upper", "a\nb")
	if code != 0 || out != "\"A\\nB\"\n" {
		t.Errorf("renderLines --upper: %q (code %d)", out, code)
	}
	out, _, code = runNexus(t, "run", program("shapes"), "renderLines", "--count", "a\nb")
	if code != 0 || out != "2\n" {
		t.Errorf("renderLines --count: %q (code %d)", out, code)
	}
}

// nexus's own flags go before TARGET in either place; the program's own
// options go after CMD. `nexus run` has no timeout unless one is given.
func TestCLIGlobalFlags(t *testing.T) {
	_, errOut, code := runNexus(t, "run", "--timeout", "200ms", program("shapes"), "sleepMs", "3000")
	if code != 1 || !strings.Contains(errOut, "call to 'sleepMs' timed out after 200ms") {
		t.Errorf("run --timeout 200ms: code %d stderr %q, want the timeout message", code, errOut)
	}
	out, errOut, code := runNexus(t, "--log-level", "debug", "run", program("combat"), "fighterDamage", "15")
	if code != 0 || out != "12\n" || !strings.Contains(errOut, "level=DEBUG") {
		t.Errorf("nexus --log-level debug run: code %d out %q, want 12 and debug logs", code, out)
	}
	_, errOut, code = runNexus(t, "run", "--bogus", "1", program("combat"), "fighterDamage", "15")
	if code != 2 || !strings.Contains(errOut, "unknown nexus flag --bogus") {
		t.Errorf("run --bogus: code %d stderr %q, want exit 2 naming the flag", code, errOut)
	}
	out, _, code = runNexus(t, "run", program("shapes"), "sleepMs", "300")
	if code != 0 || out != "300\n" {
		t.Errorf("run without --timeout: %q (code %d)", out, code)
	}
}

// --mcp-resources and --mcp-prompts print what resources/list (with the
// templates) and prompts/list would, every entry, as --mcp-tools does the
// tools, and start no pool; a command that is no tool ("tool": false) is
// left off --mcp-tools.
func TestMCPResourcesAndPrompts(t *testing.T) {
	out, errOut, code := runNexus(t, "run", program("plots"), "--mcp-resources")
	if code != 0 {
		t.Fatalf("--mcp-resources: code %d: %s", code, errOut)
	}
	var res struct {
		Resources []struct{ URI, Name, MimeType string } `json:"resources"`
		Templates []struct{ URITemplate string }         `json:"resourceTemplates"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(out, "{\n  \"resources\": [\n    {\n") {
		t.Fatalf("--mcp-resources is not an indented resources payload (%v): %.120q", err, out)
	}
	if len(res.Resources) != 2 || res.Resources[1].URI != "figures://example" || res.Resources[1].MimeType != "image/png" {
		t.Errorf("resources: %+v", res.Resources)
	}
	var tmpls []string
	for _, tm := range res.Templates {
		tmpls = append(tmpls, tm.URITemplate)
	}
	if strings.Join(tmpls, " ") != "samples://{sample} stats://{sample}/summary binom://{n}/{k}" {
		t.Errorf("templates: %v", tmpls)
	}
	out, errOut, code = runNexus(t, "run", program("plots"), "--mcp-prompts")
	if code != 0 || !strings.Contains(out, `"name": "plot_sample"`) || !strings.Contains(out, `"name": "explain_figure"`) {
		t.Errorf("--mcp-prompts: code %d: %s%s", code, out, errOut)
	}
	out, _, _ = runNexus(t, "run", program("plots"), "--mcp-tools")
	if !strings.Contains(out, `"name": "plot_values"`) || strings.Contains(out, `"name": "sample_names"`) {
		t.Errorf("--mcp-tools lists the completer, which is no tool, or lacks plot_values:\n%s", out)
	}
	// A program without any: empty lists.
	out, _, code = runNexus(t, "run", program("shapes"), "--mcp-prompts")
	if code != 0 || strings.TrimSpace(out) != "{\n  \"prompts\": []\n}" {
		t.Errorf("shapes --mcp-prompts: %q", out)
	}
}
