//go:build unix

package pool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startGroup starts a sleeping process in a process group of its own and
// returns its pid, which is the group's id.
func startGroup(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd.Process.Pid
}

// Both reapers (the shell script nexus runs, and nexus itself where there
// is no shell) kill the groups they still know at the end of their input,
// forget the ones nexus says are gone, and kill nothing after "=".
func TestReapers(t *testing.T) {
	reapers := map[string]func(input string) error{
		"shell": func(input string) error {
			cmd := exec.Command(reaperShell, "-c", reaperScript)
			cmd.Stdin = strings.NewReader(input)
			out, err := cmd.CombinedOutput()
			if len(out) > 0 {
				return fmt.Errorf("the reaper wrote %q", out)
			}
			return err
		},
		"nexus": func(input string) error {
			r, w, err := os.Pipe()
			if err != nil {
				return err
			}
			go func() { w.WriteString(input); w.Close() }()
			defer r.Close()
			if code := runReaper(r, nil); code != 0 {
				return fmt.Errorf("exit status %d", code)
			}
			return nil
		},
	}
	for name, run := range reapers {
		t.Run(name, func(t *testing.T) {
			kept, forgotten, spared := startGroup(t), startGroup(t), startGroup(t)
			// A morloc program's files: its directory and shared memory go;
			// what does not look like them stays.
			tmp := morlocFiles(t)
			// Files nexus removed itself and said so are forgotten, the
			// others' lines kept whole.
			done := morlocFiles(t)
			input := fmt.Sprintf("+%d\n+%d\n+1\n+x\n-%d\nnonsense\nd%s\ns%s\nd%s\nd%s/.\ns%s/x\nd%s\ns%s\nD%s\nS%s\nD%s/\nS%s_\n",
				kept, forgotten, forgotten, tmp.dir, tmp.basename, tmp.other, tmp.dir, tmp.basename,
				done.dir, done.basename, done.dir, done.basename, tmp.dir, tmp.basename)
			if err := run(input); err != nil {
				t.Fatal(err)
			}
			for _, f := range done.removed {
				if _, err := os.Lstat(f); err != nil {
					t.Errorf("%s, forgotten, was removed: %v", f, err)
				}
			}
			for _, f := range tmp.removed {
				if _, err := os.Lstat(f); !os.IsNotExist(err) {
					t.Errorf("%s outlived the reaper (%v)", f, err)
				}
			}
			for _, f := range tmp.kept {
				if _, err := os.Lstat(f); err != nil {
					t.Errorf("%s, not a morloc file, was removed: %v", f, err)
				}
			}
			if !processGone(kept, 5*time.Second) {
				t.Errorf("group %d, watched, outlived its reaper", kept)
			}
			if processGone(forgotten, 200*time.Millisecond) {
				t.Errorf("group %d, forgotten, was killed", forgotten)
			}
			tmp = morlocFiles(t)
			if err := run(fmt.Sprintf("+%d\nd%s\ns%s\n=\n", spared, tmp.dir, tmp.basename)); err != nil {
				t.Fatal(err)
			}
			if processGone(spared, 200*time.Millisecond) {
				t.Errorf("group %d was killed after nexus said goodbye", spared)
			}
			for _, f := range tmp.removed {
				if _, err := os.Lstat(f); err != nil {
					t.Errorf("%s was removed after nexus said goodbye: %v", f, err)
				}
			}
		})
	}
}

// morlocTestFiles are files like a morloc program's, for the reapers.
type morlocTestFiles struct {
	dir, basename, other string
	removed, kept        []string
}

// morlocFiles makes a temporary directory named as nexus names a morloc
// program's, with a file in it, shared-memory files of a basename, and a
// directory that is not a morloc program's.
func morlocFiles(t *testing.T) morlocTestFiles {
	t.Helper()
	base := t.TempDir()
	f := morlocTestFiles{
		dir:      filepath.Join(base, "morloc.abc123"),
		basename: fmt.Sprintf("morloc-%d-%x", os.Getpid(), time.Now().UnixNano()),
		other:    filepath.Join(base, "mine"),
	}
	for _, d := range []string{f.dir, f.other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "pipe-py"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.removed = []string{f.dir}
	f.kept = []string{filepath.Join(f.other, "pipe-py")}
	if _, err := os.Stat(shmDir); err == nil {
		for _, name := range []string{f.basename + "_0", f.basename + "_1", f.basename + ".registry"} {
			path := filepath.Join(shmDir, name)
			if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(path) })
			f.removed = append(f.removed, path)
		}
	}
	return f
}

// Only names like those nexus gives a morloc program's files may be
// removed by the reaper.
func TestReaperFile(t *testing.T) {
	tests := []struct {
		kind byte
		name string
		ok   bool
	}{
		{'d', "/tmp/morloc.Ab12Cd", true},
		{'d', "/home/u/.cache/tmp/morloc.1", true},
		{'d', "/tmp/morloc.", false},
		{'d', "/morloc.x", false},
		{'d', "tmp/morloc.x", false},
		{'d', "/tmp/morloc.x/..", false},
		{'d', "/tmp/../morloc.x", false},
		{'d', "/tmp//morloc.x", false},
		{'d', "/tmp/morloc.*", false},
		{'d', "/tmp/mine", false},
		{'d', "/", false},
		{'s', "morloc-123-0123456789abcdef", true},
		{'s', "morloc-a_b-C", true},
		{'s', "morloc-", false},
		{'s', "morloc-1/../x", false},
		{'s', "morloc-1*", false},
		{'s', "other-1", false},
		{'x', "morloc-1", false},
	}
	for _, tt := range tests {
		if got := reaperFile(tt.kind, tt.name); got != tt.ok {
			t.Errorf("reaperFile(%c, %q) = %v, want %v", tt.kind, tt.name, got, tt.ok)
		}
	}
}

// The shell reaper runs rm once for every file still there, and not at all
// when nexus has removed them itself (Set.Abandon): it forks nothing
// beside a nexus that is exiting.
func TestShellReaperRmOnce(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "rm-calls")
	fake := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec /bin/rm \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "rm"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(input string) {
		t.Helper()
		cmd := exec.Command(reaperShell, "-c", reaperScript)
		cmd.Env = append(os.Environ(), "PATH="+bin)
		cmd.Stdin = strings.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("the reaper: %v %q", err, out)
		}
	}
	gone, left := morlocFiles(t), morlocFiles(t)
	for _, f := range gone.removed {
		if err := os.RemoveAll(f); err != nil {
			t.Fatal(err)
		}
	}
	run(fmt.Sprintf("d%s\ns%s\n", gone.dir, gone.basename))
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("rm ran with nothing left to remove: %q", b)
	}
	run(fmt.Sprintf("d%s\ns%s\nd%s\ns%s\n", gone.dir, gone.basename, left.dir, left.basename))
	b, err := os.ReadFile(calls)
	if err != nil || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("rm ran %q (%v), want once", b, err)
	}
	for _, f := range left.removed {
		if !strings.Contains(string(b), f) {
			t.Errorf("rm was not given %s: %q", f, b)
		}
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s outlived the reaper (%v)", f, err)
		}
	}
}
