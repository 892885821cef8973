package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Robustness tests on the programs morloc 0.69.0 compiled: big
// values through shared memory, pools that die or hang, nexus killed, and
// arguments refused before any pool sees them.

// morlocQuick is a fast call of each program and its answer.
var morlocQuick = map[string]struct {
	cmd  string
	args map[string]any
	want string
}{
	"py":    {"addInt", map[string]any{"_1": 2, "_2": 3}, "5"},
	"r":     {"addInt", map[string]any{"_1": 2, "_2": 3}, "5"},
	"cpp":   {"addInt", map[string]any{"_1": 2, "_2": 3}, "5"},
	"cross": {"pyOfCpp", map[string]any{"_1": []float64{1, 2}}, "5"},
}

// quick makes the program's fast call and fails the test unless it answers.
func (p *morlocProg) quick(t *testing.T, s *server, id int, when string) {
	t.Helper()
	q := morlocQuick[p.name]
	text, isErr := s.callTool(id, q.cmd, q.args)
	if isErr || text != q.want {
		t.Fatalf("%s: %s gave %q (isError %v), want %s", when, q.cmd, text, isErr, q.want)
	}
}

// echoCommand takes a [Real] and returns it unchanged.
func echoCommand(name string) string {
	if name == "cross" {
		return "crossEcho" // through Python and C++
	}
	return "echoReals"
}

// A 1M-element [Real] goes to each program's pools and comes back (8 MB
// of voidstar: past 64 KiB, so the pool answers with a pointer into shared
// memory); and a 100 MB one through the C++ pool. The shared-memory
// volumes the pool wrote are checked to be there and big enough.
func TestMorlocLargeLists(t *testing.T) {
	testenv.Long(t)
	type size struct {
		prog string
		n    int
	}
	sizes := []size{{"py", 1_000_000}, {"r", 1_000_000}, {"cpp", 1_000_000}, {"cross", 1_000_000}, {"cpp", 12_500_000}}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%s/%d", sz.prog, sz.n), func(t *testing.T) {
			p := compileMorloc(t, sz.prog)
			xs, arg := reals(sz.n)
			// 100 MB each way takes a race-detector nexus about a minute on
			// two loaded CPUs: nexus's own call timeout (its default, said
			// here) bounds the call, and answers isError when it passes, so
			// the test waits that long and a little more for the reply.
			const callTimeout = 5 * time.Minute
			s := p.startMCP(t, "--max-line", "400000000", "--timeout", callTimeout.String())
			cmd := echoCommand(p.name)
			b := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{"_1":`, cmd)
			b = append(append(b, arg...), "}}}"...)
			sent := time.Now()
			s.send(string(b))
			line, ok := s.recvWithin(callTimeout + 30*time.Second)
			if !ok {
				t.Fatalf("%s of %d Reals: no reply within %s, though nexus's call timeout is %s", cmd, sz.n, callTimeout+30*time.Second, callTimeout)
			}
			t.Logf("%s of %d Reals: the reply came after %s", cmd, sz.n, time.Since(sent).Round(time.Millisecond))
			text, isErr := toolText(t, decode(t, line))
			if isErr {
				t.Fatalf("%s of %d Reals: isError %s", cmd, sz.n, brief(text))
			}
			var got []float64
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("%s of %d Reals: %v in %s", cmd, sz.n, err, brief(text))
			}
			if len(got) != len(xs) {
				t.Fatalf("%s: %d Reals back, sent %d", cmd, len(got), len(xs))
			}
			for i := range xs {
				if got[i] != xs[i] {
					t.Fatalf("%s: element %d is %v, sent %v", cmd, i, got[i], xs[i])
				}
			}
			// The volumes stay until nexus exits: their size says the
			// result went through shared memory.
			var basename string
			for pid := range p.poolProcesses(s.cmd.Process.Pid) {
				basename = launchOf(t, pid).basename
				break
			}
			var total int64
			for _, f := range shmFiles(basename) {
				if st, err := os.Stat(f); err == nil {
					total += st.Size()
				}
			}
			if total < int64(8*sz.n) {
				t.Errorf("shared memory of %s: %d bytes in %v, want at least the result's %d", basename, total, shmFiles(basename), 8*sz.n)
			}
			p.quick(t, s, 2, "after the large list")
		})
	}
}

// topPool is the first process of a pool (not one of the workers it
// forked): the descendant of nexus, running the pool of lang, whose parent
// runs no pool of the program.
func (p *morlocProg) topPool(t *testing.T, nexusPid int, lang string) int {
	t.Helper()
	marker := map[string]string{"py": "pool.py", "r": "pool.R", "cpp": "pool-cpp.out"}[lang]
	var found int
	ok := waitFor(20*time.Second, func() bool {
		procs := p.poolProcesses(nexusPid)
		for pid, cl := range procs {
			if strings.Contains(cl, marker) {
				if _, parentIsPool := procs[parentOf(pid)]; !parentIsPool {
					found = pid
					return true
				}
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no %s pool among nexus's descendants %v", lang, descendants(nexusPid))
	}
	return found
}

func parentOf(pid int) int {
	f, err := testenv.ProcStat(pid)
	if err != nil {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// The pool each program's tests kill: the one running the command (for the
// cross-language program the C++ pool, which Python calls).
var morlocVictim = map[string]string{"py": "py", "r": "r", "cpp": "cpp", "cross": "cpp"}

// A pool killed while idle is started again and the next call works; one
// killed during a call fails that call with isError, and the next call
// works; a worker that exits mid-call (die) likewise.
func TestMorlocKilledPoolRecovers(t *testing.T) {
	testenv.Long(t)
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		s := p.startMCP(t)
		p.quick(t, s, 1, "before")
		lang := morlocVictim[name]

		// Idle. The next call is made once the pool runs again: a pool
		// that dies again soon after is restarted after a backoff
		// (docs/guarantees.md), and a call meanwhile fails
		// at once, by design.
		victim := p.topPool(t, s.cmd.Process.Pid, lang)
		known := p.poolProcesses(s.cmd.Process.Pid)
		syscall.Kill(victim, syscall.SIGKILL)
		p.waitRestarted(t, s.cmd.Process.Pid, lang, known)
		p.quick(t, s, 2, "after the idle pool was killed")

		// During a call.
		s.sendCall(3, "sleepFor", map[string]any{"_1": 30})
		time.Sleep(time.Second) // the call reaches the pool
		victim = p.topPool(t, s.cmd.Process.Pid, lang)
		known = p.poolProcesses(s.cmd.Process.Pid)
		syscall.Kill(victim, syscall.SIGKILL)
		line, ok := s.recvWithin(20 * time.Second)
		if !ok {
			t.Fatal("no reply within 20s to the call whose pool was killed")
		}
		if text, isErr := toolText(t, decode(t, line)); !isErr {
			t.Errorf("the call whose pool was killed: %q, want isError", text)
		}
		p.waitRestarted(t, s.cmd.Process.Pid, lang, known)
		p.quick(t, s, 4, "after the pool was killed during a call")

		if name == "cross" {
			return
		}
		// The worker exits mid-call: the connection closes with no reply.
		if text, isErr := s.callTool(5, "die", map[string]any{"_1": 1}); !isErr {
			t.Errorf("die: %q, want isError", text)
		}
		p.quick(t, s, 6, "after a worker died")
	})
}

// waitRestarted waits until a new process runs lang's pool: one that is
// not among known (the pool processes before the kill, so not a worker the
// killed process had forked, which outlives it for a moment) and is no
// fork of another pool process.
func (p *morlocProg) waitRestarted(t *testing.T, nexusPid int, lang string, known map[int]string) {
	t.Helper()
	marker := map[string]string{"py": "pool.py", "r": "pool.R", "cpp": "pool-cpp.out"}[lang]
	if !waitFor(20*time.Second, func() bool {
		procs := p.poolProcesses(nexusPid)
		for pid, cl := range procs {
			_, old := known[pid]
			_, forked := procs[parentOf(pid)]
			if !old && !forked && strings.Contains(cl, marker) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the %s pool was not started again within 20s of being killed: %v", lang, p.poolProcesses(nexusPid))
	}
}

func (p *morlocProg) topPoolOrZero(nexusPid int, lang string) int {
	marker := map[string]string{"py": "pool.py", "r": "pool.R", "cpp": "pool-cpp.out"}[lang]
	procs := p.poolProcesses(nexusPid)
	for pid, cl := range procs {
		if _, parentIsPool := procs[parentOf(pid)]; strings.Contains(cl, marker) && !parentIsPool {
			return pid
		}
	}
	return 0
}

// A call that hangs ends with isError when its timeout passes, and the
// next call works: morloc pools have no cancel message, so the running
// function is left to finish (or is stopped with its pool) while the pool
// serves other calls.
func TestMorlocHungCallRecovers(t *testing.T) {
	testenv.Long(t)
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		// The timeout leaves the next call time to wait for a pool
		// started again (R takes seconds on a loaded machine).
		s := p.startMCP(t, "--timeout", "10s")
		p.quick(t, s, 1, "before")
		start := time.Now()
		text, isErr := s.callTool(2, "sleepFor", map[string]any{"_1": 600})
		if !isErr || !strings.Contains(text, "timed out") {
			t.Errorf("sleepFor 600 with --timeout 10s: %q (isError %v), want a timeout", text, isErr)
		}
		if d := time.Since(start); d > 40*time.Second {
			t.Errorf("the timeout came after %s", d)
		}
		p.quick(t, s, 3, "after the hung call")
		text, isErr = s.callTool(4, "sleepFor", map[string]any{"_1": 0.5})
		if isErr || text != "0.5" {
			t.Errorf("sleepFor 0.5 after the hung call: %q (isError %v)", text, isErr)
		}
	})
}

// However nexus ends, SIGKILL included, no pool process, socket, temporary
// directory or /dev/shm volume of the program is left behind.
func TestMorlocNoLeftovers(t *testing.T) {
	testenv.Long(t)
	ends := []struct {
		name string
		end  func(s *server)
	}{
		{"stdin closed", func(s *server) { s.stdin.Close() }},
		{"SIGTERM", func(s *server) { s.cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGKILL", func(s *server) { s.cmd.Process.Kill() }},
	}
	big := map[string]struct {
		cmd  string
		args map[string]any
	}{
		"py": {"bigText", map[string]any{"_1": 200000}}, "r": {"bigText", map[string]any{"_1": 200000}},
		"cpp": {"bigText", map[string]any{"_1": 200000}}, "cross": {"crossRange", map[string]any{"_1": 20000}},
	}
	langs := map[string][]string{"py": {"py"}, "r": {"r"}, "cpp": {"cpp"}, "cross": {"py", "cpp", "r"}}
	for _, name := range morlocPrograms() {
		for _, end := range ends {
			t.Run(name+"/"+end.name, func(t *testing.T) {
				p := compileMorloc(t, name)
				s := p.startMCPReady(t)
				pid := s.cmd.Process.Pid
				if text, isErr := s.callTool(1, big[name].cmd, big[name].args); isErr {
					t.Fatalf("%s: %s", big[name].cmd, brief(text))
				}
				p.quick(t, s, 2, "before the end")
				// Every pool of the program runs (a cross-language program
				// starts them all), all in one tmpdir with one basename.
				var launch morlocLaunch
				for i, lang := range langs[name] {
					l := launchOf(t, p.topPool(t, pid, lang))
					if err := statErr(l.socket); err != nil {
						t.Errorf("the %s pool's socket: %v", lang, err)
					}
					if i > 0 && (l.tmpdir != launch.tmpdir || l.basename != launch.basename) {
						t.Errorf("pools of one program in %s (%s) and %s (%s)", launch.tmpdir, launch.basename, l.tmpdir, l.basename)
					}
					launch = l
				}
				if len(shmFiles(launch.basename)) == 0 {
					t.Fatalf("no /dev/shm/%s_* volume after a result over 64 KiB", launch.basename)
				}
				kids := descendants(pid)
				end.end(s)
				select {
				case <-s.done:
				case <-time.After(30 * time.Second):
					t.Fatal("nexus did not exit")
				}
				assertNothingLeft(t, pid, kids, map[morlocLaunch]bool{launch: true})
			})
		}
	}
}

// assertNothingLeft waits, once nexus (pid) has exited, until none of kids
// runs, nor any process started with one of the launches' shared-memory
// basenames, and no launch's socket, temporary directory or /dev/shm
// volume is there; what is left after 30 s fails the test.
func assertNothingLeft(t *testing.T, pid int, kids map[int]string, launches map[morlocLaunch]bool) {
	t.Helper()
	waitGone(t, kids)
	left := map[string]bool{}
	waitFor(30*time.Second, func() bool {
		clear(left)
		for l := range launches {
			for _, f := range append([]string{l.socket, l.tmpdir}, shmFiles(l.basename)...) {
				if statErr(f) == nil {
					left[f] = true
				}
			}
			for p, cl := range processesNaming(l.basename) {
				left[fmt.Sprintf("process %d (%s)", p, cl)] = true
			}
		}
		// Every basename nexus makes names its pid: one this test did not
		// see (a process started just before the end) is found too.
		more, _ := filepath.Glob(fmt.Sprintf("/dev/shm/morloc-%d-*", pid))
		for _, f := range more {
			left[f] = true
		}
		return len(left) == 0
	})
	if len(left) > 0 {
		t.Errorf("left behind once nexus had exited: %s", strings.Join(slices.Sorted(maps.Keys(left)), ", "))
	}
}

// processesNaming are the live processes whose command line holds s.
func processesNaming(s string) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cl), s) && testenv.Running(p) {
			out[p] = strings.ReplaceAll(strings.TrimSuffix(string(cl), "\x00"), "\x00", " ")
		}
	}
	return out
}

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

// A wrong-typed argument, and an Int beyond 32 bits (a morloc 0.69 Int is
// an i4), is refused by nexus itself: -32602 over MCP naming the tool and
// the argument, a clear CLI error; no pool sees it (a pool's worker would
// abort on a msgpack value of the wrong type, and be replaced: the pool's
// processes stay the same ones).
func TestMorlocRefusesWrongTypes(t *testing.T) {
	type bad struct {
		cmd, arg string
		args     map[string]any
	}
	oneLang := []bad{
		{"addInt", "_1", map[string]any{"_1": "two", "_2": 1}},
		{"addInt", "_1", map[string]any{"_1": 2147483648, "_2": 1}},
		{"addInt", "_2", map[string]any{"_1": 1, "_2": -2147483649}},
		{"addInt", "_1", map[string]any{"_1": 1.5, "_2": 1}},
		{"older", "_2", map[string]any{"_1": 1, "_2": map[string]any{"name": "x", "age": "old", "height": 1}}},
		{"older", "_2", map[string]any{"_1": 1, "_2": map[string]any{"name": "x", "height": 1}}},
		{"echoReals", "_1", map[string]any{"_1": []any{1, "x"}}},
		{"safeHead", "_1", map[string]any{"_1": []any{2147483648}}},
		{"greet", "_1", map[string]any{"_1": 5}},
	}
	cases := map[string][]bad{
		"py": oneLang, "r": oneLang, "cpp": oneLang,
		"cross": {
			{"pyOfCpp", "_1", map[string]any{"_1": []any{"a"}}},
			{"crossRange", "_1", map[string]any{"_1": 2147483648}},
			{"pipeline", "_1", map[string]any{"_1": "k", "_2": []any{}}},
		},
	}
	cli := map[string][][]string{
		"py":    {{"addInt", "2147483648", "1"}, {"addInt", "x", "1"}, {"older", "1", `{"name":"x","age":"old","height":1}`}},
		"cross": {{"crossRange", "2147483648"}, {"pyOfCpp", `["a"]`}},
	}
	cli["r"], cli["cpp"] = cli["py"], cli["py"]
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		s := p.startMCPReady(t) // every pool's process is known before the refused calls
		p.quick(t, s, 1, "before")
		langs := map[string][]string{"py": {"py"}, "r": {"r"}, "cpp": {"cpp"}, "cross": {"py", "cpp", "r"}}[name]
		before := map[string]int{}
		for _, lang := range langs {
			before[lang] = p.topPool(t, s.cmd.Process.Pid, lang)
		}
		logged := len(s.stderr.String())
		for i, c := range cases[name] {
			r := s.request(10+i, "tools/call", map[string]any{"name": c.cmd, "arguments": c.args})
			msg := errMessage(r)
			if errCode(r) != -32602 || !strings.Contains(msg, c.cmd) || !strings.Contains(msg, c.arg) {
				t.Errorf("%s %v: %v, want -32602 naming '%s' and '%s'", c.cmd, c.args, r, c.cmd, c.arg)
			}
		}
		p.quick(t, s, 2, "after the refused calls")
		// No pool restarted, and none said anything (a worker that
		// aborts on a wrong msgpack value prints its assertion). The
		// workers a Python pool forks come and go on their own.
		for _, lang := range langs {
			if now := p.topPoolOrZero(s.cmd.Process.Pid, lang); now != before[lang] {
				t.Errorf("the %s pool's process was %d before the refused calls, %d after", lang, before[lang], now)
			}
		}
		if more := s.stderr.String()[logged:]; more != "" {
			t.Errorf("nexus logged during the refused calls:\n%s", more)
		}
		for _, args := range cli[name] {
			r := p.nexusRun(t, args...)
			// Exit 2, a usage error: refused before any call was made
			// (a failed call exits 1).
			if r.code != 2 || !strings.Contains(r.stderr, args[0]) {
				t.Errorf("nexus run %v: exit %d, stderr %q; want exit 2 naming the command", args, r.code, r.stderr)
			}
			// morloc's own nexus refuses these too, before any pool.
			if m := p.morlocNexus(t, args...); m.code == 0 {
				t.Errorf("morloc's nexus %v accepted it: %s", args, m.stdout)
			}
		}
	})
}
