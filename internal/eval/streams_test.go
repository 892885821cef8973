package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// fakeStreams records what a run does with its streams, one line per call.
type fakeStreams struct {
	log     []string
	failAt  string // a call ("create", "write", ...) that fails
	aborted int
}

type fakeStream struct {
	s    *fakeStreams
	name string
}

func (f *fakeStreams) fail(call string) error {
	if f.failAt == call {
		return errors.New("disk full")
	}
	return nil
}

func (f *fakeStreams) open(kind, name, schema string) (Stream, error) {
	f.log = append(f.log, fmt.Sprintf("%s %s %s", kind, name, schema))
	if err := f.fail(kind); err != nil {
		return nil, err
	}
	return &fakeStream{s: f, name: name}, nil
}

func (f *fakeStreams) Create(path, schema string) (Stream, error) {
	return f.open("create", path, schema)
}
func (f *fakeStreams) Append(path, schema string) (Stream, error) {
	return f.open("append", path, schema)
}
func (f *fakeStreams) Std(name, schema string) (Stream, error) { return f.open("std", name, schema) }

func (s *fakeStream) Write(level int, v json.RawMessage) error {
	s.s.log = append(s.s.log, fmt.Sprintf("write %s %d %s", s.name, level, v))
	return s.s.fail("write")
}
func (s *fakeStream) Flush() error {
	s.s.log = append(s.s.log, "flush "+s.name)
	return s.s.fail("flush")
}
func (s *fakeStream) Close() error {
	s.s.log = append(s.s.log, "close "+s.name)
	return s.s.fail("close")
}
func (s *fakeStream) Abort() { s.s.aborted++ }

// The writers of testdata/morloc/write-pure, as morloc 0.98.2 compiled
// them, run in order against the Streams given.
func TestStreamsWritePure(t *testing.T) {
	m, err := manifest.Load("../../testdata/morloc/write-pure/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd  string
		args []string
		out  string
		log  []string
	}{
		{"streamInts", nil, "null", []string{"std stdout aj", "write stdout 0 [1,2,3]", "flush stdout", "write stdout 0 [4,5]", "close stdout"}},
		{"streamPairs", nil, "null", []string{"std stdout at2sj", `write stdout 0 [["a",1],["bb",2]]`, "close stdout"}},
		{"streamEmpty", nil, "null", []string{"std stdout aj", "close stdout"}},
		{"streamStrs", []string{`["x","y"]`}, "null", []string{"std stdout as", `write stdout 0 ["x","y"]`, "close stdout"}},
		{"writeInts", []string{`"out.dat"`}, "null", []string{"create out.dat aj", "write out.dat 0 [10,20,30]", "flush out.dat", "write out.dat 0 [40,50]", "close out.dat"}},
		{"appendInts", []string{`"out.dat"`, `[6,7]`}, "null", []string{"append out.dat aj", "write out.dat 0 [6,7]", "close out.dat"}},
		{"writeTwice", []string{`"w.dat"`}, "2", []string{"create w.dat as", `write w.dat 0 ["x","y"]`, "close w.dat"}},
		{"errInts", nil, "null", []string{"std stderr aj", "write stderr 0 [7]", "close stderr"}},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			p, err := CompileCommand(m.Command(c.cmd), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := p.Refusal(); r != "" {
				t.Fatalf("refused: %s", r)
			}
			var args []json.RawMessage
			for _, a := range c.args {
				args = append(args, json.RawMessage(a))
			}
			fs := &fakeStreams{}
			out, err := p.RunWith(context.Background(), args, RunOptions{Streams: fs})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.out {
				t.Errorf("result %s, want %s", out, c.out)
			}
			if got := strings.Join(fs.log, "\n"); got != strings.Join(c.log, "\n") {
				t.Errorf("calls:\n%s\nwant:\n%s", got, strings.Join(c.log, "\n"))
			}
			if fs.aborted != 0 {
				t.Errorf("%d streams aborted", fs.aborted)
			}
		})
	}
	if got := mustCompile(t, m, "writeInts").Writes(); strings.Join(got, " ") != "@open" {
		t.Errorf("Writes() = %v", got)
	}
	if got := mustCompile(t, m, "streamInts").Writes(); strings.Join(got, " ") != "@stdout" {
		t.Errorf("Writes() = %v", got)
	}
}

func mustCompile(t *testing.T, m *manifest.Manifest, name string) *Program {
	t.Helper()
	p, err := CompileCommand(m.Command(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A stream that fails is a catchable error naming the intrinsic; a run
// that fails, or ends, with a stream open discards it; with no Streams
// the writers are Unsupported.
func TestStreamsFailures(t *testing.T) {
	m, err := manifest.Load("../../testdata/morloc/write-pure/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd, failAt, err string
		kind             ErrorKind
		aborted          int
	}{
		{"writeInts", "create", "@open 'out.dat': disk full", Thrown, 0},
		{"writeInts", "write", "@write: disk full", Thrown, 1},
		{"writeInts", "flush", "@flush: disk full", Thrown, 1},
		{"streamInts", "close", "@close: disk full", Internal, 0},
		{"streamInts", "std", "@stdout: disk full", Thrown, 0},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+c.failAt, func(t *testing.T) {
			p := mustCompile(t, m, c.cmd)
			fs := &fakeStreams{failAt: c.failAt}
			var args []json.RawMessage
			if c.cmd == "writeInts" {
				args = []json.RawMessage{json.RawMessage(`"out.dat"`)}
			}
			_, err := p.RunWith(context.Background(), args, RunOptions{Streams: fs})
			var e *Error
			if !errors.As(err, &e) || e.Msg != c.err || e.Kind != c.kind {
				t.Fatalf("error %v (%#v), want %q of kind %v", err, e, c.err, c.kind)
			}
			if fs.aborted != c.aborted {
				t.Errorf("%d streams aborted, want %d", fs.aborted, c.aborted)
			}
		})
	}
	p := mustCompile(t, m, "writeInts")
	_, err = p.Run(context.Background(), []json.RawMessage{json.RawMessage(`"out.dat"`)})
	var e *Error
	if !errors.As(err, &e) || e.Kind != Unsupported || !strings.Contains(e.Msg, "@open cannot run here") {
		t.Errorf("Run with no Streams: %v", err)
	}
	// A handle used after @close is a catchable error.
	closeTwice := let("z", "o", `{"tag":"stdout","schema":"aj"}`,
		let("z", "_a", `{"tag":"close","handle":`+bound("O", "o")+`}`,
			`{"tag":"flush","handle":`+bound("O", "o")+`}`))
	p, err = Compile(json.RawMessage(closeTwice), nil, "z", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.RunWith(context.Background(), nil, RunOptions{Streams: &fakeStreams{}})
	if !errors.As(err, &e) || e.Kind != Thrown || e.Msg != "@flush on a closed stream" {
		t.Errorf("flush after close: %v", err)
	}
}
