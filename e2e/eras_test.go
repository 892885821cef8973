package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// langCase is what the real-client tests do in one pool language: a quick
// call, a call that reports progress, and a long call to cancel. A zero
// part is not exercised, for the reason given.
type langCase struct {
	lang      string
	available func() string // "" when this machine can run the language's pool, else why not

	program, quickTool string
	quickArgs          map[string]any
	quickText          string

	progressProgram, progressTool string
	progressArgs                  map[string]any
	progressWant                  []float64 // the progress values the client must see, in order

	cancelProgram, cancelTool string
	// cancelArgs builds the long call's arguments; marker is a file path
	// the function writes when cancelled, when cancelMarker is set.
	cancelArgs   func(marker string) map[string]any
	cancelMarker bool
	// afterTool and afterArgs make a short call in cancelProgram after
	// the cancellation: the pool must still answer.
	afterTool string
	afterArgs map[string]any
	noCancel  string // why there is no cancellation check
}

func cppAvailable() string {
	if _, err := os.Stat(filepath.Join(program("numeric"), "pools", "cpp", "pool-cpp.out")); err != nil {
		return "testdata/numeric's C++ pool is not built (needs g++ and nlohmann-json3-dev; run make deps)"
	}
	return ""
}

func rAvailable() string {
	if why := testenv.RMissing(); why != "" {
		return why
	}
	for _, f := range []string{
		filepath.Join(repoRoot, "internal", "pool", "runtime", "r", "nexus.R"),
		filepath.Join(program("combat"), "pools", "r", "pool.R"),
	} {
		if _, err := os.Stat(f); err != nil {
			return "the R runtime or testdata/combat's R pool is not in this tree yet (" + f + ")"
		}
	}
	return ""
}

var langCases = []langCase{
	{
		lang: "py", available: testenv.PythonMissing,
		program: "shapes", quickTool: "addInt", quickArgs: map[string]any{"_1": 41}, quickText: "42",
		progressProgram: "everything", progressTool: "slow_count", progressArgs: map[string]any{"_1": 3, "_2": 50}, progressWant: []float64{1, 2, 3},
		cancelProgram: "everything", cancelTool: "cancel_probe",
		cancelArgs:   func(marker string) map[string]any { return map[string]any{"_1": marker} },
		cancelMarker: true,
		afterTool:    "slow_count", afterArgs: map[string]any{"_1": 1, "_2": 10},
	},
	{
		lang: "cpp", available: cppAvailable,
		program: "numeric", quickTool: "factorial", quickArgs: map[string]any{"_1": 20}, quickText: "2432902008176640000",
		progressProgram: "numeric", progressTool: "slowCount", progressArgs: map[string]any{"_1": 3}, progressWant: []float64{1, 2, 3},
		cancelProgram: "numeric", cancelTool: "slowCount",
		cancelArgs: func(string) map[string]any { return map[string]any{"_1": 100000} },
		afterTool:  "factorial", afterArgs: map[string]any{"_1": 5},
	},
	{
		lang: "r", available: rAvailable,
		program: "combat", quickTool: "intro", quickArgs: map[string]any{"_1": "Goblin"}, quickText: `"A wild Goblin appears!"`,
		progressProgram: "rslow", progressTool: "slowCount", progressArgs: map[string]any{"_1": 3, "_2": 50}, progressWant: []float64{1, 2, 3},
		cancelProgram: "rslow", cancelTool: "cancelProbe",
		cancelArgs:   func(marker string) map[string]any { return map[string]any{"_1": marker} },
		cancelMarker: true,
		afterTool:    "slowCount", afterArgs: map[string]any{"_1": 1, "_2": 10},
	},
}

// rslow is an R program written for these tests (no example program has a
// long R function): slowCount reports progress between sleeps, and
// cancelProbe sleeps in steps for up to a minute and, when cancelled,
// writes "cancelled after N steps" to the file it is given.
const rslowManifest = `{"name":"rslow","build":{"morloc_version":"0"},
 "pools":[{"lang":"r","exec":["Rscript","pools/r/pool.R"],"metadata":{"runtime":"nexus"}}],
 "commands":[
  {"name":"slowCount","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Count with progress"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":null,"desc":["steps"]},{"kind":"pos","schema":"j","type":"Int","name":null,"desc":["ms a step"]}],
   "return":{"schema":"j","type":"Int","desc":[]}},
  {"name":"cancelProbe","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":["Run until cancelled"],
   "args":[{"kind":"pos","schema":"s","type":"Str","name":null,"desc":["marker file"]}],
   "return":{"schema":"j","type":"Int","desc":[]}}]}`

const rslowPool = `source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))
slowCount <- function(n, ms) {
  for (i in seq_len(n)) {
    nexus_sleep(ms / 1000)
    nexus_progress(i, n, sprintf("step %d", i))
  }
  n
}
cancelProbe <- function(marker) {
  steps <- 0
  on.exit(if (nexus_cancelled()) writeLines(sprintf("cancelled after %d steps", steps), marker))
  while (steps < 1200) {
    nexus_sleep(0.05)
    steps <- steps + 1
    nexus_progress(steps)
  }
  steps
}
nexus_serve(list("1" = slowCount, "2" = cancelProbe))
`

var generated sync.Map // program name → *sync.Once-guarded directory

// target is the path of a program: a testdata example, or one this file
// writes (rslow), next to the test binary of nexus so TestMain removes it.
func target(t *testing.T, name string) string {
	t.Helper()
	if name != "rslow" {
		return program(name)
	}
	v, _ := generated.LoadOrStore(name, new(sync.Once))
	dir := filepath.Join(filepath.Dir(nexusBin), name)
	v.(*sync.Once).Do(func() {
		if err := writeFiles(dir, map[string]string{"manifest.json": rslowManifest, "pools/r/pool.R": rslowPool}); err != nil {
			panic(err)
		}
	})
	return dir
}

// goSDKConnect starts `nexus mcp PROGRAM` under the official go-sdk client;
// version "" lets the client choose (it probes server/discover: 2026-07-28).
func goSDKConnect(t *testing.T, ctx context.Context, prog, version string, onProgress func(*sdk.ProgressNotificationParams)) (*sdk.ClientSession, *syncBuffer, *exec.Cmd) {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { onProgress(r.Params) }
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-go-sdk", Version: "0"}, opts)
	cmd := exec.Command(nexusBin, "mcp", target(t, prog))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	var sessOpts *sdk.ClientSessionOptions
	if version != "" {
		sessOpts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, sessOpts)
	if err != nil {
		t.Fatalf("connect to %s: %v", prog, err)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("nexus stderr (%s):\n%s", prog, stderr.String())
		}
	})
	return cs, stderr, cmd
}

func firstText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("no content in %+v", res)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("first block is %T, not text", res.Content[0])
	}
	return tc.Text
}

// The official go-sdk client in both eras: by default it probes
// server/discover and speaks 2026-07-28 statelessly; pinned, it runs the
// 2025-06-18 handshake. In each, per pool language: list tools, call one,
// receive progress, cancel a long call (the function stops, the pool stays usable).
func TestGoSDKClientEras(t *testing.T) {
	testenv.Long(t)
	for _, era := range []struct{ name, pin, want string }{
		{"default (2026-07-28)", "", "2026-07-28"},
		{"pinned 2025-06-18", "2025-06-18", "2025-06-18"},
	} {
		t.Run(era.name, func(t *testing.T) {
			for _, lc := range langCases {
				t.Run(lc.lang, func(t *testing.T) {
					if why := lc.available(); why != "" {
						testenv.MissingTool(t, why)
					}
					t.Parallel()
					goSDKLanguage(t, lc, era.pin, era.want)
				})
			}
		})
	}
}

func goSDKLanguage(t *testing.T, lc langCase, pin, wantVersion string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cs, _, _ := goSDKConnect(t, ctx, lc.program, pin, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != wantVersion {
		t.Errorf("negotiated %q, want %q", v, wantVersion)
	}
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != lc.program {
		t.Errorf("serverInfo %+v, want name %s", info, lc.program)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl *sdk.Tool) bool { return tl.Name == lc.quickTool }) {
		t.Errorf("tools/list lacks %s", lc.quickTool)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: lc.quickTool, Arguments: lc.quickArgs})
	if err != nil {
		t.Fatalf("tools/call %s: %v", lc.quickTool, err)
	}
	if got := firstText(t, res); res.IsError || got != lc.quickText {
		t.Errorf("%s = %q (isError %v), want %q", lc.quickTool, got, res.IsError, lc.quickText)
	}

	if lc.noCancel != "" {
		t.Logf("progress and cancellation not checked in %s: %s", lc.lang, lc.noCancel)
		return
	}

	// Progress: the values arrive in order before the result.
	var mu sync.Mutex
	var seen []float64
	pcs, _, _ := goSDKConnect(t, ctx, lc.progressProgram, pin, func(p *sdk.ProgressNotificationParams) {
		mu.Lock()
		defer mu.Unlock()
		if p.ProgressToken == "tok-"+lc.lang {
			seen = append(seen, p.Progress)
		}
	})
	params := &sdk.CallToolParams{Name: lc.progressTool, Arguments: lc.progressArgs}
	params.SetProgressToken("tok-" + lc.lang)
	res, err = pcs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("%s with progress: %v %+v", lc.progressTool, err, res)
	}
	// The client may run its notification handlers after CallTool returns.
	var got string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		got = fmt.Sprint(seen)
		mu.Unlock()
		if got == fmt.Sprint(lc.progressWant) || time.Now().After(deadline) {
			break
		}
	}
	if got != fmt.Sprint(lc.progressWant) {
		t.Errorf("progress %s, want %v", got, lc.progressWant)
	}

	// Cancellation: cancelling the call's context makes the client send
	// notifications/cancelled; the call ends at once and the function stops.
	// The first progress report says the function is running.
	running := make(chan struct{})
	var once sync.Once
	ccs, stderr, nexus := goSDKConnect(t, ctx, lc.cancelProgram, pin, func(p *sdk.ProgressNotificationParams) {
		if p.ProgressToken == "long" {
			once.Do(func() { close(running) })
		}
	})
	marker := filepath.Join(t.TempDir(), "cancelled")
	callCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		params := &sdk.CallToolParams{Name: lc.cancelTool, Arguments: lc.cancelArgs(marker)}
		params.SetProgressToken("long")
		_, err := ccs.CallTool(callCtx, params)
		errc <- err
	}()
	select {
	case <-running:
	case err := <-errc:
		t.Fatalf("the long call ended before reporting progress: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the long call reported no progress within 30s")
	}
	stop()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if lc.cancelMarker {
		waitForMarker(t, marker, 30*time.Second)
	} else {
		// No marker: the function proves it stopped by keeping its process,
		// which nexus replaces when a cancelled call runs on past the
		// cancel grace (2s).
		pools := descendants(nexus.Process.Pid)
		if len(pools) == 0 {
			t.Error("nexus has no pool process")
		}
		time.Sleep(2500 * time.Millisecond)
		for pid, cmdline := range pools {
			if !testenv.Running(pid) {
				t.Errorf("pool process %d (%s) was replaced after the cancellation", pid, cmdline)
			}
		}
	}
	// The pool stays usable.
	res, err = ccs.CallTool(ctx, &sdk.CallToolParams{Name: lc.afterTool, Arguments: lc.afterArgs})
	if err != nil || res.IsError {
		t.Fatalf("a call after the cancellation: %v %+v", err, res)
	}
	if strings.Contains(stderr.String(), "replacing a stuck pool process") {
		t.Errorf("the cancelled function did not stop by itself: its process was replaced\n%s", stderr.String())
	}
}

// waitForStarted waits until cancel_probe, given marker, is running in its
// pool: cancelled before it began, it would never write the marker.
func waitForStarted(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker + ".started"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("cancel_probe did not start within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForMarker waits, within the time given, for the file a cancelled
// function writes.
func waitForMarker(t *testing.T, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if b, err := os.ReadFile(marker); err == nil && strings.HasPrefix(string(b), "cancelled after") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled call kept running in its pool (no marker written within %s)", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The TypeScript SDK's Client over stdio (e2e/tsclient/client.mjs), the
// client of MCP Inspector and most hosts: it negotiates 2025-11-25 with
// initialize. Per pool language: list tools, call one, receive progress,
// cancel a long call (the function stops, the pool stays usable).
func TestTypeScriptSDKClientStdio(t *testing.T) {
	testenv.Long(t)
	node, dir := tsClient(t)
	for _, lc := range langCases {
		t.Run(lc.lang, func(t *testing.T) {
			if why := lc.available(); why != "" {
				testenv.MissingTool(t, why)
			}
			t.Parallel()
			tsLanguage(t, node, dir, lc)
		})
	}
}

// tsRun is what client.mjs prints.
type tsRun struct {
	ProtocolVersion string         `json:"protocolVersion"`
	ServerName      string         `json:"serverName"`
	Capabilities    map[string]any `json:"capabilities"`
	Tools           []string       `json:"tools"`
	Quick, After    *tsResult
	Progress        *struct {
		Values []float64 `json:"values"`
		tsResult
	} `json:"progress"`
	Cancel *struct {
		Outcome string `json:"outcome"`
		Error   string `json:"error"`
		Ms      int    `json:"ms"`
	} `json:"cancel"`
	Calls  []tsCall `json:"calls"`
	Stderr string   `json:"stderr"`
}

// tsCall is one call of a plan's "calls": its result, or the error the
// client threw (as when a structuredContent does not match its schema).
type tsCall struct {
	Name              string          `json:"name"`
	IsError           bool            `json:"isError"`
	Text              *string         `json:"text"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Error             string          `json:"error"`
}

type tsResult struct {
	IsError bool    `json:"isError"`
	Text    *string `json:"text"`
}

func (r *tsResult) String() string {
	if r == nil {
		return "no result"
	}
	text := "<no text>"
	if r.Text != nil {
		text = *r.Text
	}
	return fmt.Sprintf("%q (isError %v)", text, r.IsError)
}

// runTSClient runs client.mjs with plan on the program at path, whose
// server is named server, and checks that they negotiated 2025-11-25.
func runTSClient(t *testing.T, node, dir, path, server string, plan map[string]any) *tsRun {
	t.Helper()
	planJSON, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var run tsRun
	runNodeJSON(t, node, dir, &run, "client.mjs", nexusBin, path, string(planJSON))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nexus stderr (%s):\n%s", server, run.Stderr)
		}
	})
	if run.ProtocolVersion != "2025-11-25" || run.ServerName != server {
		t.Errorf("%s: negotiated %q with server %q, want 2025-11-25 with %s", server, run.ProtocolVersion, run.ServerName, server)
	}
	return &run
}

func tsLanguage(t *testing.T, node, dir string, lc langCase) {
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "arguments": args}
	}
	run := runTSClient(t, node, dir, target(t, lc.program), lc.program, map[string]any{"quick": call(lc.quickTool, lc.quickArgs)})
	if !slices.Contains(run.Tools, lc.quickTool) {
		t.Errorf("tools/list lacks %s: %v", lc.quickTool, run.Tools)
	}
	if run.Quick == nil || run.Quick.IsError || run.Quick.Text == nil || *run.Quick.Text != lc.quickText {
		t.Errorf("%s = %v, want %q", lc.quickTool, run.Quick, lc.quickText)
	}
	if lc.noCancel != "" {
		t.Logf("progress and cancellation not checked in %s: %s", lc.lang, lc.noCancel)
		return
	}

	marker := filepath.Join(t.TempDir(), "cancelled")
	settle := 0
	if !lc.cancelMarker {
		settle = 2500
	}
	plan := map[string]any{
		// Without a marker, the function proves it stopped by not having its
		// process replaced, which nexus does past the cancel grace (2s).
		"cancel": map[string]any{"name": lc.cancelTool, "arguments": lc.cancelArgs(marker), "onProgress": true, "settleMs": settle},
		"after":  call(lc.afterTool, lc.afterArgs),
	}
	if lc.progressProgram == lc.cancelProgram {
		plan["progress"] = call(lc.progressTool, lc.progressArgs)
	} else {
		p := runTSClient(t, node, dir, target(t, lc.progressProgram), lc.progressProgram, map[string]any{"progress": call(lc.progressTool, lc.progressArgs)})
		run.Progress = p.Progress
	}
	c := runTSClient(t, node, dir, target(t, lc.cancelProgram), lc.cancelProgram, plan)
	if plan["progress"] != nil {
		run.Progress = c.Progress
	}

	// The SDK runs progress handlers in a later microtask and forgets a
	// request's handler as soon as it reads the reply, so notifications read
	// in the same chunk as the reply are dropped by the client (on a loaded
	// machine, several). So: a non-empty prefix of the expected values.
	if p := run.Progress; p == nil || p.IsError {
		t.Errorf("progress call failed: %+v", p)
	} else if len(p.Values) == 0 || len(p.Values) > len(lc.progressWant) ||
		fmt.Sprint(p.Values) != fmt.Sprint(lc.progressWant[:len(p.Values)]) {
		t.Errorf("progress %v, want %v or a prefix of it", p.Values, lc.progressWant)
	}
	if c.Cancel == nil || c.Cancel.Outcome != "aborted" || c.Cancel.Ms > 5000 {
		t.Errorf("cancelled call: %+v, want aborted at once", c.Cancel)
	}
	if c.After == nil || c.After.IsError {
		t.Errorf("call after the cancellation: %v", c.After)
	}
	if lc.cancelMarker {
		waitForMarker(t, marker, 30*time.Second)
	}
	if strings.Contains(c.Stderr, "replacing a stuck pool process") {
		t.Errorf("the cancelled function did not stop by itself")
	}
}
