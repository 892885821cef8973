package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The delivery tests: nexus bundle's MCP Bundles, checked by the official
// toolchain (npm @anthropic-ai/mcpb, pinned in e2e/clients) and run as
// Claude Desktop runs them; nexus install for every client.

func clientsDir() string { return filepath.Join(repoRoot, "e2e", "clients") }

// clientTool is a CLI that scripts/install-deps.sh installs in e2e/clients.
func clientTool(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(clientsDir(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		testenv.MissingTool(t, name+" is not installed in e2e/clients: run scripts/install-deps.sh")
	}
	if _, err := exec.LookPath("node"); err != nil && name == "mcpb" {
		testenv.MissingTool(t, "node is not installed: mcpb cannot run")
	}
	return p
}

var (
	crossOnce sync.Once
	crossBin  string
	crossErr  error
)

// darwinNexus cross-builds nexus for darwin/arm64 (make test's cross step
// has it in the build cache), for multi-platform bundles.
func darwinNexus(t *testing.T) string {
	t.Helper()
	crossOnce.Do(func() {
		crossBin = filepath.Join(filepath.Dir(nexusBin), "nexus-darwin-arm64")
		cmd := exec.Command("go", "build", "-o", crossBin, "./cmd/nexus")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			crossErr = fmt.Errorf("cross-building nexus for darwin/arm64: %v\n%s", err, out)
		}
	})
	if crossErr != nil {
		t.Fatal(crossErr)
	}
	return crossBin
}

// bundleCombat writes a bundle of testdata/combat for this platform and
// darwin/arm64.
func bundleCombat(t *testing.T, out string) {
	t.Helper()
	args := []string{"bundle", program("combat"), "-o", out, "--author", "Nexus Tests <tests@example.org>", "--version", "1.0.0"}
	if runtime.GOOS+"/"+runtime.GOARCH != "darwin/arm64" {
		args = append(args, "--binary", "darwin/arm64="+darwinNexus(t))
	}
	if _, stderr, code := runNexus(t, args...); code != 0 {
		t.Fatalf("nexus bundle: exit %d\n%s", code, stderr)
	}
}

// unzipLikeMCPB unpacks a bundle as mcpb's unpackExtension (and so Claude
// Desktop) does: each file written, with the Unix mode its entry carries.
func unzipLikeMCPB(t *testing.T, bundle, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.Contains(f.Name, "..") || strings.HasSuffix(f.Name, "/") {
			t.Fatalf("entry %q: a bundle holds files only, inside it", f.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// The official toolchain takes nexus's bundle: mcpb validate accepts its
// manifest, mcpb info reads it, mcpb unpack unpacks it into the files and
// modes the bundle holds. Two bundles of the same program are the same
// bytes.
func TestBundleMCPBToolchain(t *testing.T) {
	testenv.Long(t)
	mcpb := clientTool(t, "mcpb")
	dir := t.TempDir()
	first, second := filepath.Join(dir, "combat.mcpb"), filepath.Join(dir, "again.mcpb")
	bundleCombat(t, first)
	bundleCombat(t, second)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Errorf("two bundles of testdata/combat differ (%d and %d bytes)", len(a), len(b))
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(mcpb, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mcpb %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ours := filepath.Join(dir, "ours")
	unzipLikeMCPB(t, first, ours)
	if out := run("validate", filepath.Join(ours, "manifest.json")); !strings.Contains(out, "Manifest schema validation passes!") {
		t.Errorf("mcpb validate:\n%s", out)
	}
	if out := run("info", first); !strings.Contains(out, "File: combat.mcpb") {
		t.Errorf("mcpb info:\n%s", out)
	}
	theirs := filepath.Join(dir, "theirs")
	if out := run("unpack", first, theirs); !strings.Contains(out, "unpacked successfully") {
		t.Errorf("mcpb unpack:\n%s", out)
	}
	var files int
	err := filepath.WalkDir(ours, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		rel, _ := filepath.Rel(ours, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(theirs, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("mcpb unpack: %s differs or is missing (%v)", rel, err)
			return nil
		}
		st1, _ := os.Stat(p)
		st2, _ := os.Stat(filepath.Join(theirs, rel))
		if st1.Mode().Perm() != st2.Mode().Perm() {
			t.Errorf("mcpb unpack: %s has mode %v, the bundle says %v", rel, st2.Mode().Perm(), st1.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bin/linux-amd64/nexus", "bin/darwin-arm64/nexus", "program/manifest.json", "program/pools/py/pool.py", "program/pools/r/pool.R"} {
		if st, err := os.Stat(filepath.Join(theirs, f)); err != nil || strings.HasPrefix(f, "bin/") && st.Mode()&0o100 == 0 {
			t.Errorf("mcpb unpack: %s missing or not executable (%v)", f, err)
		}
	}
	if files != 6 {
		t.Errorf("the bundle holds %d files, want 6 (two nexus, the MCPB manifest, three program files)", files)
	}
}

// mcpbDoc is what this test reads of an MCPB manifest.
type mcpbDoc struct {
	Server struct {
		Type       string `json:"type"`
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Command           string                     `json:"command"`
			Args              []string                   `json:"args"`
			Env               map[string]string          `json:"env"`
			PlatformOverrides map[string]json.RawMessage `json:"platform_overrides"`
		} `json:"mcp_config"`
	} `json:"server"`
	Tools      []struct{ Name string } `json:"tools"`
	UserConfig map[string]struct {
		Type    string `json:"type"`
		Default any    `json:"default"`
	} `json:"user_config"`
}

// bundleCommand is what a client starts for a bundle unpacked in a
// directory: its MCPB manifest, and mcp_config's command, arguments and
// environment (over a desktop app's PATH) as Claude Desktop reads them.
type bundleCommand struct {
	doc     mcpbDoc
	command string
	args    []string
	env     map[string]string
}

// readBundleCommand reads the manifest.json of the bundle unpacked in dir,
// takes this OS's platform_overrides, and puts vars in for ${…}.
func readBundleCommand(t *testing.T, dir string, vars map[string]string) bundleCommand {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bundleCommand
	if err := json.Unmarshal(raw, &b.doc); err != nil {
		t.Fatal(err)
	}
	cfg := b.doc.Server.MCPConfig
	if o, ok := cfg.PlatformOverrides[runtime.GOOS]; ok {
		var over struct{ Command string }
		if err := json.Unmarshal(o, &over); err != nil {
			t.Fatal(err)
		}
		cfg.Command = over.Command
	}
	b.command = substitute(cfg.Command, vars)
	for _, a := range cfg.Args {
		b.args = append(b.args, substitute(a, vars))
	}
	b.env = map[string]string{"PATH": systemPath}
	for k, v := range cfg.Env {
		b.env[k] = substitute(v, vars)
	}
	return b
}

// substitute replaces ${name} as mcpb's replaceVariables does.
func substitute(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	return s
}

// Claude Desktop's part, done by hand: unpack the bundle into a new
// directory, take mcp_config (with this OS's platform_overrides), put the
// directory and the user's choice of environment in for ${__dirname} and
// ${user_config.environment}, start the command with the minimal PATH a
// desktop app has, and talk to it with the go-sdk client: the tools are
// listed, a Python function and an R function answer, and the interpreters
// came from the environment the user chose.
func TestBundleAsClaudeDesktop(t *testing.T) {
	for _, why := range []string{testenv.PythonMissing(), rAvailable()} {
		if why != "" {
			testenv.MissingTool(t, why)
		}
	}
	dir := t.TempDir()
	bundle := filepath.Join(dir, "combat.mcpb")
	bundleCombat(t, bundle)
	ext := filepath.Join(dir, "Claude Extensions", "combat") // a space, as on macOS
	unzipLikeMCPB(t, bundle, ext)
	envDir := filepath.Join(dir, "my env") // the environment the user chose
	bc := readBundleCommand(t, ext, map[string]string{"__dirname": ext, "user_config.environment": envDir})
	doc, command, args, env := bc.doc, bc.command, bc.args, bc.env
	if doc.Server.Type != "binary" || doc.UserConfig["environment"].Type != "directory" {
		t.Fatalf("server type %q, user_config %+v", doc.Server.Type, doc.UserConfig)
	}
	// The user's environment: python3 and Rscript that say they ran, then
	// run the real ones.
	marks := filepath.Join(dir, "marks")
	os.MkdirAll(filepath.Join(envDir, "bin"), 0o755)
	os.MkdirAll(marks, 0o755)
	for _, name := range []string{"python3", "Rscript"} {
		real, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\ntouch '%s/%s'\nexec '%s' \"$@\"\n", marks, name, real)
		if err := os.WriteFile(filepath.Join(envDir, "bin", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(env["PATH"], envDir+"/bin:") {
		t.Errorf("PATH %q does not start with the chosen environment's bin", env["PATH"])
	}
	cmd := exec.Command(command, args...)
	cmd.Dir = "/"
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-desktop-as-a-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v\nstderr:\n%s", command, err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 3 || len(doc.Tools) != 3 {
		t.Fatalf("tools/list: %v, %d tools (the manifest lists %d)", err, len(tools.Tools), len(doc.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "rollAdv", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("rollAdv (Python): %v %+v\nstderr:\n%s", err, res, stderr.String())
	}
	var roll int
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &roll); err != nil || roll < 1 || roll > 20 {
		t.Errorf("rollAdv = %v, want a d20 roll", res.Content[0].(*sdk.TextContent).Text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "intro", Arguments: map[string]any{"_1": "orc"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != `"A wild orc appears!"` {
		t.Fatalf("intro (R): %v %+v\nstderr:\n%s", err, res, stderr.String())
	}
	for _, name := range []string{"python3", "Rscript"} {
		if _, err := os.Stat(filepath.Join(marks, name)); err != nil {
			t.Errorf("the pools did not run the environment's %s: the user_config directory is not first on PATH", name)
		}
	}
}
