// Package morlocbuild owns the real morloc 0.69.0 as this repository's
// tests and bench driver meet it: where `make deps`
// (scripts/install-morloc.sh) installs its compiler, C nexus and runtime,
// and compiling a morloc program with it into a cache directory, once.
// nexus itself never compiles a program; only tests and cmd/nexus-bench
// import this package.
package morlocbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// CompilerEnv names another morloc 0.69.0 compiler than the installed one.
const CompilerEnv = "NEXUS_MORLOC069"

// Toolchain is morloc 0.69.0 as installed.
type Toolchain struct {
	Compiler string // /opt/morloc-0.69.0/bin/morloc, or $NEXUS_MORLOC069
	Nexus    string // $HOME/.local/bin/morloc-nexus, which a launcher execs
	Runtime  string // $HOME/.local/share/morloc: libmorloc, pymorloc, the C++ headers the pools load
}

// Installed returns the toolchain where make deps puts it, and an error
// naming each part that is missing.
func Installed() (Toolchain, error) {
	home, _ := os.UserHomeDir()
	tc := Toolchain{
		Compiler: "/opt/morloc-0.69.0/bin/morloc",
		Nexus:    filepath.Join(home, ".local", "bin", "morloc-nexus"),
		Runtime:  filepath.Join(home, ".local", "share", "morloc"),
	}
	if c := os.Getenv(CompilerEnv); c != "" {
		tc.Compiler = c
	}
	var missing []string
	for _, f := range []string{tc.Compiler, tc.Nexus, filepath.Join(tc.Runtime, "lib", "libmorloc.so")} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return tc, fmt.Errorf("morloc 0.69.0 is not installed (no %s): make deps builds it (scripts/install-morloc.sh, about 8 minutes)", strings.Join(missing, ", "))
	}
	return tc, nil
}

// Path is the PATH under which morloc compiles and its programs run (under
// nexus and under morloc's own nexus): the compiler, morloc-nexus, then
// Debian's python3 and Rscript, for which pymorloc and librmorloc were
// built, before any other (a pyenv shim would find another Python).
func (tc Toolchain) Path() string {
	return strings.Join([]string{filepath.Dir(tc.Compiler), filepath.Dir(tc.Nexus), "/usr/bin", "/bin"}, string(os.PathListSeparator))
}

// CompileTimeout bounds one `morloc make`: generous, since it runs g++
// for a C++ pool, on a machine that may be busy with other tests.
const CompileTimeout = 10 * time.Minute

// Compile compiles the program whose sources are the files of src
// (main.loc and what it imports; README.md and subdirectories are left
// out) into <cacheRoot>/<base of src>-<key>, and returns that directory:
// its launcher is <dir>/nexus. The key hashes the sources and the
// toolchain's files, so a change to either compiles again, and nothing
// else does. The directory is the program's home for good: morloc writes
// its absolute path into the launcher's manifest, so it is compiled in
// place, never moved. A lock file beside it makes processes that compile
// the same program at once (go test runs packages side by side) wait for
// one compilation; a compilation that failed or was cut short leaves no
// mark, and the next call compiles again. compiling, when not nil, is
// called with the directory just before a compilation begins.
func (tc Toolchain) Compile(src, cacheRoot string, compiling func(dir string)) (string, error) {
	names, err := sources(src)
	if err != nil {
		return "", fmt.Errorf("morloc build of %s: %w", src, err)
	}
	key, err := tc.key(src, names)
	if err != nil {
		return "", fmt.Errorf("morloc build of %s: %w", src, err)
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("morloc build cache: %w", err)
	}
	dir := filepath.Join(cacheRoot, filepath.Base(src)+"-"+key)
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("morloc build cache: %w", err)
	}
	defer lock.Close() // closing the file releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("morloc build cache: locking %s: %w", lock.Name(), err)
	}
	done := filepath.Join(dir, ".compiled")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if compiling != nil {
		compiling(dir)
	}
	if err := tc.make(src, names, dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("compiling %s with morloc 0.69.0 in %s: %w", src, dir, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("morloc build cache: %w", err)
	}
	return dir, nil
}

// sources are the files of src that a compilation copies.
func sources(src string) ([]string, error) {
	entries, err := os.ReadDir(src) // sorted by name, so the key is stable
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "README.md" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no source files")
	}
	return names, nil
}

// key hashes the program's sources (names, in src) and, by size and time,
// the toolchain's files a compiled program depends on: the compiler, the C
// nexus and the runtime's libraries and headers.
func (tc Toolchain) key(src string, names []string) (string, error) {
	h := sha256.New()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	stamp := []string{tc.Compiler, tc.Nexus}
	for _, sub := range []string{"lib", "include"} {
		entries, _ := os.ReadDir(filepath.Join(tc.Runtime, sub))
		for _, e := range entries {
			stamp = append(stamp, filepath.Join(tc.Runtime, sub, e.Name()))
		}
	}
	for _, f := range stamp {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", f, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// make copies the sources (names, in src) into a fresh dir and runs
// `morloc make` there.
func (tc Toolchain) make(src string, names []string, dir string) error {
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		if err := copyFile(filepath.Join(src, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), CompileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.Compiler, "make", "-o", "nexus", "main.loc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+tc.Path())
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("morloc make took more than %v\n%s", CompileTimeout, lastLines(out, 15))
	}
	if err != nil {
		return fmt.Errorf("morloc make: %v\n%s", err, lastLines(out, 15))
	}
	if _, err := os.Stat(filepath.Join(dir, "nexus")); err != nil {
		return fmt.Errorf("morloc make wrote no launcher (%v)\n%s", err, lastLines(out, 15))
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lastLines is the end of a compiler's output: its error is there.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
