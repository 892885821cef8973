package pool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The morloc driver against testdata/morloc/fakepool.py, which speaks
// morloc's packet protocol: what needs no morloc toolchain.

// The fake pool's mids.
const (
	fakeAnswer = iota + 1
	fakeFail
	fakeNoReply
	fakeSleep
	fakeExit
	fakeNapPID // the pool's pid, after 0.3 s
	fakePID    // the pool's pid, at once
	fakeWedged // fails as 0.69's wedged allocator, once (FAKE_WEDGE)
)

type fakeMorlocSet struct{ *loggedSet }

// startFakeMorloc starts the fake pool as a morloc pool (index 0) with env
// added to nexus's environment.
func startFakeMorloc(t *testing.T, spec Spec, opts Options, env ...string) *fakeMorlocSet {
	t.Helper()
	testenv.NeedPython(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "morloc"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Lang == "" {
		spec.Lang = "py"
	}
	if spec.Exec == nil {
		spec.Exec = []string{"python3", "fakepool.py"}
	}
	if spec.Socket == "" {
		spec.Socket = "pipe-py"
	}
	spec.Dir, spec.Runtime = dir, RuntimeMorloc
	i4 := mustType(t, "<int>i4")
	spec.Functions = map[int]Function{
		fakeAnswer:  {Name: "answer", Return: i4},
		fakeFail:    {Name: "fail", Return: i4},
		fakeNoReply: {Name: "noReply", Return: i4},
		fakeSleep:   {Name: "sleep", Return: i4},
		fakeExit:    {Name: "exit", Return: i4},
		fakeNapPID:  {Name: "napPID", Return: i4},
		fakePID:     {Name: "pid", Return: i4},
		fakeWedged:  {Name: "wedged", Return: i4},
	}
	opts.Morloc.WireVersion = "0.69.0"
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 20 * time.Second
	}
	fs := &fakeMorlocSet{startLoggedSet(t, []Spec{spec}, opts)}
	return fs
}

func (fs *fakeMorlocSet) call(mid int) (string, error) {
	v, err := fs.Call(context.Background(), 0, mid, nil, Hooks{})
	return string(v), err
}

// instance returns the program's live instance k (from 0, by number).
func (fs *fakeMorlocSet) instance(t *testing.T, k int) *morlocInstance {
	t.Helper()
	m := fs.morloc()
	m.mu.Lock()
	defer m.mu.Unlock()
	if k >= len(m.live) {
		t.Fatalf("instance %d of %d", k, len(m.live))
	}
	return m.live[k]
}

// liveInstances counts the instances taking calls.
func (fs *fakeMorlocSet) liveInstances() int {
	m := fs.morloc()
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// A morloc pool is started as morloc's nexus starts it: argv is exec, its
// socket <tmpdir>/<socket>, its instance's temporary directory and
// shared-memory basename; its working directory is the program's; its
// environment has the manifest's pool hash and result settings.
func TestMorlocLaunch(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	size := int64(4096)
	fs := startFakeMorloc(t, Spec{PoolHash: "c0ffee"}, Options{Morloc: MorlocOptions{InlineSize: &size, NoShm: true, TmpDir: "/scratch/mine"}},
		"FAKE_REPORT="+report)
	if got, err := fs.call(fakeAnswer); err != nil || got != "42" {
		t.Fatalf("answer: %s, %v", got, err)
	}
	var r struct {
		Argv []string          `json:"argv"`
		Cwd  string            `json:"cwd"`
		Env  map[string]string `json:"env"`
	}
	b, err := os.ReadFile(report)
	if err != nil || json.Unmarshal(b, &r) != nil || len(r.Argv) != 3 {
		t.Fatalf("the pool's report %s: %v", b, err)
	}
	first := fs.instance(t, 0)
	tmpdir, basename := first.tmpdir, first.basename
	if r.Argv[1] != tmpdir || r.Argv[2] != basename || r.Argv[0] != filepath.Join(tmpdir, "pipe-py") {
		t.Errorf("argv after exec %q; tmpdir %s, basename %s", r.Argv, tmpdir, basename)
	}
	if !strings.HasPrefix(filepath.Base(tmpdir), "morloc.") {
		t.Errorf("temporary directory %s is not named as morloc's nexus names it", tmpdir)
	}
	if ok, _ := regexp.MatchString(`^morloc-[0-9]+-[0-9a-f]{16}$`, basename); !ok || !strings.Contains(basename, "-"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("basename %q is not morloc-<nexus pid>-<16 hex>", basename)
	}
	if want, _ := filepath.Abs(filepath.Join("testdata", "morloc")); r.Cwd != want {
		t.Errorf("working directory %s, want %s", r.Cwd, want)
	}
	wantEnv := map[string]string{"MORLOC_POOL_HASH": "c0ffee", "MORLOC_INLINE_SIZE": "4096", "MORLOC_NO_SHM": "1", "MORLOC_TMPDIR": "/scratch/mine"}
	for k, v := range wantEnv {
		if r.Env[k] != v {
			t.Errorf("%s=%q, want %q (env %v)", k, r.Env[k], v, r.Env)
		}
	}
	fs.Close()
	if _, err := os.Lstat(tmpdir); !os.IsNotExist(err) {
		t.Errorf("the temporary directory outlived Close: %v", err)
	}
}

// A pool that fails to start says why, with its last output, and which
// protocol nexus took it to speak.
func TestMorlocStartFailures(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		opts Options
		env  []string
		want []string
	}{
		{"exits", Spec{Exec: []string{"sh", "-c", "echo 'Usage: script.py <socket_path> <tmpdir> <shm_basename>' >&2; exit 1"}}, Options{}, nil,
			[]string{"pool py failed to start: exited before it was ready (exit status 1); last stderr:\nUsage: script.py <socket_path> <tmpdir> <shm_basename>\n(nexus started it as a pool morloc compiled"}},
		{"never answers", Spec{Exec: []string{"sh", "-c", "echo loading >&2; exec sleep 60"}}, Options{StartTimeout: time.Second}, nil,
			[]string{"pool py never became ready within 1s (no answer to a ping on ", "; last stderr:\nloading"}},
		{"answers the ping wrong", Spec{}, Options{}, []string{"FAKE_PONG=bad"},
			[]string{"pool py failed to start: it answered the ping with something else: 78 78 78"}},
		{"no socket", Spec{Socket: "a/b"}, Options{}, nil,
			[]string{`pool py failed to start: its socket "a/b" is not a plain file name`}},
		{"not installed", Spec{Exec: []string{"no-such-interpreter", "pool.py"}}, Options{}, nil,
			[]string{"pool py failed to start: no-such-interpreter is not installed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := startFakeMorloc(t, tt.spec, tt.opts, tt.env...)
			_, err := fs.call(fakeAnswer)
			wantFailure(t, "a call of a pool that cannot start", err, tt.want...)
		})
	}
}

// Calls: a failure packet is a *CallError with the pool's message; a
// connection closed without a reply says the worker died, and its
// instance is retired; a pool that exits mid-call fails the call with its
// death. The next call works each time.
func TestMorlocFakeCalls(t *testing.T) {
	fs := startFakeMorloc(t, Spec{}, Options{})
	_, err := fs.call(fakeFail)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Message != "Error (pool daemon in m2):\nno such thing" {
		t.Errorf("fail: %v, want a *CallError with the pool's message", err)
	}
	_, err = fs.call(fakeNoReply)
	if err == nil || !strings.HasPrefix(err.Error(), "pool py: the call ended without a reply (EOF): the pool's worker running it died; last stderr:\nfake pool starting") {
		t.Errorf("noReply: %v", err)
	}
	if got, err := fs.call(fakeAnswer); err != nil || got != "42" {
		t.Errorf("answer after a worker died: %s, %v", got, err)
	}
	fs.logs.waitFor(t, `msg="retiring a morloc instance" instance=1 why="pool py: the call ended without a reply`, 5*time.Second)
	_, err = fs.call(fakeExit)
	if err == nil || !strings.Contains(err.Error(), "pool py died (exit status 3); last stderr:\n") || !strings.Contains(err.Error(), "exiting mid-call") {
		t.Errorf("exit: %v", err)
	}
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, err = fs.call(fakeAnswer); err == nil {
			break
		}
	}
	if err != nil || got != "42" {
		t.Errorf("answer after the pool died: %s, %v", got, err)
	}
}
