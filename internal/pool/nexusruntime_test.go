package pool

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRuntimeFilesHoldPython(t *testing.T) {
	files, err := runtimeFiles()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.path)
		if strings.Contains(f.path, "__pycache__") || strings.HasSuffix(f.path, ".pyc") {
			t.Errorf("compiled Python %s is embedded", f.path)
		}
	}
	if !slices.Contains(paths, "python/nexus/__init__.py") {
		t.Errorf("embedded runtimes %v lack python/nexus/__init__.py", paths)
	}
	// Every module of the package that one of its modules imports is
	// embedded beside it (_wire.py, which the others import, came later).
	imports := regexp.MustCompile(`(?m)^\s*from \.(\w*) import \(?\s*(\w+)`)
	for _, f := range files {
		dir, name := path.Split(f.path)
		if dir != "python/nexus/" || !strings.HasSuffix(name, ".py") {
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(string(f.data), -1) {
			module := m[1]
			if module == "" { // from . import _arrays as module
				module = m[2]
			}
			if want := dir + module + ".py"; !slices.Contains(paths, want) {
				t.Errorf("%s imports %s, which is not embedded", f.path, want)
			}
		}
	}
}

func TestExtractRuntime(t *testing.T) {
	files := []runtimeFile{
		{path: "python/nexus/__init__.py", data: []byte("def serve(t): pass\n")},
		{path: "r/nexus.R", data: []byte("serve <- function(t) NULL\n")},
	}
	root := t.TempDir()
	dir, err := extractRuntime(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, runtimeHash(files)); dir != want {
		t.Errorf("extracted to %s, want %s", dir, want)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.path)))
		if err != nil || string(data) != string(f.data) {
			t.Errorf("%s holds %q (%v), want %q", f.path, data, err, f.data)
		}
	}

	// Extracting again reuses the directory; a damaged one is replaced.
	again, err := extractRuntime(root, files)
	if err != nil || again != dir {
		t.Fatalf("second extraction = %s, %v; want %s", again, err, dir)
	}
	damaged := filepath.Join(dir, "r", "nexus.R")
	if err := os.WriteFile(damaged, []byte("oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := extractRuntime(root, files); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(damaged); string(data) != string(files[1].data) {
		t.Errorf("damaged file still holds %q", data)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("root holds %v, want only the runtime directory", names)
	}

	// Other content, other directory.
	changed := slices.Clone(files)
	changed[0].data = []byte("def serve(t): return 1\n")
	other, err := extractRuntime(root, changed)
	if err != nil {
		t.Fatal(err)
	}
	if other == dir {
		t.Errorf("changed runtimes extracted to the same directory %s", dir)
	}
}

func TestPrivateDirRefusesOpenDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(dir); err == nil {
		t.Error("privateDir accepted a directory anyone may write")
	}
	mine := filepath.Join(t.TempDir(), "mine")
	if err := privateDir(mine); err != nil {
		t.Errorf("privateDir(%s): %v", mine, err)
	}
	if err := privateDir(mine); err != nil {
		t.Errorf("privateDir on an existing private directory: %v", err)
	}
}

func TestPoolEnv(t *testing.T) {
	t.Setenv("PYTHONPATH", "/site")
	env := poolEnv("py", 2, "/rt")
	last := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		last[k] = v // exec.Cmd keeps the last value of a key
	}
	want := map[string]string{
		"NEXUS_POOL_IN":     "3",
		"NEXUS_POOL_OUT":    "4",
		"NEXUS_POOL_LANG":   "py",
		"NEXUS_POOL_WORKER": "2",
		"NEXUS_RUNTIME_DIR": "/rt",
		"PYTHONPATH":        "/rt/python:/site",
	}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("%s=%q, want %q", k, last[k], v)
		}
	}
	if _, ok := last["PYTHONUNBUFFERED"]; !ok {
		t.Error("PYTHONUNBUFFERED is not set for a Python pool")
	}
	for _, kv := range mallocTuning(os.Environ()) {
		k, v, _ := strings.Cut(kv, "=")
		if last[k] != v {
			t.Errorf("%s=%q, want %q (mallocTuning)", k, last[k], v)
		}
	}
	rEnv := poolEnv("r", 1, "/rt")
	for _, kv := range rEnv[len(os.Environ()):] {
		if strings.HasPrefix(kv, "PYTHONPATH=") {
			t.Errorf("an R pool gets %s", kv)
		}
	}
}

func TestMallocTuning(t *testing.T) {
	all := []string{"MALLOC_ARENA_MAX=1", "MALLOC_MMAP_THRESHOLD_=1073741824", "MALLOC_TRIM_THRESHOLD_=1073741824"}
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"nothing set", []string{"HOME=/root", "PATH=/bin"}, all},
		{"one set: the others still come", []string{"MALLOC_ARENA_MAX=4"}, all[1:]},
		{"set empty counts as set", []string{"MALLOC_TRIM_THRESHOLD_="}, all[:2]},
		{"all set", []string{"MALLOC_MMAP_THRESHOLD_=1", "MALLOC_TRIM_THRESHOLD_=2", "MALLOC_ARENA_MAX=3"}, nil},
		{"GLIBC_TUNABLES: none", []string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, nil},
		{"GLIBC_TUNABLES empty: glibc's defaults", []string{"GLIBC_TUNABLES="}, nil},
		{"a name that only starts the same", []string{"MALLOC_ARENA_MAXIMUM=9", "XMALLOC_ARENA_MAX=9"}, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mallocTuning(tt.env); !slices.Equal(got, tt.want) {
				t.Errorf("mallocTuning(%q) = %q, want %q", tt.env, got, tt.want)
			}
		})
	}
}
