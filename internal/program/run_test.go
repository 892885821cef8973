package program

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// A failed CLI call is worded by who failed: the evaluator in morloc's
// words, a pool's function after its command's name, nexus as it is.
func TestRunFailure(t *testing.T) {
	pure := &manifest.Command{Name: "p", Type: manifest.Pure}
	remote := &manifest.Command{Name: "r", Type: manifest.Remote}
	hangup := errors.New("hangup signal received")
	stopped, cancel := context.WithCancelCause(context.Background())
	cancel(hangup)
	tests := []struct {
		name      string
		ctx       context.Context
		entry     *manifest.Command
		err       error
		wantMsg   string
		wantPlain bool
		wantCode  int
	}{
		{"evaluation failed", context.Background(), pure, &eval.Error{Kind: eval.Thrown, Msg: "nope"}, "evaluation failed: nope", true, 1},
		{"pure, not the evaluator's", context.Background(), pure, errors.New("arguments: bad"), "arguments: bad", false, 1},
		{"a pool's function", context.Background(), remote, errors.New("ValueError: boom"), "addInt: ValueError: boom", false, 1},
		{"stopped by a signal", stopped, remote, context.Canceled, "addInt: hangup signal received", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runFailure(tt.ctx, "addInt", tt.entry, tt.err)
			var ee *ExitError
			plain := errors.As(err, &ee) && ee.Plain
			if err.Error() != tt.wantMsg || plain != tt.wantPlain || ExitStatus(err) != tt.wantCode {
				t.Errorf("got %q (plain %v, exit %d), want %q (plain %v, exit %d)", err, plain, ExitStatus(err), tt.wantMsg, tt.wantPlain, tt.wantCode)
			}
		})
	}
}

func TestExitStatusAndFailureLine(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     int
		wantLine string
	}{
		{"usage", Usagef("missing program"), 2, "nexus: missing program\n"},
		{"program not found", manifest.ErrNotFound, 2, "nexus: " + manifest.ErrNotFound.Error() + "\n"},
		{"plain, morloc's words", &ExitError{Code: 1, Err: errors.New("evaluation failed: nope"), Plain: true}, 1, "Error: evaluation failed: nope\n"},
		{"own status", &ExitError{Code: 3, Err: errors.New("x")}, 3, "nexus: x\n"},
		{"any other", errors.New("pool py: gone"), 1, "nexus: pool py: gone\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeFailure(&b, tt.err)
			if code := ExitStatus(tt.err); code != tt.code || b.String() != tt.wantLine {
				t.Errorf("exit %d, line %q; want %d, %q", code, b.String(), tt.code, tt.wantLine)
			}
		})
	}
}

func returnOf(t *testing.T, schema string) *manifest.Return {
	t.Helper()
	typ, err := manifest.ParseType(schema)
	if err != nil {
		t.Fatal(err)
	}
	return &manifest.Return{Schema: schema, T: typ}
}

// The result as morloc's nexus prints it: a JSON line, nothing for a
// top-level null unless --keep-null (but always for a version-1
// manifest, as morloc 0.69 printed it), or a file for --output-file.
func TestWriteResult(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.json")
	current := &manifest.Manifest{}
	v1 := &manifest.Manifest{Format: manifest.FormatV1}
	tests := []struct {
		name     string
		m        *manifest.Manifest
		schema   string
		value    string
		opts     runOptions
		wantOut  string
		wantFile string
	}{
		{"a value", current, "j", "42", runOptions{}, "42\n", ""},
		{"a top-level null", current, "?j", "null", runOptions{}, "", ""},
		{"a kept null", current, "?j", "null", runOptions{keepNull: true}, "null\n", ""},
		{"a null under morloc 0.69", v1, "?j", "null", runOptions{}, "null\n", ""},
		{"an output file", current, "j", "42", runOptions{outputFile: file}, "", "42\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(file)
			var out bytes.Buffer
			if err := writeResult(&out, tt.m, "cmd", returnOf(t, tt.schema), ndarray.Value{JSON: json.RawMessage(tt.value)}, tt.opts); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(file)
			if out.String() != tt.wantOut || string(data) != tt.wantFile {
				t.Errorf("stdout %q, file %q; want %q, %q", out.String(), data, tt.wantOut, tt.wantFile)
			}
		})
	}
	// A result that is not of the command's type fails the run.
	err := writeResult(&bytes.Buffer{}, current, "cmd", returnOf(t, "j"), ndarray.Value{JSON: json.RawMessage(`"x"`)}, runOptions{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.HasPrefix(err.Error(), "'cmd' returned a string") {
		t.Errorf("a string for an Int: %v, want 'cmd' returned ..., exit 1", err)
	}
}

func TestParseNexusOptions(t *testing.T) {
	tests := []struct {
		name    string
		tokens  []string
		want    runOptions
		wantSet []string // name=value given to setFlag
		wantErr string
		check   func(*Options) bool
	}{
		{name: "output file, short and joined", tokens: []string{"-oout.json", "--keep-null"}, want: runOptions{outputFile: "out.json", keepNull: true}},
		{name: "output form json", tokens: []string{"-f", "json"}, want: runOptions{formExplicit: true}},
		{name: "a leading option among them", tokens: []string{"--mcp-config", "--wsl"}, want: runOptions{leading: "--mcp-config", wsl: true}},
		{name: "help", tokens: []string{"-h"}, want: runOptions{help: true}},
		{name: "nexus's own flags", tokens: []string{"--timeout=2s", "--workers", "3"}, wantSet: []string{"timeout=2s", "workers=3"},
			check: func(o *Options) bool { return o.TimeoutGiven }},
		{name: "quiet", tokens: []string{"-q"}, check: func(o *Options) bool { return o.LogLevel == "error" }},
		{name: "morloc's, refused", tokens: []string{"--print"}, wantErr: "--print is an option of morloc's nexus that nexus does not have"},
		{name: "unknown", tokens: []string{"--frobnicate"}, wantErr: "unknown nexus option --frobnicate"},
		{name: "another form", tokens: []string{"-f", "yaml"}, wantErr: "nexus writes JSON only"},
		{name: "a value missing", tokens: []string{"--output-file"}, wantErr: "needs a value"},
		{name: "a value for a switch", tokens: []string{"--keep-null=yes"}, wantErr: "takes no value"},
		{name: "a bare word", tokens: []string{"word"}, wantErr: "unexpected argument 'word' before the command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Options{LogLevel: "info", LogFormat: "text"}
			var set []string
			got, err := parseNexusOptions(o, tt.tokens, func(name, value string) error {
				set = append(set, name+"="+value)
				return nil
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ExitStatus(err) != 2 {
					t.Errorf("error %v, want a usage error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || strings.Join(set, " ") != strings.Join(tt.wantSet, " ") || (tt.check != nil && !tt.check(o)) {
				t.Errorf("got %+v, set %v, err %v, options %+v; want %+v, set %v", got, set, err, o, tt.want, tt.wantSet)
			}
		})
	}
}

// The CLI's call goes through the Caller: a refused pure command fails in
// morloc's words, a string with a NUL byte is refused before any pool
// starts, and a pool command runs with its pool.
func TestCallOnce(t *testing.T) {
	ctx := context.Background()
	pure := load(t, exampleProgram("pure"))
	o := &Options{Command: "run", OutputDir: t.TempDir(), StartTimeout: DefaultStartTimeout}
	_, stop, err := o.callOnce(ctx, pure.Manifest, "binInt", jsonArgs(command(t, pure.Manifest, "binInt"), json.RawMessage("1"), json.RawMessage(`"f"`)), nil)
	var ee *ExitError
	if want := golden(t, 24, "binInt", "binInt").Refusal; !errors.As(err, &ee) || !ee.Plain || !strings.Contains(err.Error(), "pure command 'binInt' uses "+want) {
		t.Errorf("binInt: %v, want a plain refusal naming %s", err, want)
	}
	stop()

	// Its pool cannot start (no such program): the check must come first.
	m := &manifest.Manifest{Name: "nul", Dir: t.TempDir(),
		Pools:    []manifest.Pool{{Lang: "py", Exec: []string{"/nonexistent/pool"}, Runtime: manifest.RuntimeMorloc}},
		Commands: []manifest.Command{{Name: "echo", Type: manifest.Remote, Pool: 0, Mid: 1, NeededPools: []int{0}}}}
	_, stop, err = o.callOnce(ctx, m, "echo", jsonArgs(&m.Commands[0], json.RawMessage(`"a\u0000b"`)), nil)
	stop()
	if !errors.As(err, &ee) || !ee.Plain || !strings.Contains(err.Error(), "py does not support embedded NUL bytes in strings") {
		t.Errorf("a NUL byte for a morloc py pool: %v, want morloc's refusal", err)
	}

	if _, err := exec.LookPath("python3"); err != nil {
		testenv.MissingTool(t, "python3 runs testdata/shapes' pool")
	}
	shapes := load(t, exampleProgram("shapes"))
	call := cliCall(t, shapes.Manifest, "addInt", "41")
	v, stop, err := o.callOnce(ctx, shapes.Manifest, "addInt", call, nil)
	stop()
	if err != nil || rendered(t, call, v) != "42" {
		t.Errorf("addInt 41 = %s, %v; want 42", v.JSON, err)
	}
	_, stop, err = o.callOnce(ctx, shapes.Manifest, "fail", cliCall(t, shapes.Manifest, "fail", "oops"), nil)
	stop()
	if !errors.As(err, &ee) || ee.Plain || !strings.HasPrefix(err.Error(), "fail: ") || !strings.Contains(err.Error(), "boom: oops") {
		t.Errorf("fail oops: %v, want fail: ... boom: oops", err)
	}
}
