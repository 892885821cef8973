package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// polyglot is testdata/bad/polyglot, ready to run: a copy in a temporary
// directory with its C++ pool built. langs lists the languages whose
// pools can run here (py, r, cpp).
type polyglot struct {
	dir   string
	langs []string
}

var polyglotBuild struct {
	once sync.Once
	bin  string // the built C++ pool, "" when it cannot be built
	why  string
}

// cppPool builds the polyglot C++ pool once per source, into the system's
// temporary directory (a build takes seconds).
func cppPool(t *testing.T) (string, string) {
	polyglotBuild.once.Do(func() {
		src := filepath.Join(program("bad/polyglot"), "pools", "cpp", "pool.cpp")
		header := filepath.Join(repoRoot, "internal", "pool", "runtime", "cpp", "nexus.hpp")
		h := sha256.New()
		for _, f := range []string{src, header} {
			data, err := os.ReadFile(f)
			if err != nil {
				polyglotBuild.why = err.Error()
				return
			}
			h.Write(data)
		}
		bin := filepath.Join(os.TempDir(), "nexus-e2e-polyglot-"+hex.EncodeToString(h.Sum(nil))[:16]+".out")
		if _, err := os.Stat(bin); err == nil {
			polyglotBuild.bin = bin
			return
		}
		if _, err := exec.LookPath("g++"); err != nil {
			polyglotBuild.why = "g++ is not installed"
			return
		}
		tmp := bin + fmt.Sprintf(".%d", os.Getpid())
		out, err := exec.Command("g++", "-std=c++17", "-O1", "-pthread", "-I"+filepath.Dir(header), src, "-o", tmp).CombinedOutput()
		if err != nil {
			polyglotBuild.why = "building the C++ pool: " + string(out)
			os.Remove(tmp)
			return
		}
		if err := os.Rename(tmp, bin); err != nil {
			polyglotBuild.why = err.Error()
			return
		}
		polyglotBuild.bin = bin
	})
	return polyglotBuild.bin, polyglotBuild.why
}

// newPolyglot copies the program and says which languages can run.
func newPolyglot(t *testing.T) *polyglot {
	t.Helper()
	dir := copyProgram(t, "bad/polyglot")
	p := &polyglot{dir: dir}
	if _, err := exec.LookPath("python3"); err == nil {
		p.langs = append(p.langs, "py")
	} else {
		t.Log("no python3: the soak leaves Python out")
	}
	if err := exec.Command("Rscript", "-e", "library(jsonlite)").Run(); err == nil {
		p.langs = append(p.langs, "r")
	} else {
		t.Log("no Rscript with jsonlite: the soak leaves R out")
	}
	if bin, why := cppPool(t); bin != "" {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pools", "cpp", "pool-cpp.out"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		p.langs = append(p.langs, "cpp")
	} else {
		t.Logf("the soak leaves C++ out: %s", why)
	}
	if len(p.langs) == 0 {
		testenv.MissingTool(t, "no language of the polyglot program can run here")
	}
	return p
}

// soakCall is one request of the soak and what its reply must be.
type soakCall struct {
	lang string
	kind string // ok, slow, fail, crash
	arg  int
}

func (c soakCall) tool() string {
	return c.lang + strings.ToUpper(c.kind[:1]) + c.kind[1:]
}

// collateral reports whether a failure is explained by a pool process
// dying under the call (another call crashed it), or by the pool backing
// off after crashes.
func collateral(lang, text string) bool {
	if !strings.HasPrefix(text, "pool "+lang) {
		return false
	}
	for _, why := range []string{" died (", " is down after ", " failed to start: "} {
		if strings.Contains(text, why) {
			return true
		}
	}
	return false
}

// Exactly once: 10 000 calls, 64 in flight, mixing fast, slow, failing and
// crashing functions across the Python, R and C++ pools. Every request id
// gets exactly one reply; every success has the right value; every failure
// is the function's own or explained by a pool that crashed; and the pools
// still serve afterwards, leaving no process behind.
func TestSoak(t *testing.T) {
	testenv.Long(t)
	const total, inFlight = 10000, 64
	calls := total
	p := newPolyglot(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, languages %v", seed, p.langs)
	rng := rand.New(rand.NewPCG(seed, 42))
	plan := make([]soakCall, calls)
	for i := range plan {
		c := soakCall{lang: p.langs[rng.IntN(len(p.langs))]}
		switch r := rng.IntN(1000); {
		case r < 3:
			c.kind, c.arg = "crash", 3+rng.IntN(100)
		case r < 100:
			c.kind = "fail"
		case r < 250:
			c.kind, c.arg = "slow", 1+rng.IntN(40)
		default:
			c.kind, c.arg = "ok", rng.IntN(1<<30)
		}
		plan[i] = c
	}

	s := startServer(t, p.dir)
	s.handshake()
	began := time.Now()
	send := func(i int) {
		c := plan[i]
		var args string
		switch c.kind {
		case "fail":
			args = fmt.Sprintf(`{"_1":"call %d"}`, i)
		default:
			args = fmt.Sprintf(`{"_1":%d}`, c.arg)
		}
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, c.tool(), args))
	}
	next := 0
	for ; next < min(inFlight, calls); next++ {
		send(next)
	}
	replies := make([]int, calls)
	var succeeded, failedOwn, failedCollateral, okCalls, okSucceeded int
	for received := 0; received < calls; received++ {
		line, ok := s.recvWithin(2 * time.Minute)
		if !ok {
			t.Fatalf("after %d replies, none for 2 minutes", received)
		}
		var r struct {
			ID     *int `json:"id"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.ID == nil || *r.ID < 0 || *r.ID >= calls || r.Result == nil || len(r.Result.Content) == 0 {
			t.Fatalf("reply %d is not a tools/call result for one of ours: %.300s", received, line)
		}
		id := *r.ID
		replies[id]++
		if replies[id] > 1 {
			t.Errorf("id %d answered %d times: %.300s", id, replies[id], line)
			continue
		}
		if next < calls {
			send(next)
			next++
		}
		c, text := plan[id], r.Result.Content[0].Text
		if c.kind == "ok" {
			okCalls++
		}
		switch {
		case !r.Result.IsError:
			want := fmt.Sprint(c.arg)
			if c.kind == "ok" {
				want = fmt.Sprint(c.arg + 1)
				okSucceeded++
			}
			if c.kind == "fail" || c.kind == "crash" || text != want {
				t.Errorf("call %d (%s %d) succeeded with %q, want %s", id, c.tool(), c.arg, text, map[bool]string{true: "a failure", false: want}[c.kind == "fail" || c.kind == "crash"])
			}
			succeeded++
		case c.kind == "fail" && strings.Contains(text, fmt.Sprintf("boom: call %d", id)),
			c.kind == "crash" && strings.Contains(text, fmt.Sprintf("died (exit status %d)", c.arg)):
			failedOwn++
		case collateral(c.lang, text):
			failedCollateral++
		default:
			t.Errorf("call %d (%s %d) failed unexplained: %.300s", id, c.tool(), c.arg, text)
		}
	}
	took := time.Since(began)
	for id, n := range replies {
		if n != 1 {
			t.Errorf("id %d answered %d times", id, n)
		}
	}
	t.Logf("%d calls in %s: %d succeeded, %d failed as they should, %d failed because a pool crashed under them",
		calls, took.Round(time.Millisecond), succeeded, failedOwn, failedCollateral)
	if okCalls > 0 && okSucceeded*100 < okCalls*80 {
		t.Errorf("only %d of %d plain calls succeeded: crashes should cost far fewer", okSucceeded, okCalls)
	}
	// Every pool serves afterwards (once any backoff is over).
	for i, lang := range p.langs {
		var text string
		var isErr bool
		for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if text, isErr = s.callTool(calls+i, lang+"Ok", map[string]any{"_1": 1}); !isErr || time.Now().After(deadline) {
				break
			}
		}
		if isErr || text != "2" {
			t.Errorf("%sOk after the soak: %q (isError %v)", lang, text, isErr)
		}
	}
	kids := descendants(s.cmd.Process.Pid)
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
	waitGone(t, kids)
}
