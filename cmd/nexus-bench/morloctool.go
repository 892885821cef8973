package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// morlocToolchain is morloc 0.69.0 as scripts/install-morloc.sh installs
// it (make deps): the compiler, its C nexus, and the runtime the pools load.
type morlocToolchain struct {
	compiler, nexus, runtime string
}

func findMorloc() (morlocToolchain, string) {
	home, _ := os.UserHomeDir()
	tc := morlocToolchain{
		compiler: "/opt/morloc-0.69.0/bin/morloc",
		nexus:    filepath.Join(home, ".local", "bin", "morloc-nexus"),
		runtime:  filepath.Join(home, ".local", "share", "morloc"),
	}
	var missing []string
	for _, f := range []string{tc.compiler, tc.nexus, filepath.Join(tc.runtime, "lib", "libmorloc.so")} {
		if !fileExists(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return tc, "morloc 0.69.0 is not installed (no " + strings.Join(missing, ", ") + "): `make deps` builds it (scripts/install-morloc.sh, about 8 minutes)"
	}
	return tc, ""
}

// path is the PATH both nexuses run the program under: the compiler,
// morloc-nexus, then Debian's python3, for which morloc's Python runtime
// was built, before any other.
func (tc morlocToolchain) path() string {
	return strings.Join([]string{filepath.Dir(tc.compiler), filepath.Dir(tc.nexus), "/usr/bin", "/bin"}, ":")
}

// compileMorloc compiles the bench program's sources (src) with morloc
// 0.69.0 into a cache directory keyed by the sources and the toolchain,
// once: morloc writes the directory's absolute path into the launcher,
// and its generated pools (which embed morloc's runtime code) are never
// committed. It returns the launcher, `<dir>/nexus`.
func compileMorloc(src string, tc morlocToolchain) (string, error) {
	key, err := morlocKey(src, tc)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "nexus-bench", "morloc-0.69.0")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(root, filepath.Base(src)+"-"+key)
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	launcher := filepath.Join(dir, "nexus")
	done := filepath.Join(dir, ".compiled")
	if fileExists(done) {
		return launcher, nil
	}
	progress("morloc pools: compiling %s with morloc 0.69.0 into %s", src, dir)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.compiler, "make", "-o", "nexus", "main.loc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+tc.path())
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("morloc make in %s: %v\n%s", dir, err, lastLines(string(out), 15))
	}
	if !fileExists(launcher) {
		os.RemoveAll(dir)
		return "", fmt.Errorf("morloc make wrote no launcher in %s", dir)
	}
	return launcher, os.WriteFile(done, nil, 0o644)
}

// morlocKey hashes the sources and what a compiled program depends on in
// the toolchain.
func morlocKey(src string, tc morlocToolchain) (string, error) {
	h := sha256.New()
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(data))
		h.Write(data)
	}
	for _, f := range []string{tc.compiler, tc.nexus, filepath.Join(tc.runtime, "lib", "libmorloc.so")} {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", f, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
