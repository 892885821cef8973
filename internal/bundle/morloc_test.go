package bundle

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/bundle/morlochome"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// cc builds a shared library (or, with "-o" pointing at a non-.so name,
// an executable) from an empty C file with the given flags.
func cc(t *testing.T, out string, flags ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "x.c")
	body := "int x(void) { return 1; }\n"
	if !strings.HasSuffix(out, ".so") {
		body = "int main(void) { return 0; }\n"
	}
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// --no-as-needed: the empty file uses nothing of the libraries it
	// links, which a linker defaulting to --as-needed would drop.
	args := append([]string{"-o", out, src, "-Wl,--no-as-needed"}, flags...)
	if strings.HasSuffix(out, ".so") {
		args = append([]string{"-shared", "-fPIC"}, args...)
	}
	if b, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %v: %v\n%s", args, err, b)
	}
}

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// morlocProgram is a program as morloc 0.69 and 0.98 lay one out, its
// runtime in a morloc home of the builder's (HOME is set to a scratch
// directory): a Python pool whose sys.path names the home (once through
// ~), an R pool that dyn.loads librmorloc.so and sources a file of the
// home's R library, and a compiled pool linking libmorloc.so with a run
// path into the home. The home holds more than they load.
func morlocProgram(t *testing.T) (dir, home string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("builds ELF libraries")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testenv.MissingTool(t, "cc is not installed: the test builds shared libraries")
	}
	user := t.TempDir()
	t.Setenv("HOME", user)
	home = filepath.Join(user, ".local", "share", "morloc")
	lib := filepath.Join(home, "lib")
	cc(t, filepath.Join(lib, "libmorloc.so"), "-Wl,-soname,libmorloc.so")
	cc(t, filepath.Join(lib, "libunused.so"))
	cc(t, filepath.Join(lib, "librmorloc.so"), "-L"+lib, "-lmorloc", "-Wl,-rpath,"+lib)
	// pymorloc's run path is $ORIGIN-relative, as morloc 0.98 links it.
	cc(t, filepath.Join(home, "opt", "pymorloc.cpython-311-x86_64-linux-gnu.so"), "-L"+lib, "-lmorloc", "-Wl,-rpath,$ORIGIN/../lib")
	if err := os.Symlink("pymorloc.cpython-311-x86_64-linux-gnu.so", filepath.Join(home, "opt", "pymorloc")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "opt", "setup.py"), "# builds pymorloc\n")
	write(t, filepath.Join(home, "lib", "python", "helpers", "__init__.py"), "")
	write(t, filepath.Join(home, "lib", "python", "helpers", "text.py"), "def f(): pass\n")
	write(t, filepath.Join(home, "lib", "python", "other", "__init__.py"), "")
	// A namespace package, as morloc 0.69's module library is
	// (default.morloclib.root-py.core): only the module imported goes.
	write(t, filepath.Join(home, "lib", "python", "ns", "root-py", "core.py"), "def h(): pass\n")
	write(t, filepath.Join(home, "lib", "python", "ns", "root-py", "unused.py"), "")
	write(t, filepath.Join(home, "lib", "python", "ns", "root-r", "core.R"), "")
	write(t, filepath.Join(home, "lib", "R", "rhelp.R"), "f <- function() 1\n")
	write(t, filepath.Join(home, "include", "morloc.h"), "/* compile time only */\n")

	dir = filepath.Join(t.TempDir(), "prog")
	write(t, filepath.Join(dir, "funcs.py"), "def g(): pass\n")
	write(t, filepath.Join(dir, "funcs.R"), "g <- function() 2\n")
	write(t, filepath.Join(dir, "pools", "py", "pool.py"), `import os
import sys, importlib as il
from collections import OrderedDict
sys.path = [os.path.expanduser("."), os.path.expanduser("`+home+`/opt"), os.path.expanduser("~/.local/share/morloc/src/morloc/plane"), os.path.expanduser("`+home+`/lib/python")] + sys.path
import pymorloc as morloc
funcs = il.import_module("funcs")
helpers = il.import_module("helpers.text")
core = il.import_module("ns.root-py.core")
open("`+dir+`/data.txt")
print("/", '`+home+`/lib')
`)
	write(t, filepath.Join(dir, "pools", "r", "pool.R"), `dyn.load("`+home+`/lib/librmorloc.so")
.morloc.libdir <- "`+home+`/lib/R"
.morloc.source("rhelp.R")
source("funcs.R")
x <- paste0(tmp, "/", "pipe")
`)
	cc(t, filepath.Join(dir, "pools", "cpp", "pool-cpp.out"), "-L"+lib, "-lmorloc", "-Wl,-rpath,"+lib)
	return dir, home
}

func morlocManifest(t *testing.T, dir string) *manifest.Manifest {
	t.Helper()
	m := &manifest.Manifest{Name: "prog", Path: filepath.Join(dir, "manifest.json"), Dir: dir, Format: manifest.FormatFile,
		Pools: []manifest.Pool{
			{Lang: "py", Exec: []string{"python3", "pools/py/pool.py"}},
			{Lang: "r", Exec: []string{"Rscript", "pools/r/pool.R"}},
			{Lang: "cpp", Exec: []string{"pools/cpp/pool-cpp.out"}},
		}}
	write(t, m.Path, `{"name":"prog","pools":[],"commands":[]}`)
	return m
}

// The runtime's files are found from the pools: what their sources name,
// import and source from the home, and what they and those files link
// from it; nothing else of the home.
func TestMorlocRuntimeFound(t *testing.T) {
	dir, home := morlocProgram(t)
	rt, err := findMorlocRuntime(morlocManifest(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if rt.home != home {
		t.Errorf("home %q, want %q", rt.home, home)
	}
	want := []string{
		"lib/R/rhelp.R",
		"lib/libmorloc.so",
		"lib/librmorloc.so",
		"lib/python/helpers/__init__.py",
		"lib/python/helpers/text.py",
		"lib/python/ns/root-py/core.py",
		"opt/pymorloc.cpython-311-x86_64-linux-gnu.so",
	}
	if got := rt.names(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("carried:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, rel := range []string{"lib/libmorloc.so", "lib/librmorloc.so", "opt/pymorloc.cpython-311-x86_64-linux-gnu.so"} {
		if !rt.elf[rel] {
			t.Errorf("%s not taken for a library", rel)
		}
	}
	if v := rt.pythonVersions(); len(v) != 1 || v[0] != "3.11" {
		t.Errorf("Python versions %v, want [3.11]", v)
	}
	var edited []string
	for rel := range rt.edits {
		edited = append(edited, rel)
	}
	sort.Strings(edited)
	if strings.Join(edited, " ") != "pools/py/pool.py pools/r/pool.R" {
		t.Fatalf("edited %v, want the two pool sources", edited)
	}
	py := string(rt.edits["pools/py/pool.py"])
	for _, s := range []string{
		`os.path.expanduser("morloc-home/opt")`,
		`os.path.expanduser("morloc-home/src/morloc/plane")`, // the ~ form too
		`os.path.expanduser("morloc-home/lib/python")`,
		`open("data.txt")`, // the program's own directory, where the pool runs
		`print("/", 'morloc-home/lib')`,
		`os.path.expanduser(".")`,
	} {
		if !strings.Contains(py, s) {
			t.Errorf("pool.py lacks %s:\n%s", s, py)
		}
	}
	r := string(rt.edits["pools/r/pool.R"])
	for _, s := range []string{`dyn.load("morloc-home/lib/librmorloc.so")`, `.morloc.libdir <- "morloc-home/lib/R"`, `paste0(tmp, "/", "pipe")`} {
		if !strings.Contains(r, s) {
			t.Errorf("pool.R lacks %s:\n%s", s, r)
		}
	}
	for rel, src := range rt.edits {
		if bytes.Contains(src, []byte(filepath.Dir(home))) {
			t.Errorf("%s still names the builder's home:\n%s", rel, src)
		}
	}
	// The user's build is never changed.
	orig, _ := os.ReadFile(filepath.Join(dir, "pools", "py", "pool.py"))
	if !bytes.Contains(orig, []byte(home+"/opt")) {
		t.Errorf("the program's own pool.py was changed:\n%s", orig)
	}
}

// A program whose pools load nothing from a morloc home (nexus's own
// runtime, or a morloc installed in a system prefix) carries nothing.
func TestMorlocRuntimeNone(t *testing.T) {
	m, err := manifest.Load(filepath.Join("..", "..", "testdata", "combat"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := findMorlocRuntime(m)
	if err != nil || rt.home != "" || len(rt.files) != 0 || len(rt.edits) != 0 {
		t.Errorf("testdata/combat: home %q, files %v, edits %d, %v", rt.home, rt.files, len(rt.edits), err)
	}
}

// Pools that load morloc's runtime from two homes are refused.
func TestMorlocRuntimeTwoHomes(t *testing.T) {
	dir, _ := morlocProgram(t)
	other := filepath.Join(t.TempDir(), "morloc")
	write(t, filepath.Join(other, "lib", "libmorloc.so"), "")
	write(t, filepath.Join(dir, "pools", "r", "pool.R"), `dyn.load("`+other+`/lib/librmorloc.so")`+"\n")
	_, err := findMorlocRuntime(morlocManifest(t, dir))
	if err == nil || !strings.Contains(err.Error(), "two homes") || !strings.Contains(err.Error(), other) {
		t.Fatalf("two homes: %v", err)
	}
}

func zipEntries(t *testing.T, b []byte) map[string]*zip.File {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*zip.File{}
	for _, f := range zr.File {
		out[f.Name] = f
	}
	return out
}

func zipText(t *testing.T, f *zip.File) string {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The bundle holds the runtime under program/morloc-home, the pools'
// sources as rewritten, and says which Python the extension needs; for a
// platform the runtime was not built for it is refused, naming the files,
// unless --allow-missing-pools.
func TestBundleMorlocProgram(t *testing.T) {
	dir, home := morlocProgram(t)
	m := morlocManifest(t, dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Program: m, Platforms: []Platform{Host()}, Binaries: map[Platform]string{Host(): self}, Author: "A", NexusVersion: "test"}
	b, _ := pack(t, o)
	files := zipEntries(t, b)
	for _, rel := range []string{"lib/libmorloc.so", "lib/librmorloc.so", "opt/pymorloc.cpython-311-x86_64-linux-gnu.so", "lib/R/rhelp.R"} {
		f := files["program/"+morlochome.Dir+"/"+rel]
		if f == nil {
			t.Errorf("the bundle lacks %s", rel)
			continue
		}
		want, _ := os.ReadFile(filepath.Join(home, rel))
		if got := zipText(t, f); got != string(want) {
			t.Errorf("%s differs from the home's", rel)
		}
	}
	if f := files["program/"+morlochome.Dir+"/lib/libmorloc.so"]; f != nil && f.Mode().Perm() != 0o755 {
		t.Errorf("libmorloc.so has mode %v", f.Mode())
	}
	if py := zipText(t, files["program/pools/py/pool.py"]); !strings.Contains(py, `"morloc-home/opt"`) {
		t.Errorf("the bundle's pool.py:\n%s", py)
	}
	doc := zipText(t, files["manifest.json"])
	for _, s := range []string{`"python": "3.11.x"`, "built for " + Host().String(), "program/morloc-home (lib/R/rhelp.R, lib/libmorloc.so"} {
		if !strings.Contains(doc, s) {
			t.Errorf("manifest.json lacks %q:\n%s", s, doc)
		}
	}

	other := Platform{"darwin", "arm64"}
	o.Platforms = []Platform{Host(), other}
	o.Binaries = map[Platform]string{Host(): self, other: self}
	rt, err := findMorlocRuntime(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = poolNeeds(m, rt, o, &Report{})
	for _, s := range []string{"morloc's runtime file lib/libmorloc.so", "morloc's runtime file opt/pymorloc.cpython-311-x86_64-linux-gnu.so", "cannot run on darwin/arm64", "--allow-missing-pools"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("bundled for %s too: %v, want %q", other, err, s)
		}
	}
	o.AllowMissingPools = true
	rep := &Report{}
	if _, err := poolNeeds(m, rt, o, rep); err != nil || !strings.Contains(strings.Join(rep.Missing, "\n"), "lib/librmorloc.so") {
		t.Errorf("allowed: %v, %q", err, rep.Missing)
	}
}

// A program that already holds morloc-home (an unpacked bundle, bundled
// again) is carried as it is.
func TestBundleMorlocCarriedAlready(t *testing.T) {
	dir, _ := morlocProgram(t)
	m := morlocManifest(t, dir)
	write(t, filepath.Join(dir, morlochome.Dir, "lib", "libmorloc.so"), "carried")
	files, err := programFiles(dir, nil, &Report{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := morlocParts(m, files)
	if err != nil || len(rt.files) != 0 || len(rt.edits) != 0 {
		t.Errorf("morlocParts: %v, %d files, %d edits", err, len(rt.files), len(rt.edits))
	}
}

// morloc's launchers record the absolute build directory, and from 0.78
// absolute pool paths; the bundle's copy records "." and relative paths,
// and reads back as a program whose pools run beside it.
func TestRelocatedLauncher(t *testing.T) {
	for _, tc := range []struct{ name, from, built string }{
		{"0.69, version 1", "v0.69-py", "/tmp/mf-build/py"},
		{"0.96, build.path and absolute pools", "written-v0.96-py", "/home/user/wordy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "manifest", "testdata", "launchers", tc.from, "nexus"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "nexus")
			write(t, p, string(data))
			m, err := manifest.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dir != tc.built {
				t.Fatalf("the launcher records %s, the test expects %s", m.Dir, tc.built)
			}
			out, err := relocatedLauncher(m)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte(tc.built)) {
				t.Errorf("the relocated launcher still names %s:\n%s", tc.built, out)
			}
			again, err := manifest.Parse(p, out)
			if err != nil {
				t.Fatal(err)
			}
			if again.Dir != dir {
				t.Errorf("pools run in %s, want %s", again.Dir, dir)
			}
			for i, pl := range again.Pools {
				for _, a := range pl.Exec {
					if filepath.IsAbs(a) {
						t.Errorf("pool %d: absolute %s", i, a)
					}
				}
			}
			if len(again.Commands) != len(m.Commands) || again.Name != m.Name {
				t.Errorf("relocated: %d commands, name %s; was %d, %s", len(again.Commands), again.Name, len(m.Commands), m.Name)
			}
			if !bytes.HasPrefix(out, data[:bytes.Index(data, []byte(launcherMarker))]) {
				t.Errorf("the launcher's script lines changed")
			}
		})
	}
	// A manifest.json is left as it is.
	m, err := manifest.Load(filepath.Join("..", "..", "testdata", "combat"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := relocatedLauncher(m); out != nil || err != nil {
		t.Errorf("manifest.json: %d bytes, %v", len(out), err)
	}
}

// A build directory of morloc 0.69 to 0.96 has no manifest.json: its
// launcher is the program; another directory is left to manifest.Load.
func TestProgramTarget(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "manifest", "testdata", "launchers", "v0.69-py", "nexus"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	built := bytes.Replace(data, []byte(`"build_dir":"/tmp/mf-build/py"`), []byte(`"build_dir":"`+dir+`"`), 1)
	write(t, filepath.Join(dir, "nexus"), string(built))
	write(t, filepath.Join(dir, "main.loc"), "module main\n")
	if got, err := ProgramTarget(dir); err != nil || got != filepath.Join(dir, "nexus") {
		t.Errorf("ProgramTarget(build dir) = %q, %v", got, err)
	}
	combat := filepath.Join("..", "..", "testdata", "combat")
	if got, err := ProgramTarget(combat); err != nil || got != combat {
		t.Errorf("ProgramTarget(combat) = %q, %v", got, err)
	}
	t.Chdir(filepath.Dir(dir)) // a relative target, as typed
	if got, err := ProgramTarget(filepath.Base(dir)); err != nil || got != filepath.Join(filepath.Base(dir), "nexus") {
		t.Errorf("ProgramTarget(relative build dir) = %q, %v", got, err)
	}
	moved := t.TempDir() // a launcher built elsewhere is not this directory's program
	write(t, filepath.Join(moved, "nexus"), string(data))
	if got, err := ProgramTarget(moved); err != nil || got != moved {
		t.Errorf("ProgramTarget(moved) = %q, %v", got, err)
	}
	write(t, filepath.Join(dir, "again"), string(built))
	if _, err := ProgramTarget(dir); err == nil || !strings.Contains(err.Error(), "2 launchers") {
		t.Errorf("two launchers: %v", err)
	}
}

func TestValueSpan(t *testing.T) {
	doc := []byte(`{"a": 1, "build" : {"path":"/x/y", "time": 2}, "s":"t", "a":[1, 2]}`)
	for _, tc := range []struct{ key, want string }{
		{"build", `{"path":"/x/y", "time": 2}`},
		{"s", `"t"`},
		{"a", `[1, 2]`}, // the last
		{"none", ""},
	} {
		s, e, ok := valueSpan(doc, tc.key)
		if got := string(doc[s:e]); ok != (tc.want != "") || got != tc.want {
			t.Errorf("valueSpan(%s) = %q, %v; want %q", tc.key, got, ok, tc.want)
		}
	}
}

// A runtime the pools load that is not on this machine (morloc's home
// removed since, or a library missing from it) cannot be carried: the
// bundle is refused, naming each, unless --allow-missing-pools.
func TestMorlocRuntimeUnfound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove string // relative to the home; "" for the whole home
		want   []string
	}{
		{"no home", "", []string{"pools/py/pool.py names ", "/.local/share/morloc/opt, which is not on this machine",
			"pools/r/pool.R names ", "pool-cpp.out needs libmorloc.so, which neither its run path"}},
		{"no librmorloc.so", "lib/librmorloc.so", []string{"pools/r/pool.R names ", "/lib/librmorloc.so, which is not on this machine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, home := morlocProgram(t)
			if err := os.RemoveAll(filepath.Join(home, tc.remove)); err != nil {
				t.Fatal(err)
			}
			m := morlocManifest(t, dir)
			self, _ := os.Executable()
			o := Options{Program: m, Platforms: []Platform{Host()}, Binaries: map[Platform]string{Host(): self}, Author: "A"}
			_, err := Write(io.Discard, o)
			for _, s := range tc.want {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("%v, want %q", err, s)
				}
			}
			o.AllowMissingPools = true
			rep, err := Write(io.Discard, o)
			if err != nil || len(rep.Missing) == 0 {
				t.Errorf("allowed: %v, %+v", err, rep)
			}
		})
	}
}

func TestPythonImports(t *testing.T) {
	src := []byte(`import os
import sys, a.b as ab, c
from d.e import f, g as h  # a comment
from . import local
x = importlib.import_module("default.morloclib.root-py.core")
  import indented
s = "import not_at_line_start"
`)
	want := "a.b c d.e d.e.f d.e.g default.morloclib.root-py.core indented os sys"
	got := pythonImports(src)
	sort.Strings(got)
	if strings.Join(got, " ") != want {
		t.Errorf("pythonImports = %s\nwant %s", strings.Join(got, " "), want)
	}
}
