// Package morlochome owns the morloc runtime that an MCP Bundle carries
// beside a morloc program (docs/bundles.md): where it sits in the
// program's directory, laid out as morloc's own home
// (~/.local/share/morloc: lib/, opt/), and the environment that makes the
// program's pools load it from there rather than from the machine's morloc,
// which may be missing or another version.
package morlochome

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Dir is the bundled morloc home, relative to the program's directory.
// nexus runs every morloc pool in that directory (docs/spec.md §8), so the
// pool sources a bundle rewrites name it by this relative path.
const Dir = "morloc-home"

// libraryPathVar is the variable the dynamic loader searches before a
// library's own run path: a pool's libmorloc.so is found in the bundle even
// where the run path morloc wrote (the builder's home) exists.
func libraryPathVar() string {
	if runtime.GOOS == "darwin" {
		return "DYLD_LIBRARY_PATH"
	}
	return "LD_LIBRARY_PATH"
}

// Env is env with the program's bundled morloc libraries first on the
// loader's search path, when programDir holds a bundled morloc home (its
// lib directory); env itself otherwise. The variable's last value in env is
// the one kept, after the bundle's directory.
func Env(programDir string, env []string) []string {
	lib, err := filepath.Abs(filepath.Join(programDir, Dir, "lib"))
	if err != nil {
		return env
	}
	if st, err := os.Stat(lib); err != nil || !st.IsDir() {
		return env
	}
	name := libraryPathVar()
	old := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			old = v
		}
	}
	if old != "" {
		lib += string(os.PathListSeparator) + old
	}
	return append(env, name+"="+lib)
}
