package pool

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// runtimeFS holds the language runtimes pools import to speak the protocol,
// one directory per language (python/nexus/__init__.py, ...). They are
// embedded so that the nexus binary is all a user installs.
//
//go:embed all:runtime
var runtimeFS embed.FS

// runtimeFile is one file of the embedded runtimes.
type runtimeFile struct {
	path string // slash-separated, relative to the runtime directory
	data []byte
}

// runtimeFiles lists the embedded runtimes, leaving out what a developer's
// Python may have left beside the sources.
func runtimeFiles() ([]runtimeFile, error) {
	var files []runtimeFile
	err := fs.WalkDir(runtimeFS, "runtime", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if base == "__pycache__" || (strings.HasPrefix(base, ".") && name != "runtime") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".pyc") {
			return nil
		}
		data, err := runtimeFS.ReadFile(name)
		if err != nil {
			return err
		}
		files = append(files, runtimeFile{path: strings.TrimPrefix(name, "runtime/"), data: data})
		return nil
	})
	return files, err // WalkDir visits in lexical order, so the list is stable
}

// runtimeHash names a set of runtime files by their content.
func runtimeHash(files []runtimeFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.path, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// RuntimeDir returns the directory holding the extracted language runtimes,
// extracting them on the first call: <user cache>/nexus/runtime/<hash>, or a
// private directory under the system's temporary directory when the cache
// cannot be written.
func RuntimeDir() (string, error) { return runtimeDir() }

var runtimeDir = sync.OnceValues(func() (string, error) {
	files, err := runtimeFiles()
	if err != nil {
		return "", fmt.Errorf("reading the embedded runtimes: %w", err)
	}
	var errs []error
	if cache, err := os.UserCacheDir(); err == nil {
		dir, err := extractRuntime(filepath.Join(cache, "nexus", "runtime"), files)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	tmp := filepath.Join(os.TempDir(), fmt.Sprintf("nexus-%d", os.Getuid()))
	if err := privateDir(tmp); err != nil {
		return "", errors.Join(append(errs, err)...)
	}
	dir, err := extractRuntime(filepath.Join(tmp, "runtime"), files)
	if err != nil {
		return "", errors.Join(append(errs, err)...)
	}
	return dir, nil
})

// extractRuntime makes root/<hash> hold exactly files and returns its path.
// The directory appears whole or not at all: it is written under a temporary
// name and renamed into place, so concurrent nexus processes never see half
// of it.
func extractRuntime(root string, files []runtimeFile) (string, error) {
	dir := filepath.Join(root, runtimeHash(files))
	if holds(dir, files) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("extracting the runtimes: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".extract-")
	if err != nil {
		return "", fmt.Errorf("extracting the runtimes: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, f := range files {
		name := filepath.Join(tmp, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return "", fmt.Errorf("extracting the runtimes: %w", err)
		}
		if err := os.WriteFile(name, f.data, 0o644); err != nil {
			return "", fmt.Errorf("extracting the runtimes: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return "", fmt.Errorf("extracting the runtimes: %w", err)
	}
	if err := os.Rename(tmp, dir); err == nil {
		return dir, nil
	}
	if holds(dir, files) {
		return dir, nil // another nexus got there first
	}
	// dir exists but was damaged: move it aside, then put ours in its place.
	trash := fmt.Sprintf("%s.damaged-%s", dir, rand.Text()[:8])
	if err := os.Rename(dir, trash); err != nil {
		return "", fmt.Errorf("replacing the damaged runtimes in %s: %w", dir, err)
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("extracting the runtimes: %w", err)
	}
	return dir, nil
}

// holds reports whether dir has every file with the right content.
func holds(dir string, files []runtimeFile) bool {
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.path)))
		if err != nil || !bytes.Equal(data, f.data) {
			return false
		}
	}
	return true
}

// Environ is the environment nexus gives worker number worker (from 1) of a
// pool of lang, runtimeDir being RuntimeDir(): for a program that starts a
// bench pool as nexus would, without nexus (cmd/nexus-bench's relay).
func Environ(lang string, worker int, runtimeDir string) []string {
	return poolEnv(lang, worker, runtimeDir)
}

// poolEnv is the environment of a pool process (docs/internals.md, "The
// process"): nexus's own, plus the protocol's variables, plus what the
// language needs to find its runtime.
func poolEnv(lang string, worker int, runtimeDir string) []string {
	env := append(os.Environ(),
		"NEXUS_POOL_IN=3",
		"NEXUS_POOL_OUT=4",
		"NEXUS_POOL_LANG="+lang,
		fmt.Sprintf("NEXUS_POOL_WORKER=%d", worker),
		"NEXUS_RUNTIME_DIR="+runtimeDir,
	)
	switch lang {
	case "py":
		pythonPath := filepath.Join(runtimeDir, "python")
		if old := os.Getenv("PYTHONPATH"); old != "" {
			pythonPath += string(os.PathListSeparator) + old
		}
		env = append(env, "PYTHONPATH="+pythonPath, "PYTHONUNBUFFERED=1")
	}
	env = append(env, mallocTuning(env)...)
	return env // exec.Cmd keeps the last of duplicate keys
}

// mallocTuning is the glibc malloc settings a pool gets beside env, so
// that a large call's buffers are reused by the next one instead of
// handed back to the kernel and faulted in anew, each page at ~20 µs on
// a VM (docs/performance.md, "Fresh memory"): buffers up to the frame
// limit come from the heap (by default, one over 32 MiB at most is a fresh
// mmap every time), the heap keeps up to a frame's worth of free memory
// (by default it gives back all over 128 KiB), and every thread allocates
// from the one heap (a thread's own arena cannot hold a block over 64 MiB
// and maps each afresh). The price: a pool keeps the memory of its
// largest call, up to 1 GiB free, until it exits, and concurrent calls of
// a C++ pool share one allocator lock.
//
// Each variable the environment sets itself is left as it is, and with
// GLIBC_TUNABLES set (even empty) none is added: a user who tunes glibc,
// or wants its defaults back (GLIBC_TUNABLES=), has the last word.
func mallocTuning(env []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	if set["GLIBC_TUNABLES"] {
		return nil
	}
	frame := strconv.Itoa(MaxFrameSize)
	var out []string
	for _, kv := range [][2]string{
		{"MALLOC_ARENA_MAX", "1"},
		{"MALLOC_MMAP_THRESHOLD_", frame},
		{"MALLOC_TRIM_THRESHOLD_", frame},
	} {
		if !set[kv[0]] {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out
}
