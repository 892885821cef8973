package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// examplePrograms lists the commands (internal ones included, in manifest
// order) of the programs under testdata/ that this package vouches for.
var examplePrograms = map[string][]string{
	"combat": {"rollAdv", "fighterDamage", "intro"},
	"shapes": {
		"noArgs", "addInt", "halveReal", "shout", "negate", "sumMany", "maybeDouble", "scale", "greet",
		"verbose", "configure", "configureWhole", "swapPair", "mapSize", "person", "fail", "chatty", "sleepMs",
		"echo", "progressSteps", "renderLines", "mlcp_renderLines_upper", "mlcp_renderLines_count",
		"readStdin", "tableSum", "openFile", "nameClash", "pureAnswer",
	},
}

// TestExamplePrograms loads every testdata/*/manifest.json with the real
// loader, so an example that drifts from the format fails here first.
func TestExamplePrograms(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		prog := filepath.Base(filepath.Dir(file))
		seen[prog] = true
		t.Run(prog, func(t *testing.T) {
			m, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Commands) == 0 {
				t.Fatal("no commands")
			}
			mids := map[[2]int]string{}
			for _, c := range m.Commands {
				if c.Type != Remote {
					continue
				}
				k := [2]int{c.Pool, c.Mid}
				if other, dup := mids[k]; dup {
					t.Errorf("%s and %s share mid %d in pool %d", other, c.Name, c.Mid, c.Pool)
				}
				mids[k] = c.Name
			}
			want, known := examplePrograms[prog]
			if !known {
				return // another package's example: it loads and its mids are distinct, nothing more
			}
			for _, p := range m.Pools {
				if script := p.Exec[len(p.Exec)-1]; !filepath.IsAbs(script) {
					if _, err := os.Stat(filepath.Join(m.Dir, script)); err != nil {
						t.Errorf("pool %s: %v", p.Lang, err)
					}
				}
			}
			var names []string
			for _, c := range m.Commands {
				names = append(names, c.Name)
			}
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Errorf("commands\n got %v\nwant %v", names, want)
			}
		})
	}
	for prog := range examplePrograms {
		if !seen[prog] {
			t.Errorf("testdata/%s/manifest.json is missing", prog)
		}
	}
}

// TestExampleProgramsUseNexusRuntime: every pool of every program under
// testdata/ (nested ones too: testdata/bad/...) is written against nexus's
// runtime, so each must say "runtime": "nexus", or nexus would start it as a
// pool morloc compiled (docs/spec.md §2.2). testdata/morloc and directories
// named morloc-* hold programs morloc compiled, whose pools are morloc's.
func TestExampleProgramsUseNexusRuntime(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "morloc" || strings.HasPrefix(d.Name(), "morloc-")) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "manifest.json" {
			return nil
		}
		m, err := Load(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		for i, p := range m.Pools {
			n++
			if p.Runtime != RuntimeNexus {
				t.Errorf("%s: pools[%d] (%s) has runtime %q: its metadata needs \"runtime\": \"nexus\"", path, i, p.Lang, p.Runtime)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("found %d pools under testdata, expected the examples' 20 or more", n)
	}
}

// TestShapesProgram pins the argument shapes that testdata/README.md promises
// for each command of the shapes program.
func TestShapesProgram(t *testing.T) {
	m, err := Load(filepath.Join("..", "..", "testdata", "shapes"))
	if err != nil {
		t.Fatal(err)
	}
	arg := func(cmd string, i int) Arg { t.Helper(); return argOf(t, m, cmd, i) }
	ret := func(cmd string) string { return m.Command(cmd).Return.Schema }

	tests := []struct {
		what      string
		got, want any
	}{
		{"noArgs arguments", len(m.Command("noArgs").Args), 0},
		{"addInt", arg("addInt", 0).Schema + "→" + ret("addInt"), "j→j"},
		{"halveReal", arg("halveReal", 0).Schema + "→" + ret("halveReal"), "f8→f8"},
		{"shout", arg("shout", 0).Schema + "→" + ret("shout"), "s→s"},
		{"negate", arg("negate", 0).Schema + "→" + ret("negate"), "b→b"},
		{"sumMany many", arg("sumMany", 0).Many, true},
		{"sumMany schema", arg("sumMany", 0).Schema, "aj"},
		{"maybeDouble", arg("maybeDouble", 0).Schema + "→" + ret("maybeDouble"), "?j→?j"},
		{"scale factor", arg("scale", 1).Kind + " " + arg("scale", 1).Short + " " + arg("scale", 1).Long + " " + deref(arg("scale", 1).Default), "opt f factor 2.5"},
		{"greet greeting default", deref(arg("greet", 0).Default), `"hello"`},
		{"greet who name", deref(arg("greet", 1).Name), "who"},
		{"verbose flag", arg("verbose", 0).Kind + " " + arg("verbose", 0).LongRev + " " + deref(arg("verbose", 0).Default), "flag no-verbose false"},
		{"configure unrolled", arg("configure", 0).GroupOpt == nil, true},
		{"configure entries", len(arg("configure", 0).Entries), 3},
		{"configureWhole option", arg("configureWhole", 0).GroupOpt != nil && arg("configureWhole", 0).GroupOpt.Long == "sys-config", true},
		{"configureWhole returns the record", m.Command("configureWhole").Return.T.IsRecord(), true},
		{"swapPair", arg("swapPair", 0).Schema + "→" + ret("swapPair"), "t2sj→t2js"},
		{"mapSize is a map", arg("mapSize", 0).T.IsMap(), true},
		{"person returns a record", ret("person"), "m24names3agej"},
		{"renderLines terminals", len(m.Command("renderLines").Terminals), 2},
		{"renderLines entries are internal", m.Command("mlcp_renderLines_upper").Internal && m.Command("mlcp_renderLines_count").Internal, true},
		{"readStdin stdin", arg("readStdin", 0).Stdin, true},
		{"tableSum table", arg("tableSum", 0).T.Kind, Table},
		{"openFile handle", m.Command("openFile").Return.T.Kind, File},
		{"nameClash pos name", deref(arg("nameClash", 0).Name), arg("nameClash", 1).Long},
		{"pureAnswer type", m.Command("pureAnswer").Type, Pure},
		{"pureAnswer expr", pureExpr(t, m.Command("pureAnswer").Expr), "lit j j 42"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	for _, c := range m.Commands {
		if !c.Internal && len(c.Desc) == 0 {
			t.Errorf("%s has no docstring", c.Name)
		}
	}
}

func pureExpr(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var e struct {
		Tag, Schema, Value string
		LitType            string `json:"lit_type"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("expr %s: %v", raw, err)
	}
	return strings.Join([]string{e.Tag, e.Schema, e.LitType, e.Value}, " ")
}

// argOf is argument i of command cmd of m, which must have it.
func argOf(t *testing.T, m *Manifest, cmd string, i int) Arg {
	t.Helper()
	c := m.Command(cmd)
	if c == nil || i >= len(c.Args) {
		t.Fatalf("%s has no argument %d", cmd, i)
	}
	return c.Args[i]
}

// deref is *s, "<nil>" for nil.
func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
