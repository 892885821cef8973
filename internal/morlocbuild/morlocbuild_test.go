package morlocbuild

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeToolchain is a toolchain whose compiler is a shell script: it records
// each run (its working directory's files) in a log and writes the
// launcher, or fails when the sources hold a file named "fail".
func fakeToolchain(t *testing.T) (Toolchain, string) {
	t.Helper()
	root := t.TempDir()
	log := filepath.Join(root, "runs.log")
	script := `#!/bin/sh
[ "$1 $2 $3 $4" = "make -o nexus main.loc" ] || { echo "bad arguments: $*"; exit 2; }
echo "run: $(ls | tr '\n' ' ')" >> "` + log + `"
if [ -e fail ]; then echo "main.loc:1: type error"; exit 1; fi
echo '#!/bin/sh' > nexus
`
	tc := Toolchain{
		Compiler: filepath.Join(root, "bin", "morloc"),
		Nexus:    filepath.Join(root, "local", "bin", "morloc-nexus"),
		Runtime:  filepath.Join(root, "share", "morloc"),
	}
	for f, body := range map[string]string{
		tc.Compiler: script,
		tc.Nexus:    "nexus",
		filepath.Join(tc.Runtime, "lib", "libmorloc.so"): "lib",
		filepath.Join(tc.Runtime, "include", "morloc.h"): "header",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tc, log
}

func writeSources(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runs(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A program is compiled once, in place, from its sources alone; it is
// compiled again when a source or the toolchain changes, and not otherwise.
func TestCompileOnceAndAgainOnChange(t *testing.T) {
	tc, log := fakeToolchain(t)
	src := filepath.Join(t.TempDir(), "prog")
	writeSources(t, src, map[string]string{"main.loc": "module prog", "foo.py": "x", "README.md": "docs", "sub/ignored": "y"})
	cache := filepath.Join(t.TempDir(), "cache")

	var told []string
	compiling := func(dir string) { told = append(told, dir) }
	dir, err := tc.Compile(src, cache, compiling)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != cache || !strings.HasPrefix(filepath.Base(dir), "prog-") {
		t.Errorf("compiled into %s, want %s/prog-<key>", dir, cache)
	}
	if _, err := os.Stat(filepath.Join(dir, "nexus")); err != nil {
		t.Errorf("no launcher: %v", err)
	}
	if got := runs(t, log); len(got) != 1 || strings.TrimSpace(got[0]) != "run: foo.py main.loc" {
		t.Errorf("compiler runs %q, want one, with main.loc and foo.py only", got)
	}
	if len(told) != 1 || told[0] != dir {
		t.Errorf("compiling called with %q, want [%s]", told, dir)
	}

	again, err := tc.Compile(src, cache, compiling)
	if err != nil || again != dir {
		t.Fatalf("second Compile: %s, %v; want %s from the cache", again, err, dir)
	}
	if n := len(runs(t, log)); n != 1 || len(told) != 1 {
		t.Errorf("the second Compile ran the compiler (%d runs, told %d times)", n, len(told))
	}

	writeSources(t, src, map[string]string{"README.md": "other docs"})
	if d, _ := tc.Compile(src, cache, nil); d != dir || len(runs(t, log)) != 1 {
		t.Errorf("a README change compiled again (%s, %d runs)", d, len(runs(t, log)))
	}

	writeSources(t, src, map[string]string{"foo.py": "changed"})
	changed, err := tc.Compile(src, cache, nil)
	if err != nil || changed == dir || len(runs(t, log)) != 2 {
		t.Errorf("after a source change: %s, %v, %d runs; want a new directory, compiled", changed, err, len(runs(t, log)))
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(tc.Runtime, "lib", "libmorloc.so"), later, later); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := tc.Compile(src, cache, nil)
	if err != nil || rebuilt == changed || len(runs(t, log)) != 3 {
		t.Errorf("after a runtime change: %s, %v, %d runs; want a new directory, compiled", rebuilt, err, len(runs(t, log)))
	}
}

// A failed compilation says what the compiler said and leaves nothing
// that passes for a build: once the source is fixed, the same key compiles.
func TestCompileFailure(t *testing.T) {
	tc, log := fakeToolchain(t)
	src := filepath.Join(t.TempDir(), "bad")
	writeSources(t, src, map[string]string{"main.loc": "module bad", "fail": ""})
	cache := t.TempDir()
	_, err := tc.Compile(src, cache, nil)
	if err == nil || !strings.Contains(err.Error(), "main.loc:1: type error") || !strings.Contains(err.Error(), src) {
		t.Fatalf("error %v, want the compiler's message and the program's path", err)
	}
	if _, err := tc.Compile(src, cache, nil); err == nil || len(runs(t, log)) != 2 {
		t.Errorf("a second Compile of the failing program: %v after %d runs, want it tried again", err, len(runs(t, log)))
	}
	if err := os.Remove(filepath.Join(src, "fail")); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Compile(src, cache, nil); err != nil {
		t.Errorf("the fixed program: %v", err)
	}
	if _, err := tc.Compile(filepath.Join(t.TempDir(), "empty"), cache, nil); err == nil {
		t.Error("a program with no sources compiled")
	}
}

// Compilations of one program at once make one compilation; the others
// wait for it and share its directory.
func TestCompileConcurrent(t *testing.T) {
	tc, log := fakeToolchain(t)
	src := filepath.Join(t.TempDir(), "prog")
	writeSources(t, src, map[string]string{"main.loc": "module prog"})
	cache := t.TempDir()
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = tc.Compile(src, cache, nil)
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("Compile %d: %s, %v; want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	if n := len(runs(t, log)); n != 1 {
		t.Errorf("%d compilations, want 1", n)
	}
}

func TestInstalledNamesWhatIsMissing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv(CompilerEnv, "/nowhere/morloc")
	tc, err := Installed()
	if tc.Compiler != "/nowhere/morloc" {
		t.Errorf("compiler %s, want %s from %s", tc.Compiler, "/nowhere/morloc", CompilerEnv)
	}
	if err == nil || !strings.Contains(err.Error(), "/nowhere/morloc") || !strings.Contains(err.Error(), "morloc-nexus") || !strings.Contains(err.Error(), "make deps") {
		t.Errorf("error %v, want each missing part and how to install them", err)
	}
	if p := tc.Path(); !strings.HasPrefix(p, "/nowhere:") || !strings.HasSuffix(p, ":/usr/bin:/bin") {
		t.Errorf("Path %s: want the compiler's directory first, Debian's last", p)
	}
}
