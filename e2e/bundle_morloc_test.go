package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Programs the real morloc 0.69.0 compiled, bundled by nexus bundle and
// run where morloc is not installed (docs/bundles.md): the official mcpb
// validates and unpacks the bundle; its mcp_config starts nexus with HOME
// an empty directory, PATH the system's directories and morloc's home
// hidden under an empty tmpfs in a private mount namespace; every tool
// answers as morloc's own nexus did on the build machine, and the pools
// loaded morloc's runtime from the bundle.

// morlocHiddenScript mounts an empty tmpfs over morloc's home ($1), checks
// that libmorloc.so is gone from there, and runs the rest of its
// arguments. Only the namespace unshare makes sees the mount: other
// processes, other tests among them, keep the real home.
const morlocHiddenScript = `mount -t tmpfs none "$1" && test ! -e "$1/lib/libmorloc.so" && shift && exec "$@"`

// hideMorlocHome is the argv prefix that runs a command with morloc's home
// hidden, or why it cannot be: not root, or no unshare that works here.
func hideMorlocHome(t *testing.T, home string) ([]string, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil, "mount namespaces are Linux's"
	}
	if os.Geteuid() != 0 {
		return nil, "not root: a private mount namespace needs root"
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "unshare (util-linux) is not installed"
	}
	prefix := []string{unshare, "-m", "--propagation", "private", "/bin/sh", "-c", morlocHiddenScript, "sh", home}
	if out, err := exec.Command(prefix[0], append(prefix[1:], "/bin/true")...).CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("unshare cannot hide morloc's home here: %v %s", err, out)
	}
	return prefix, ""
}

// systemPath is the PATH of the user's machine without morloc: the
// system's directories.
const systemPath = "/usr/bin:/bin"

// bundledServer is a bundle unpacked as a client unpacks it, and the
// command its MCPB manifest says to start.
type bundledServer struct {
	dir string // where it is unpacked
	bundleCommand
}

// unpackBundle validates the bundle's manifest with the official mcpb,
// unpacks the bundle with it into a fresh directory (a space in its path,
// as Claude Desktop's has on macOS), and reads mcp_config as Claude
// Desktop does: this OS's platform_overrides, ${__dirname} and the
// environment the user left empty put in.
func unpackBundle(t *testing.T, bundle string) *bundledServer {
	t.Helper()
	mcpb := clientTool(t, "mcpb")
	dir := filepath.Join(t.TempDir(), "Claude Extensions", strings.TrimSuffix(filepath.Base(bundle), ".mcpb"))
	mcpbRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(mcpb, args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mcpb %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := mcpbRun("unpack", bundle, dir); !strings.Contains(out, "unpacked successfully") {
		t.Fatalf("mcpb unpack:\n%s", out)
	}
	if out := mcpbRun("validate", filepath.Join(dir, "manifest.json")); !strings.Contains(out, "Manifest schema validation passes!") {
		t.Fatalf("mcpb validate:\n%s", out)
	}
	vars := map[string]string{"__dirname": dir, "user_config.environment": ""}
	return &bundledServer{dir: dir, bundleCommand: readBundleCommand(t, dir, vars)}
}

// start runs the server as a client would, under prefix (hideMorlocHome's),
// with HOME the empty directory home, and connects the go-sdk client.
func (s *bundledServer) start(t *testing.T, prefix []string, home string) (*sdk.ClientSession, *exec.Cmd, *syncBuffer) {
	t.Helper()
	argv := append(append(append([]string(nil), prefix...), s.command), s.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=" + home}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "bundle-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v\nstderr:\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd, stderr
}

// bundleOf runs nexus bundle on target into out.
func bundleOf(t *testing.T, target, out string) string {
	t.Helper()
	_, stderr, code := runNexus(t, "bundle", target, "-o", out, "--author", "Nexus Tests <tests@example.org>", "--version", "1.0.0")
	if code != 0 {
		t.Fatalf("nexus bundle %s: exit %d\n%s", target, code, stderr)
	}
	return stderr
}

// answersAsMorloc calls each case's tool and compares with what morloc's
// own nexus printed on the build machine.
func answersAsMorloc(t *testing.T, p *morlocProg, cs *sdk.ClientSession, stderr *syncBuffer, cases []morlocCase) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if len(cases) < 4 {
		t.Fatalf("%d cases for %s", len(cases), p.name)
	}
	for _, c := range cases {
		want := p.morlocAnswer(t, c)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.cmd, Arguments: toolArguments(t, c.args)})
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", c, err, stderr.String())
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				text = tc.Text
			}
		}
		switch {
		case c.fails:
			if !res.IsError || !strings.Contains(text, c.failText) {
				t.Errorf("%s: isError %v, %q; want isError with %q", c, res.IsError, brief(text), c.failText)
			}
		case res.IsError:
			t.Errorf("%s: isError: %s\nmorloc's nexus: %s\nstderr:\n%s", c, text, brief(want.stdout), stderr.String())
		default:
			if d := sameValue(want.stdout, text); d != "" {
				t.Errorf("%s: %s\n morloc: %s\n bundle: %s", c, d, brief(want.stdout), brief(text))
			}
		}
	}
}

// morlocLibrary matches the runtime's files in a line of a process's
// memory map (address, perms, offset, device, inode, path; the path may
// hold spaces).
var morlocLibrary = regexp.MustCompile(`^\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(/.*/(libmorloc\.so|librmorloc\.so|pymorloc[^/]*\.so))$`)

// loadedFromBundle checks the memory maps of the pools running under
// nexus (pid): each language's pool loaded libmorloc.so (and pymorloc or
// librmorloc.so) from the bundle's morloc-home, and no pool loaded any of
// them from elsewhere.
func loadedFromBundle(t *testing.T, pid int, p *morlocProg, dir string, langs ...string) {
	t.Helper()
	home := filepath.Join(dir, "program", "morloc-home") + "/"
	found := map[string]map[string]bool{} // language → library → loaded from the bundle
	for child, cl := range descendants(pid) {
		lang := ""
		switch {
		case strings.Contains(cl, "pools/"+p.module+"/pool.py"):
			lang = "py"
		case strings.Contains(cl, "pools/"+p.module+"/pool.R"):
			lang = "r"
		case strings.Contains(cl, "pools/"+p.module+"/pool-cpp.out"):
			lang = "cpp"
		default:
			continue
		}
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", child))
		if err != nil {
			continue // a worker that ended meanwhile
		}
		for _, line := range strings.Split(string(maps), "\n") {
			m := morlocLibrary.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if !strings.HasPrefix(m[1], home) {
				t.Errorf("pool %d (%s) loaded %s, not from the bundle's %s", child, cl, m[1], home)
				continue
			}
			if found[lang] == nil {
				found[lang] = map[string]bool{}
			}
			name := m[2]
			if strings.HasPrefix(name, "pymorloc") {
				name = "pymorloc"
			}
			found[lang][name] = true
		}
	}
	want := map[string][]string{"py": {"libmorloc.so", "pymorloc"}, "r": {"libmorloc.so", "librmorloc.so"}, "cpp": {"libmorloc.so"}}
	for _, lang := range langs {
		for _, lib := range want[lang] {
			if !found[lang][lib] {
				t.Errorf("no %s pool mapped %s from %s (found %v)", lang, lib, home, found)
			}
		}
	}
}

// morlocLanguages are the languages of a test program's pools.
var morlocLanguages = map[string][]string{"py": {"py"}, "r": {"r"}, "cpp": {"cpp"}, "cross": {"py", "cpp", "r"}}

// Every program (Python, R, C++ and one calling across all three), bundled
// from the launcher morloc wrote and from its build directory (the same
// bytes), runs from the unpacked bundle with no morloc on the machine.
func TestBundleMorlocRunsWithoutMorloc(t *testing.T) {
	tc := testenv.Morloc(t)
	hide, why := hideMorlocHome(t, tc.Runtime)
	for _, name := range morlocPrograms() {
		t.Run(name, func(t *testing.T) {
			p := compileMorloc(t, name)
			dir := t.TempDir()
			fromLauncher, fromDir := filepath.Join(dir, p.module+".mcpb"), filepath.Join(dir, "again.mcpb")
			notes := bundleOf(t, p.launcher, fromLauncher)
			bundleOf(t, p.dir, fromDir)
			a, _ := os.ReadFile(fromLauncher)
			b, _ := os.ReadFile(fromDir)
			if !bytes.Equal(a, b) {
				t.Errorf("bundled from %s and from its directory: %d and %d bytes, not the same", p.launcher, len(a), len(b))
			}
			if !strings.Contains(notes, "files of morloc's runtime") {
				t.Errorf("nexus bundle says nothing of morloc's runtime:\n%s", notes)
			}
			s := unpackBundle(t, fromLauncher)
			for _, f := range []string{"program/nexus", "program/morloc-home/lib/libmorloc.so"} {
				if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
					t.Errorf("the unpacked bundle lacks %s", f)
				}
			}
			cs, cmd, stderr := s.start(t, hide, t.TempDir())
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
			}
			answersAsMorloc(t, p, cs, stderr, casesOf(p.name))
			loadedFromBundle(t, cmd.Process.Pid, p, s.dir, morlocLanguages[name]...)
		})
	}
	if why != "" {
		t.Skipf("the bundles ran, but with morloc's home in place: %s", why)
	}
}

// A program in the form of morloc 0.97 on, a manifest.json in the build
// directory and a launcher naming it (morloc's pools of 0.97 on need its
// Rust runtime, which cannot be built here, so the manifest is the 0.69
// program's in the later schema), bundles from each of its forms to the
// same bytes and runs from the bundle without morloc.
func TestBundleMorlocManifestFile(t *testing.T) {
	tc := testenv.Morloc(t)
	p := compileMorloc(t, "py")
	root := t.TempDir()
	build := filepath.Join(root, "nexus-build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(build, os.DirFS(p.dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(build, "nexus"))
	os.Remove(filepath.Join(build, ".compiled"))
	m, err := manifest.Load(p.launcher)
	if err != nil {
		t.Fatal(err)
	}
	m.Build.Path, m.Build.MorlocVersion = ".", "0.69.0"
	doc, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "manifest.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(root, "nexus")
	script := fmt.Sprintf("#!/bin/sh\n# morloc-program v0.98.2\nexec morloc-nexus run '%s' \"$@\"\n", filepath.Join(build, "manifest.json"))
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if again, err := manifest.Load(launcher); err != nil || again.Format != manifest.FormatFile || again.Dir != build {
		t.Fatalf("the 0.97 form: %v", err)
	}
	var first []byte
	for i, target := range []string{launcher, build, filepath.Join(build, "manifest.json")} {
		out := filepath.Join(root, fmt.Sprintf("b%d.mcpb", i))
		bundleOf(t, target, out)
		b, _ := os.ReadFile(out)
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("bundled from %s: not the bundle of %s", target, launcher)
		}
	}
	bundle := filepath.Join(root, "b0.mcpb")
	s := unpackBundle(t, bundle)
	if want := filepath.Join(s.dir, "program", "manifest.json"); len(s.args) != 2 || s.args[1] != want {
		t.Errorf("mcp_config args %q, want [mcp %s]", s.args, want)
	}
	hide, why := hideMorlocHome(t, tc.Runtime)
	cs, cmd, stderr := s.start(t, hide, t.TempDir())
	answersAsMorloc(t, p, cs, stderr, casesOf(p.name))
	loadedFromBundle(t, cmd.Process.Pid, p, s.dir, "py")
	if why != "" {
		t.Skipf("the bundle ran, but with morloc's home in place: %s", why)
	}
}

// Manifests the real morloc 0.98.2 compiler wrote (testdata/morloc; one
// of each language, and the one that sets every top-level field) bundle,
// and the official mcpb takes the bundle. (Their pools are not kept:
// nothing of morloc's runtime is carried.)
func TestBundleMorloc098Manifests(t *testing.T) {
	testenv.Long(t)
	for _, name := range []string{"single-py", "groups-r", "recursive-pure", "args-toplevel"} {
		t.Run(name, func(t *testing.T) {
			mf := filepath.Join(repoRoot, "testdata", "morloc", name, "manifest.json")
			out := filepath.Join(t.TempDir(), name+".mcpb")
			bundleOf(t, mf, out)
			s := unpackBundle(t, out)
			if len(s.args) != 2 || s.args[1] != filepath.Join(s.dir, "program", "manifest.json") {
				t.Errorf("mcp_config args %q", s.args)
			}
		})
	}
}

// The bundle installed into the real Claude Code CLI from its mcp_config
// (claude mcp add-json, user scope) connects: claude mcp list, run with
// morloc's home hidden, HOME empty and the system's PATH, starts nexus
// from the bundle and completes the MCP handshake.
func TestBundleMorlocClaudeCode(t *testing.T) {
	tc := testenv.Morloc(t)
	claude := clientTool(t, "claude")
	name := "cross"
	if testing.Short() {
		name = "py"
	}
	p := compileMorloc(t, name)
	out := filepath.Join(t.TempDir(), p.module+".mcpb")
	bundleOf(t, p.launcher, out)
	s := unpackBundle(t, out)
	entry, err := json.Marshal(map[string]any{"type": "stdio", "command": s.command, "args": s.args, "env": s.env})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + systemPath, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1"}
	claudeRun := func(prefix []string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		argv := append(append(append([]string(nil), prefix...), claude), args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = home, env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	claudeRun(nil, "mcp", "add-json", "--scope", "user", p.module, string(entry))
	hide, why := hideMorlocHome(t, tc.Runtime)
	line := regexp.MustCompile(`(?m)^` + p.module + `: .*$`)
	got := line.FindString(claudeRun(hide, "mcp", "list"))
	if !strings.Contains(got, s.command) || !strings.Contains(got, "Connected") {
		t.Errorf("claude mcp list: %q, want %s connected", got, p.module)
	}
	if why != "" {
		t.Skipf("connected, but with morloc's home in place: %s", why)
	}
}

// A morloc program bundled for macOS too, from Linux, is refused by the
// names of morloc's runtime files built for Linux (a Python-only program:
// no compiled pool of its own), unless --allow-missing-pools.
func TestBundleMorlocOtherPlatform(t *testing.T) {
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skip("the test's morloc runtime is built for linux/amd64")
	}
	p := compileMorloc(t, "py")
	out := filepath.Join(t.TempDir(), "py.mcpb")
	args := []string{"bundle", p.launcher, "-o", out, "--author", "T", "--platform", "linux/amd64,darwin/arm64", "--binary", "darwin/arm64=" + darwinNexus(t)}
	_, stderr, code := runNexus(t, args...)
	for _, s := range []string{"morloc's runtime file lib/libmorloc.so", "morloc's runtime file opt/pymorloc.cpython-", "built for linux/amd64, so it cannot run on darwin/arm64", "--allow-missing-pools"} {
		if code != 1 || !strings.Contains(stderr, s) {
			t.Errorf("exit %d, want 1 and %q:\n%s", code, s, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused bundle was written")
	}
	_, stderr, code = runNexus(t, append(args, "--allow-missing-pools")...)
	if code != 0 || !strings.Contains(stderr, "warning: morloc's runtime file lib/libmorloc.so") {
		t.Fatalf("--allow-missing-pools: exit %d\n%s", code, stderr)
	}
	s := unpackBundle(t, out)
	raw, _ := os.ReadFile(filepath.Join(s.dir, "manifest.json"))
	var doc struct {
		Compatibility struct{ Platforms []string } `json:"compatibility"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || strings.Join(doc.Compatibility.Platforms, ",") != "darwin,linux" {
		t.Errorf("compatibility.platforms %v (%v)", doc.Compatibility.Platforms, err)
	}
}

// testdata/morloc-0.69/libs uses morloc's own module library, whose
// sources its pools load from morloc's home.
func init() { morlocModules["libs"] = "libprog" }

// A program that uses morloc's module library (root-py, root-r) carries
// the library's files its pools load, and only those, and runs from the
// bundle without morloc.
func TestBundleMorlocLibraryModules(t *testing.T) {
	testenv.Long(t)
	tc := testenv.Morloc(t)
	p := compileMorloc(t, "libs")
	out := filepath.Join(t.TempDir(), "libs.mcpb")
	bundleOf(t, p.launcher, out)
	s := unpackBundle(t, out)
	var carried []string
	home := filepath.Join(s.dir, "program", "morloc-home")
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(home, p)
			carried = append(carried, rel)
		}
		return err
	})
	want := []string{"lib/libmorloc.so", "lib/librmorloc.so", "opt/pymorloc.cpython-", "src/morloc/plane/default/morloclib/root-py/core.py", "src/morloc/plane/default/morloclib/root-r/R/core.R"}
	if len(carried) != len(want) {
		t.Errorf("carried %q, want %d files", carried, len(want))
	}
	for i := range min(len(carried), len(want)) {
		if !strings.HasPrefix(carried[i], want[i]) {
			t.Errorf("carried %q, want %q", carried, want)
			break
		}
	}
	hide, why := hideMorlocHome(t, tc.Runtime)
	cs, cmd, stderr := s.start(t, hide, t.TempDir())
	answersAsMorloc(t, p, cs, stderr, []morlocCase{
		{cmd: "negPy", args: []string{"[1,-2]"}},
		{cmd: "negPy", args: []string{"[]"}},
		{cmd: "negR", args: []string{"[1.5,-2]"}},
		{cmd: "negR", args: []string{"[]"}},
	})
	loadedFromBundle(t, cmd.Process.Pid, p, s.dir, "py", "r")
	if why != "" {
		t.Skipf("the bundle ran, but with morloc's home in place: %s", why)
	}
}
