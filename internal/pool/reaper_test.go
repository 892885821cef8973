//go:build unix

package pool

import (
	"fmt"
	"os"
	"os/exec"
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
			if code := runReaper(r); code != 0 {
				return fmt.Errorf("exit status %d", code)
			}
			return nil
		},
	}
	for name, run := range reapers {
		t.Run(name, func(t *testing.T) {
			kept, forgotten, spared := startGroup(t), startGroup(t), startGroup(t)
			input := fmt.Sprintf("+%d\n+%d\n+1\n+x\n-%d\nnonsense\n", kept, forgotten, forgotten)
			if err := run(input); err != nil {
				t.Fatal(err)
			}
			if !processGone(kept, 5*time.Second) {
				t.Errorf("group %d, watched, outlived its reaper", kept)
			}
			if processGone(forgotten, 200*time.Millisecond) {
				t.Errorf("group %d, forgotten, was killed", forgotten)
			}
			if err := run(fmt.Sprintf("+%d\n=\n", spared)); err != nil {
				t.Fatal(err)
			}
			if processGone(spared, 200*time.Millisecond) {
				t.Errorf("group %d was killed after nexus said goodbye", spared)
			}
		})
	}
}
