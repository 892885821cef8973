package program

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// exampleProgram is the directory of one of testdata's example programs.
func exampleProgram(name string) string { return filepath.Join("..", "..", "testdata", name) }

// goldenCase is one command of a golden fixture of morloc's pure commands
// (internal/eval/testdata/golden): the answers these tests expect are
// morloc's, not nexus's own.
type goldenCase struct {
	Name        string            `json:"name"`
	Call        []json.RawMessage `json:"call"`
	Expect      *string           `json:"expect"`
	ExpectError string            `json:"expect_error"`
	Refusal     string            `json:"refusal"`
}

// golden reads fixture n's command name; prog is its name in
// testdata/pure, which numbers a name two fixtures share.
func golden(t *testing.T, n int, name, prog string) goldenCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "eval", "testdata", "golden", fmt.Sprintf("case%02d.json", n)))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct{ Commands []goldenCase }
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	for _, c := range fx.Commands {
		if c.Name == name {
			c.Name = prog
			return c
		}
	}
	t.Fatalf("fixture %d has no command %s", n, name)
	return goldenCase{}
}

// load loads a program for a test, its exclusion notes on stderr.
func load(t *testing.T, target string) *Program {
	t.Helper()
	p, err := Load(target, &Options{})
	if err != nil {
		t.Fatalf("Load(%s): %v", target, err)
	}
	return p
}

// command finds a command of m by name.
func command(t *testing.T, m *manifest.Manifest, name string) *manifest.Command {
	t.Helper()
	for i := range m.Commands {
		if m.Commands[i].Name == name {
			return &m.Commands[i]
		}
	}
	t.Fatalf("%s has no command %s", m.Name, name)
	return nil
}

// cliCall builds a call as the CLI reads it from argv.
func cliCall(t *testing.T, m *manifest.Manifest, name string, argv ...string) argmap.Call {
	t.Helper()
	call, err := argmap.CLICall(m, command(t, m, name), argv)
	if err != nil {
		t.Fatalf("%s %v: %v", name, argv, err)
	}
	return call
}

// jsonArgs builds a call from JSON values, one an argument.
func jsonArgs(c *manifest.Command, values ...json.RawMessage) argmap.Call {
	return argmap.Call{Command: c, Args: values}
}

// writeManifest writes a program with no pools and the given pure
// commands (JSON objects) as dir/manifest.json.
func writeManifest(t *testing.T, dir, name string, commands ...string) {
	t.Helper()
	cmds := "[" + strings.Join(commands, ",") + "]"
	text := `{"name": "` + name + `", "build": {"path": ".", "time": 1, "morloc_version": "0.98.2", "build_params": ""},
		"pools": [], "commands": ` + cmds + `, "groups": [], "desc": [], "epilogues": [],
		"unsafe_skip_null_check": false, "inline_size": null, "no_shm": false, "tmpdir": null,
		"run_log": null, "capabilities": [], "metadata": {}}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pureLiteral is a pure command with no arguments whose expression is the
// Int literal value.
func pureLiteral(name, value string) string {
	return `{"name": "` + name + `", "type": "pure", "desc": [], "args": [],
		"return": {"schema": "j", "type": "Int", "desc": [], "constraints": [], "metadata": {}},
		"expr": {"tag": "lit", "schema": "j", "lit_type": "j", "value": "` + value + `"},
		"constraints": [], "internal": false, "terminals": [], "metadata": {}, "group": null}`
}
