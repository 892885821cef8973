package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// compileMorlocBench compiles testdata/morloc-0.69/bench (into the test
// cache) and returns its launcher and the environment both run with.
func compileMorlocBench(t *testing.T) (string, []string) {
	t.Helper()
	tc := testenv.Morloc(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir, err := tc.Compile("../../testdata/morloc-0.69/bench", filepath.Join(cache, "nexus-tests", "morloc-0.69.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "nexus"), append(os.Environ(), "PATH="+tc.Path())
}

// The morloc relay starts the command's real pool, answers each call with
// the pool's own result, and when its stdin ends leaves no process, socket
// directory or shared-memory volume behind; a command it cannot relay is
// refused.
func TestMorlocRelay(t *testing.T) {
	testenv.Long(t)
	launcher, env := compileMorlocBench(t)
	for _, tool := range []string{"addPy", "addCpp"} {
		t.Run(tool, func(t *testing.T) {
			p, err := startRelay(relayMorloc, []string{launcher, tool}, env, "")
			if err != nil {
				t.Fatal(err)
			}
			p.names = [2]string{"_1", "_2"}
			for i, c := range [][2]int{{1, 2}, {-7, 1000}, {123456, 654321}} {
				id := 10 + i
				reply, err := p.call(id, tool, c[0], c[1])
				if err != nil {
					t.Fatalf("%s(%d, %d): %v", tool, c[0], c[1], err)
				}
				if !textIs(reply, strconv.Itoa(c[0]+c[1])) || !strings.Contains(string(reply), `"id":`+strconv.Itoa(id)+`,`) {
					t.Errorf("%s(%d, %d): %s", tool, c[0], c[1], reply)
				}
			}
			r, err := p.measure(tool, 20, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if r.lat.n != 20 || r.lat.p50 <= 0 {
				t.Errorf("measure: %+v", r)
			}
			relay := p.cmd.Process.Pid
			pools := children(relay)
			if len(pools) == 0 {
				t.Fatal("the relay runs no pool")
			}
			for _, pid := range pools {
				pools = append(pools, children(pid)...) // the workers a pool forks
			}
			p.stop()
			time.Sleep(100 * time.Millisecond) // killed workers are reaped by init
			for _, pid := range pools {
				if cl := cmdline(pid); cl != "" {
					t.Errorf("pool process %d (%s) outlived the relay", pid, cl)
				}
			}
			if left, _ := filepath.Glob("/dev/shm/morloc-" + strconv.Itoa(relay) + "-relay*"); len(left) > 0 {
				t.Errorf("shared memory left behind: %v", left)
			}
		})
	}
	p, err := startRelay(relayMorloc, []string{launcher, "echoPy"}, env, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.call(1, "echoPy", 1, 2); err == nil {
		t.Error("the relay answered echoPy, a command of one argument")
	}
	p.stop()
}
