package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Programs the real morloc 0.69.0 compiled
// (testdata/morloc-0.69, README.md there), served unchanged by nexus
// through their launcher, give what morloc's own nexus gives, over the CLI,
// MCP stdio and HTTP.

// morlocCase is one command with its CLI tokens (each a JSON text, as
// morloc's nexus takes them). fails: the function raises; its message
// holds failText.
type morlocCase struct {
	cmd      string
	args     []string
	fails    bool
	failText string
}

func (c morlocCase) String() string { return c.cmd + " " + strings.Join(c.args, " ") }

// argv is the command and its tokens for either CLI: after "--" when a
// value starts with '-', which morloc's nexus would take for an option.
func (c morlocCase) argv() []string {
	for _, a := range c.args {
		if strings.HasPrefix(a, "-") {
			return append([]string{c.cmd, "--"}, c.args...)
		}
	}
	return append([]string{c.cmd}, c.args...)
}

// The single-language programs have the same commands (testdata/morloc-0.69/README.md).
var oneLanguageCases = []morlocCase{
	{cmd: "addInt", args: []string{"2", "3"}},
	{cmd: "addInt", args: []string{"-7", "2147483640"}},
	{cmd: "scale", args: []string{"2.5", "[1,2.25,3]"}},
	{cmd: "scale", args: []string{"3", "[0.1]"}}, // 0.30000000000000004: more digits than morloc prints
	{cmd: "scale", args: []string{"2", "[]"}},
	{cmd: "greet", args: []string{`"Zoë / <b> \"q\"\n\ttab"`}},
	{cmd: "greet", args: []string{`""`}},
	{cmd: "isEven", args: []string{"4"}},
	{cmd: "isEven", args: []string{"7"}},
	{cmd: "pairUp", args: []string{"7", `"seven"`}},
	{cmd: "older", args: []string{"3", `{"name":"Ada","age":36,"height":1.65}`}},
	{cmd: "safeHead", args: []string{"[5,6]"}},
	{cmd: "safeHead", args: []string{"[]"}},
	{cmd: "cohorts", args: []string{`[{"name":"a","age":31,"height":1.5},{"name":"b","age":12,"height":1.25},{"name":"c","age":35,"height":1.0}]`}},
	{cmd: "cohorts", args: []string{"[]"}},
	{cmd: "bigText", args: []string{"5"}},
	{cmd: "bigText", args: []string{"100000"}}, // over 64 KiB: back through shared memory
	{cmd: "echoReals", args: []string{"[0.1,1e300,-0.0,3,5e-324]"}},
	{cmd: "sleepFor", args: []string{"0.1"}},
	{cmd: "answer"}, // pure: no pool
	{cmd: "fail", args: []string{`"no"`}, fails: true, failText: "refused: no"},
	{cmd: "die", args: []string{"1"}, fails: true},
	{cmd: "addInt", args: []string{"1", "2"}}, // after a worker died
}

var morlocCases = map[string][]morlocCase{
	"py":  oneLanguageCases,
	"r":   oneLanguageCases,
	"cpp": oneLanguageCases,
	"cross": {
		{cmd: "pyOfCpp", args: []string{"[1,2,3]"}},
		{cmd: "pyOfCpp", args: []string{"[0.1,0.2]"}}, // 0.05000000000000001
		{cmd: "pyOfCpp", args: []string{"[]"}},
		{cmd: "rOfCpp", args: []string{"[1,-2,3]"}},
		{cmd: "rOfCpp", args: []string{"[]"}},
		{cmd: "pipeline", args: []string{"10", "[1,2,4]"}},
		{cmd: "pipeline", args: []string{"2", "[]"}},
		{cmd: "crossFail", args: []string{`"no"`}, fails: true, failText: "C++ refused: no"},
		{cmd: "crossRange", args: []string{"5"}},
		{cmd: "crossRange", args: []string{"10000"}}, // 80 000 bytes from C++ through Python: shared memory
		{cmd: "crossEcho", args: []string{"[0.5,1e300,-2]"}},
		{cmd: "sleepFor", args: []string{"0.1"}},
	},
}

// forEachMorlocProgram compiles each program of morlocPrograms and runs
// test on it, as a subtest named for it.
func forEachMorlocProgram(t *testing.T, test func(t *testing.T, name string, p *morlocProg)) {
	for _, name := range morlocPrograms() {
		t.Run(name, func(t *testing.T) { test(t, name, compileMorloc(t, name)) })
	}
}

// morlocPrograms are the programs a test runs: all of them, or only the
// Python one in the fast tier.
func morlocPrograms() []string {
	if testing.Short() {
		return []string{"py"}
	}
	return []string{"py", "r", "cpp", "cross"}
}

// casesOf are the cases a test runs for a program: all of them, or in the
// fast tier one of each kind (a scalar, a record, an optional, a raise).
func casesOf(name string) []morlocCase {
	if !testing.Short() {
		return morlocCases[name]
	}
	var some []morlocCase
	for _, c := range morlocCases[name] {
		switch c.String() {
		case "addInt 2 3", "older 3 " + `{"name":"Ada","age":36,"height":1.65}`, "safeHead []", `fail "no"`:
			some = append(some, c)
		}
	}
	return some
}

// morlocAnswers caches what morloc's own nexus printed, per program and
// case, for the tests that compare with it.
var morlocAnswers struct {
	sync.Mutex
	m map[string]cliResult
}

func (p *morlocProg) morlocAnswer(t *testing.T, c morlocCase) cliResult {
	t.Helper()
	key := p.name + "\x00" + c.String()
	morlocAnswers.Lock()
	r, ok := morlocAnswers.m[key]
	morlocAnswers.Unlock()
	if ok {
		return r
	}
	r = p.morlocNexus(t, c.argv()...)
	switch {
	case c.fails && r.code == 0:
		t.Fatalf("%s: morloc's nexus succeeded (%q), the case says it fails", c, brief(r.stdout))
	case c.fails && !strings.Contains(r.stderr, c.failText):
		t.Fatalf("%s: morloc's nexus said %q, the case expects %q", c, r.stderr, c.failText)
	case !c.fails && r.code != 0:
		t.Fatalf("%s: morloc's nexus failed (exit %d):\n%s", c, r.code, r.stderr)
	}
	morlocAnswers.Lock()
	if morlocAnswers.m == nil {
		morlocAnswers.m = map[string]cliResult{}
	}
	morlocAnswers.m[key] = r
	morlocAnswers.Unlock()
	return r
}

// Every command through `nexus run <launcher>` prints what morloc's own
// `./nexus` prints for the same arguments, as the same JSON value (Reals
// to morloc's 15 digits); a function that raises exits 1 on both, with its
// message.
func TestMorlocCLIMatchesMorlocNexus(t *testing.T) {
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		cases := casesOf(name)
		if len(cases) < 4 {
			t.Fatalf("%d cases for %s", len(cases), name)
		}
		for _, c := range cases {
			want := p.morlocAnswer(t, c)
			got := p.nexusRun(t, c.argv()...)
			if c.fails {
				if got.code != 1 || !strings.Contains(got.stderr, c.failText) {
					t.Errorf("%s: nexus run exit %d, stderr %q; morloc's nexus exit %d with %q", c, got.code, got.stderr, want.code, c.failText)
				}
				continue
			}
			if got.code != 0 {
				t.Errorf("%s: nexus run failed (exit %d): %s\nmorloc's nexus: %s", c, got.code, got.stderr, brief(want.stdout))
				continue
			}
			if d := sameValue(want.stdout, got.stdout); d != "" {
				t.Errorf("%s: %s\n morloc: %s\n nexus:  %s", c, d, brief(want.stdout), brief(got.stdout))
			} else if want.stdout != got.stdout {
				t.Logf("%s: the same value, printed differently:\n morloc: %s nexus:  %s", c, brief(want.stdout), brief(got.stdout))
			}
		}
	})
}

// The same values come back over MCP stdio (`nexus mcp <launcher>`): the
// text block holds the value morloc's nexus prints; a raise is isError
// with the function's message.
func TestMorlocMCPMatchesMorlocNexus(t *testing.T) {
	testenv.Long(t)
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		s := p.startMCP(t)
		for i, c := range casesOf(name) {
			want := p.morlocAnswer(t, c)
			text, isErr := s.callTool(i+1, c.cmd, toolArguments(t, c.args))
			switch {
			case c.fails:
				if !isErr || !strings.Contains(text, c.failText) {
					t.Errorf("%s: isError %v, %q; want isError with %q", c, isErr, brief(text), c.failText)
				}
			case isErr:
				t.Errorf("%s: isError: %s\nmorloc's nexus: %s", c, text, brief(want.stdout))
			default:
				if d := sameValue(want.stdout, text); d != "" {
					t.Errorf("%s: %s\n morloc: %s\n nexus:  %s", c, d, brief(want.stdout), brief(text))
				}
			}
		}
	})
}

// And over HTTP (`nexus serve <launcher>`): every case through the plain
// API's /call/<module>/<command>, then every case as an MCP tools/call
// (stateless), each pass in the table's order (a case after "die" finds
// its pool started again).
func TestMorlocHTTPMatchesMorlocNexus(t *testing.T) {
	testenv.Long(t)
	forEachMorlocProgram(t, func(t *testing.T, name string, p *morlocProg) {
		srv := startHTTP(t, p.env(), "serve", "--port", "0", p.launcher)
		for _, c := range casesOf(name) {
			want := p.morlocAnswer(t, c)
			status, result, message := srv.plainCall(p.module, c.cmd, c.args)
			switch {
			case c.fails:
				if status < 500 || !strings.Contains(message, c.failText) {
					t.Errorf("%s: POST /call gave %d %q; want a 5xx with %q", c, status, message, c.failText)
				}
			case status != 200:
				t.Errorf("%s: POST /call gave %d %q", c, status, message)
			default:
				if d := sameValue(want.stdout, string(result)); d != "" {
					t.Errorf("%s: POST /call: %s\n morloc: %s\n nexus:  %s", c, d, brief(want.stdout), brief(string(result)))
				}
			}
		}
		for i, c := range casesOf(name) {
			want := p.morlocAnswer(t, c)
			text, isErr := srv.statelessCall(i+1, c.cmd, string(mustJSON(t, toolArguments(t, c.args))))
			switch {
			case c.fails:
				if !isErr || !strings.Contains(text, c.failText) {
					t.Errorf("%s: MCP over HTTP isError %v, %q; want isError with %q", c, isErr, brief(text), c.failText)
				}
			case isErr:
				t.Errorf("%s: MCP over HTTP isError: %s", c, text)
			default:
				if d := sameValue(want.stdout, text); d != "" {
					t.Errorf("%s: MCP over HTTP: %s\n morloc: %s\n nexus:  %s", c, d, brief(want.stdout), brief(text))
				}
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// plainCall posts the CLI tokens, as JSON values, to /call/<module>/<command>.
func (s *httpServer) plainCall(module, command string, args []string) (status int, result json.RawMessage, message string) {
	s.t.Helper()
	status, result, message, _ = s.callAPI(module, command, "["+strings.Join(args, ",")+"]")
	return status, result, message
}

// callAPI posts body to /call/<module>/<command> and reads the plain JSON
// API's reply: the HTTP status, the result or the error's message, and the
// reply as it came.
func (s *httpServer) callAPI(module, command, body string) (status int, result json.RawMessage, message string, raw []byte) {
	s.t.Helper()
	resp, err := http.Post(s.base+"/call/"+module+"/"+command, "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ = io.ReadAll(resp.Body)
	var reply struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		s.t.Fatalf("/call/%s/%s: %d %q is not a JSON reply", module, command, resp.StatusCode, brief(string(raw)))
	}
	if (reply.Status == "ok") != (resp.StatusCode == 200) {
		s.t.Errorf("/call/%s/%s: status %d with %q", module, command, resp.StatusCode, raw)
	}
	return resp.StatusCode, reply.Result, reply.Error, raw
}

// The two ways morloc 0.69's nexus prints a value differently from nexus,
// pinned so that a change on either side shows: a Real with printf's %.15g
// (nexus: the shortest text that reads back as the same double, so nothing
// is lost), and "/" escaped as "\/" in a string (the same JSON value).
// TestMorlocCLIMatchesMorlocNexus logs every other difference in bytes.
func TestMorlocPrintDifferences(t *testing.T) {
	p := compileMorloc(t, "py")
	for _, tc := range []struct {
		args               []string
		morloc, nexusPrint string
	}{
		{[]string{"scale", "3", "[0.1]"}, "[0.3]\n", "[0.30000000000000004]\n"},
		{[]string{"greet", `"a/b"`}, `"hello, a\/b!"` + "\n", `"hello, a/b!"` + "\n"},
		{[]string{"echoReals", "[1e300,-0.0,2.5,0.1]"}, "[1e+300,-0,2.5,0.1]\n", "[1e+300,-0,2.5,0.1]\n"},
	} {
		want := p.morlocNexus(t, tc.args...)
		got := p.nexusRun(t, tc.args...)
		if want.stdout != tc.morloc {
			t.Errorf("%v: morloc's nexus printed %q, this test says %q", tc.args, want.stdout, tc.morloc)
		}
		if got.stdout != tc.nexusPrint {
			t.Errorf("%v: nexus run printed %q (exit %d: %s), this test says %q", tc.args, got.stdout, got.code, got.stderr, tc.nexusPrint)
		}
		if d := sameValue(want.stdout, got.stdout); d != "" {
			t.Errorf("%v: %s", tc.args, d)
		}
	}
}

// sameValue itself: it must tell different values apart.
func TestMorlocSameValue(t *testing.T) {
	for _, tc := range []struct {
		morloc, nexus string
		same          bool
	}{
		{"[0.3]", "[0.30000000000000004]", true},
		{"5.83333333333333", "5.833333333333333", true},
		{"4.94065645841247e-324", "5e-324", true},
		{`"a\/b"`, `"a/b"`, true},
		{`{"a":1,"b":[true,null]}`, `{"a":1,"b":[true,null]}`, true},
		{"[0.3]", "[0.31]", false},
		{"[0.3]", "[0.3,1]", false},
		{"1", "2", false},
		{"1", `"1"`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, false},
		{"null", "0", false},
		{"true", "false", false},
		{"[[1,2]]", "[[1,3]]", false},
	} {
		if d := sameValue(tc.morloc, tc.nexus); (d == "") != tc.same {
			t.Errorf("sameValue(%s, %s) = %q, want same=%v", tc.morloc, tc.nexus, d, tc.same)
		}
	}
}

// reals is n Reals, as JSON, with a fractional part each: no two alike up
// to a million; beyond, short texts that repeat every 64 (the 100 MB list
// is then about 60 MB of JSON each way, not 125).
func reals(n int) ([]float64, []byte) {
	xs := make([]float64, n)
	var b bytes.Buffer
	b.Grow(n * 10)
	b.WriteByte('[')
	for i := range xs {
		xs[i] = float64(i) + 0.25
		if n > 1_000_000 {
			xs[i] = float64(i%64) + 0.5
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(xs[i], 'g', -1, 64))
	}
	b.WriteByte(']')
	return xs, b.Bytes()
}
