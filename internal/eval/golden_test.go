package eval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenCase is one fixture of testdata/golden: one of docs/spec.md §7.6's
// golden cases.
type goldenCase struct {
	Case     int             `json:"case"`
	Test     string          `json:"test"`
	Scope    string          `json:"scope"`
	Commands []goldenCommand `json:"commands"`
}

type goldenCommand struct {
	Name        string            `json:"name"`
	Args        []Param           `json:"args"`
	Return      string            `json:"return"`
	Expr        json.RawMessage   `json:"expr"`
	Call        []json.RawMessage `json:"call"`
	Expect      *string           `json:"expect"`
	ExpectError string            `json:"expect_error"`
	ErrorKind   string            `json:"error_kind"`
	Refusal     string            `json:"refusal"`
	Files       map[string]string `json:"files"`
}

// goldenFile is a fixture and the file it was read from.
type goldenFile struct {
	path string
	goldenCase
}

// goldenFiles reads the 25 fixtures of testdata/golden.
func goldenFiles(t testing.TB) []goldenFile {
	t.Helper()
	paths, err := filepath.Glob("testdata/golden/case*.json")
	if err != nil || len(paths) != 25 {
		t.Fatalf("want 25 golden cases, found %d (%v)", len(paths), err)
	}
	files := make([]goldenFile, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[i].path = path
		if err := json.Unmarshal(data, &files[i].goldenCase); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return files
}

// TestGolden evaluates every command of the golden cases (testdata/golden,
// docs/spec.md §7.6) and compares its output with morloc's, byte for byte.
func TestGolden(t *testing.T) {
	for _, gc := range goldenFiles(t) {
		for _, c := range gc.Commands {
			t.Run(filepath.Base(gc.path)+"/"+c.Name, func(t *testing.T) {
				dir := t.TempDir()
				p, err := Compile(c.Expr, c.Args, c.Return, &Options{Dir: dir})
				if err != nil {
					t.Fatalf("compile: %v", err)
				}
				if got := p.Refusal(); (got != "") != (c.Refusal != "") || !strings.Contains(got, c.Refusal) {
					t.Errorf("Refusal() = %q, want it to name %q", got, c.Refusal)
				}
				args := make([]json.RawMessage, len(c.Call))
				for i, a := range c.Call {
					args[i] = json.RawMessage(strings.ReplaceAll(string(a), "<tmpdir>", dir))
				}
				out, err := p.Run(context.Background(), args)
				if c.ExpectError != "" {
					var e *Error
					if !errors.As(err, &e) {
						t.Fatalf("want an error containing %q, got %s, %v", c.ExpectError, out, err)
					}
					if !strings.Contains(e.Msg, c.ExpectError) || e.Kind.String() != c.ErrorKind {
						t.Fatalf("error = %q (%s), want %q (%s)", e.Msg, e.Kind, c.ExpectError, c.ErrorKind)
					}
					return
				}
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if c.Expect == nil || string(out) != *c.Expect {
					t.Fatalf("got  %s\nwant %s", out, deref(c.Expect))
				}
				for name, want := range c.Files {
					got, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil || string(got) != want {
						t.Errorf("file %s = %q (%v), want %q", name, got, err, want)
					}
				}
			})
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nothing>"
	}
	return *s
}
