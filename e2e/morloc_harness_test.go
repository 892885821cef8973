package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/morloccorpus"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The programs of testdata/morloc-0.69, compiled by the real morloc 0.69.0
// at test time: the pools morloc generates embed its runtime's
// code, so they are never committed.

// morlocProg is one compiled program.
type morlocProg struct {
	name     string // its directory under testdata/morloc-0.69: py, r, cpp, cross
	module   string // the manifest's name, as nexus serve's /call/<module>/ has it
	dir      string // where morloc compiled it: the manifest's build_dir
	launcher string // dir/nexus, the script morloc wrote (version-1 manifest inside)
	tc       testenv.MorlocToolchain
}

// morlocModules are the module names of the programs' main.loc files.
var morlocModules = map[string]string{"py": "pyprog", "r": "rprog", "cpp": "cppprog", "cross": "crossprog", "bench": "benchprog"}

var morlocBuilds struct {
	sync.Mutex
	progs map[string]*morlocProg
}

// compileMorloc compiles testdata/morloc-0.69/<name> once per test binary,
// into the user's cache (morlocbuild: keyed by the sources' and the
// toolchain's content, so that a C++ pool is not rebuilt on every run).
func compileMorloc(t *testing.T, name string) *morlocProg {
	t.Helper()
	tc := testenv.Morloc(t)
	morlocBuilds.Lock()
	defer morlocBuilds.Unlock()
	if p := morlocBuilds.progs[name]; p != nil {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	src := filepath.Join(repoRoot, "testdata", "morloc-0.69", name)
	dir, err := tc.Compile(src, filepath.Join(cache, "nexus-tests", "morloc-0.69.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &morlocProg{name: name, module: morlocModules[name], dir: dir, launcher: filepath.Join(dir, "nexus"), tc: tc}
	if morlocBuilds.progs == nil {
		morlocBuilds.progs = map[string]*morlocProg{}
	}
	morlocBuilds.progs[name] = p
	return p
}

// env is what both nexuses run with: morloc's PATH (Debian's python3 and
// Rscript, for which pymorloc and librmorloc were built).
func (p *morlocProg) env() []string { return []string{"PATH=" + p.tc.Path()} }

// result is what a CLI run printed.
type cliResult struct {
	stdout, stderr string
	code           int
}

func runWithEnv(t *testing.T, env []string, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := cliResult{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s: no exit within 3 minutes; stderr:\n%s", bin, strings.Join(args, " "), r.stderr)
	}
	return r
}

// morlocNexus runs the launcher itself: morloc's own C nexus. On a loaded
// machine it gives up on a pool that is slow to start (it pings for about
// 0.2 s in all, nexus.c's MAX_RETRIES): that start is tried again, the
// answer is what is compared.
func (p *morlocProg) morlocNexus(t *testing.T, args ...string) cliResult {
	t.Helper()
	var r cliResult
	for range 10 {
		r = runWithEnv(t, p.env(), p.launcher, args...)
		if !strings.Contains(r.stderr, "Failed to ping") {
			return r
		}
		t.Logf("morloc's nexus could not start a pool in time, again: %s", firstLine(r.stderr))
	}
	t.Fatalf("morloc's nexus %v: no pool started in 10 tries:\n%s", args, r.stderr)
	return r
}

// nexusRun is `nexus run <launcher> args...`.
func (p *morlocProg) nexusRun(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runWithEnv(t, p.env(), nexusBin, append([]string{"run", p.launcher}, args...)...)
}

// startMCP is `nexus mcp <launcher> extra...`, handshake done.
func (p *morlocProg) startMCP(t *testing.T, extra ...string) *server {
	t.Helper()
	s := startServerEnv(t, p.env(), p.launcher, extra...)
	s.handshake()
	return s
}

// startMCPReady is startMCP, logging at debug level, once nexus says every
// pool of the program is ready. The pools no call asked for start only
// after the first call's pool is ready (or nexus's start delay), so that
// one by one (shared memory's volume 0 is made by one pool alone): a test
// that looks at every pool's process or socket waits for this.
func (p *morlocProg) startMCPReady(t *testing.T, extra ...string) *server {
	t.Helper()
	s := p.startMCP(t, append([]string{"--log-level", "debug"}, extra...)...)
	if !s.stderr.await(`msg="all pools ready"`, 2*time.Minute) {
		t.Fatalf("nexus did not say all pools were ready within 2 minutes")
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// toolArguments are a call's positional CLI tokens as MCP arguments
// (_1, _2, ...: a version-1 manifest names no argument).
func toolArguments(t *testing.T, args []string) map[string]any {
	t.Helper()
	m := map[string]any{}
	for i, a := range args {
		if !json.Valid([]byte(a)) {
			t.Fatalf("argument %q is not JSON", a)
		}
		m["_"+strconv.Itoa(i+1)] = json.RawMessage(a)
	}
	return m
}

// sameValue says how nexus's JSON differs from morloc's for the same value,
// or "" when it does not. morloc 0.69's nexus prints a Real with printf's
// %.15g (json.c print_voidstar), nexus the shortest text that reads back as
// the same double: a number is the same when nexus's, rounded to 15
// significant digits, is morloc's. Everything else is compared exactly,
// records by key and in order.
func sameValue(morloc, nexus string) string {
	m, err := decodeNumbers(morloc)
	if err != nil {
		return fmt.Sprintf("morloc's output %q is not JSON: %v", brief(morloc), err)
	}
	n, err := decodeNumbers(nexus)
	if err != nil {
		return fmt.Sprintf("nexus's output %q is not JSON: %v", brief(nexus), err)
	}
	return diffValue("", m, n)
}

// decodeNumbers decodes one JSON value, keeping numbers as text and object
// keys in their order.
func decodeNumbers(s string) (any, error) { return morloccorpus.Decode([]byte(s)) }

func diffValue(path string, m, n any) string {
	where := path
	if where == "" {
		where = "the value"
	}
	switch mv := m.(type) {
	case json.Number:
		nv, ok := n.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: morloc %v, nexus %v", where, m, n)
		}
		if mv == nv {
			return ""
		}
		mf, err1 := strconv.ParseFloat(string(mv), 64)
		nf, err2 := strconv.ParseFloat(string(nv), 64)
		if err1 != nil || err2 != nil {
			return fmt.Sprintf("%s: morloc %s, nexus %s", where, mv, nv)
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(nf, 'g', 15, 64), 64)
		if r == mf || (math.IsInf(r, 0) && r == mf) {
			return ""
		}
		return fmt.Sprintf("%s: morloc %s, nexus %s (%.15g to morloc's 15 digits)", where, mv, nv, nf)
	case []any:
		nv, ok := n.([]any)
		if !ok || len(nv) != len(mv) {
			return fmt.Sprintf("%s: morloc %s, nexus %s", where, brief(fmt.Sprint(m)), brief(fmt.Sprint(n)))
		}
		for i := range mv {
			if d := diffValue(fmt.Sprintf("%s[%d]", path, i), mv[i], nv[i]); d != "" {
				return d
			}
		}
		return ""
	case morloccorpus.Object:
		nv, ok := n.(morloccorpus.Object)
		if !ok || len(nv) != len(mv) {
			return fmt.Sprintf("%s: morloc %s, nexus %s", where, brief(fmt.Sprint(m)), brief(fmt.Sprint(n)))
		}
		for i, m := range mv {
			if nv[i].Key != m.Key {
				return fmt.Sprintf("%s: morloc has key %q where nexus has %q", where, m.Key, nv[i].Key)
			}
			if d := diffValue(path+"."+m.Key, m.Value, nv[i].Value); d != "" {
				return d
			}
		}
		return ""
	}
	if m != n {
		return fmt.Sprintf("%s: morloc %s, nexus %s", where, brief(fmt.Sprint(m)), brief(fmt.Sprint(n)))
	}
	return ""
}

// poolProcesses are nexus's descendants that run the program's pools
// (their command lines name pools/<module>/), by pid.
func (p *morlocProg) poolProcesses(nexusPid int) map[int]string {
	out := map[int]string{}
	for pid, cl := range descendants(nexusPid) {
		if strings.Contains(cl, "pools/"+p.module+"/") {
			out[pid] = cl
		}
	}
	return out
}

// morlocLaunch is what a morloc pool was started with: its argv ends in
// a socket path inside <tmpdir>, <tmpdir> and <shm basename>
// (docs/spec.md §8.2; morloc's nexus names <tmpdir>/<socket>,
// nexus may bind each process's socket deeper and link <tmpdir>/<socket>
// to it).
type morlocLaunch struct{ socket, tmpdir, basename string }

func launchOf(t *testing.T, pid int) morlocLaunch {
	t.Helper()
	l, err := readLaunch(pid)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readLaunch(pid int) (morlocLaunch, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return morlocLaunch{}, fmt.Errorf("pool %d: %v", pid, err)
	}
	argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	if len(argv) < 4 {
		return morlocLaunch{}, fmt.Errorf("pool %d's argv %q lacks socket, tmpdir and basename", pid, argv)
	}
	l := morlocLaunch{socket: argv[len(argv)-3], tmpdir: argv[len(argv)-2], basename: argv[len(argv)-1]}
	if !strings.HasPrefix(l.socket, l.tmpdir+"/") {
		return morlocLaunch{}, fmt.Errorf("pool %d: socket %s is not in its tmpdir %s", pid, l.socket, l.tmpdir)
	}
	return l, nil
}

// shmFiles are the shared-memory volumes of a basename.
func shmFiles(basename string) []string {
	files, _ := filepath.Glob(filepath.Join("/dev/shm", basename+"_*"))
	more, _ := filepath.Glob(filepath.Join("/dev/shm", basename+".*"))
	files = append(files, more...)
	sort.Strings(files)
	return files
}

// waitFor polls cond every 50 ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
