package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The repository needs nothing outside itself, as a fresh clone has nothing
// beside it: no test, script, Makefile rule or program under testdata names
// a path that leaves it. This is the static half of the check;
// scripts/self-contained.sh, run by make test, is the other: it runs the
// tests in a copy of the tracked files whose parent directory holds nothing.
//
// A line that may name an outside path, as one optional source among others
// with a fallback (make deps may take morloc from ../shared), says so with a
// comment holding outsideRepoMarker and why, on that line or the one before.
func TestNothingReachesOutsideTheRepository(t *testing.T) {
	findings, allowed, err := scanRepository(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allowed {
		t.Logf("allowed by its %q comment: %s", outsideRepoMarker, f)
	}
	for _, f := range findings {
		t.Errorf("reaches outside the repository: %s", f)
	}
	if len(findings) > 0 {
		t.Logf("copy what a test needs into testdata/; a build step that may use an outside source says so with a %q comment", outsideRepoMarker)
	}
}

// The scanner finds what it is meant to find, and lets the rest be.
func TestScanForOutsidePaths(t *testing.T) {
	tests := []struct {
		name string
		file string // repository-relative
		text string
		want int // findings
	}{
		{"the old golden path", "e2e/cli_test.go", `package e2e
var golden = filepath.Join(repoRoot, "..", "shared", "golden", "x.json")`, 1},
		{"a parent of the root", "e2e/x_test.go", `package e2e
var up = filepath.Dir(repoRoot)`, 1},
		{"a literal escaping the package", "internal/argmap/x_test.go", `package argmap
var p = "../../../shared/golden/x.json"`, 1},
		{"a Join escaping the package", "internal/argmap/x_test.go", `package argmap
var p = filepath.Join("..", "..", "..", "seeds")`, 1},
		{"the machine's /work", "internal/pool/x_test.go", `package pool
var p = "/work/shared/SPEC.md"`, 1},
		{"in-repo testdata", "internal/argmap/x_test.go", `package argmap
var a = "../../testdata/json-help/manifest.json"
var b = filepath.Join("..", "..", "testdata", "shapes")
var c = filepath.Join(repoRoot, "testdata", "combat")`, 0},
		{"comments are not reads", "internal/eval/doc.go", `// PURE.md in ../shared and /work/shared
package eval`, 0},
		{"a marked Go line", "e2e/x_test.go", `package e2e
// outside-repo: an optional source; the test skips without it
var p = filepath.Join(repoRoot, "..", "shared")`, 0},
		{"a Makefile rule", "Makefile", "deps:\n\t../shared/morloc/build.sh\n", 1},
		{"a marked Makefile rule", "Makefile", "deps:\n\t# outside-repo: one source among others, with a fallback\n\ttest -x ../shared/morloc/build.sh && ../shared/morloc/build.sh || ./scripts/fetch-morloc.sh\n", 0},
		{"a script at the root", "scripts/x.sh", "cd \"$(dirname \"$0\")/..\"\ncat ../shared/SPEC.md\n", 1},
		{"a script's own directory", "scripts/x.sh", "cd \"$(dirname \"$0\")/..\"\nconf=\"$(cd \"$(dirname \"$0\")/..\" && pwd)/e2e\"\n", 0},
		{"an absolute path into /work", ".ci/run", "cp /work/shared/golden/x.json testdata/\n", 1},
		{"a shell comment", "scripts/x.sh", "# ../shared/morloc has the sources\nexit 0\n", 0},
		{"a Python join", "testdata/pure/gen.py", `HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, "..", "..", "internal", "eval")
OUT = os.path.join(HERE, "..", "..", "..", "shared")`, 1},
		{"a C++ include", "testdata/numeric/pools/cpp/pool.cpp", "#include \"../../../../../shared/x.hpp\"\n", 1},
		{"system paths", "scripts/x.sh", "[ -f /usr/include/nlohmann/json.hpp ] && /usr/bin/python3 -c 1 >/dev/null\necho {1..3} ...\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings, _, err := scanFile(tt.file, []byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != tt.want {
				t.Errorf("%d findings, want %d: %q", len(findings), tt.want, findings)
			}
		})
	}
}

// outsideRepoMarker, in a comment, allows the line it is on, or the next
// line, to name a path outside the repository.
const outsideRepoMarker = "outside-repo:"

// scanRepository scans the repository's sources, scripts and Makefile
// (build outputs, node_modules and fuzz corpora left out) and returns what
// reaches outside it, and what a marker allowed to, as "file:line: what".
func scanRepository(root string) (findings, allowed []string, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "__pycache__", "fuzz":
				return fs.SkipDir
			}
			return nil
		}
		// This file's own examples name outside paths on purpose.
		if !scanned(rel) || rel == "e2e/selfcontained_test.go" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, a, err := scanFile(rel, data)
		findings = append(findings, f...)
		allowed = append(allowed, a...)
		return err
	})
	return findings, allowed, err
}

// scanned reports whether a repository file is one the check reads: Go,
// scripts, the Makefile, and the pools and clients under testdata and e2e.
func scanned(rel string) bool {
	switch path.Ext(rel) {
	case ".go", ".sh", ".py", ".R", ".mjs", ".js", ".cpp", ".hpp":
		return true
	}
	return rel == "Makefile" || strings.HasPrefix(rel, ".ci/") || strings.HasPrefix(rel, "scripts/")
}

// workPath names the development machine's tree (/work/shared, the other
// worktrees), which no clone has.
var workPath = regexp.MustCompile(`(^|[^\w.-])/work(/|$|[^\w.-])`)

// scanFile returns what a file reaches outside the repository, and what a
// marker allowed to. rel is its path in the repository: relative paths in
// Go and in pools resolve against its directory (go test runs in the
// package's), in the Makefile and shell scripts against the root.
func scanFile(rel string, data []byte) (findings, allowed []string, err error) {
	lines := strings.Split(string(data), "\n")
	marked := func(line int) bool { // 1-based
		if strings.Contains(lines[line-1], outsideRepoMarker) {
			return true
		}
		return line > 1 && strings.Contains(lines[line-2], outsideRepoMarker) && isComment(lines[line-2])
	}
	report := func(line int, what string) {
		f := rel + ":" + strconv.Itoa(line) + ": " + what
		if marked(line) {
			allowed = append(allowed, f)
		} else {
			findings = append(findings, f)
		}
	}
	if strings.HasSuffix(rel, ".go") {
		err = scanGo(rel, data, report)
		return findings, allowed, err
	}
	base := path.Dir(rel)
	switch {
	case rel == "Makefile", strings.HasSuffix(rel, ".sh"), strings.HasPrefix(rel, ".ci/"), strings.HasPrefix(rel, "scripts/"):
		base = "."
	}
	for i, line := range lines {
		if isComment(line) {
			continue
		}
		if workPath.MatchString(line) {
			report(i+1, "names /work, the development machine's tree")
		}
		// A script's own directory is a known place.
		for _, self := range []string{`$(dirname "$0")`, `$(dirname "${BASH_SOURCE[0]}")`, `__dirname`} {
			line = strings.ReplaceAll(line, self, path.Dir(rel))
		}
		// os.path.join(x, "..", "..") walks up as x/../.. does.
		line = joinedParents.ReplaceAllString(line, "../")
		for _, word := range pathWords.FindAllString(line, -1) {
			if escapes(base, word) {
				report(i+1, "the path "+word+" leaves the repository")
			}
		}
	}
	return findings, allowed, nil
}

var (
	joinedParents = regexp.MustCompile(`["']\.\.["']\s*,\s*`)
	pathWords     = regexp.MustCompile(`[^\s"'` + "`" + `=(),;:|&<>]+`)
)

// escapes reports whether word, a path relative to base (a directory in the
// repository), leads out of the repository. Words that are not relative
// paths, or start at a place unknown here ($VAR/..), do not.
func escapes(base, word string) bool {
	if strings.HasPrefix(word, "/") || strings.Contains(word, "$") || strings.Contains(word, "://") {
		return false
	}
	parent := false
	for _, c := range strings.Split(word, "/") {
		parent = parent || c == ".."
	}
	if !parent {
		return false
	}
	p := path.Join(base, word)
	return p == ".." || strings.HasPrefix(p, "../")
}

// isComment reports whether a line is only a comment (#, //, /* or *).
func isComment(line string) bool {
	s := strings.TrimSpace(line)
	for _, c := range []string{"#!", "# ", "#\t", "//", "/*", "* "} {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return s == "#" || (strings.HasPrefix(s, "#") && !strings.HasPrefix(s, "#include"))
}

// scanGo reports the Go string literals, and the filepath.Join and
// filepath.Dir calls, that lead out of the repository. Tests run in their
// package's directory; repoRoot, in e2e, is the root.
func scanGo(rel string, data []byte, report func(line int, what string)) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, data, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	dir := path.Dir(rel)
	line := func(n ast.Node) int { return fset.Position(n.Pos()).Line }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			s, ok := stringValue(n)
			if !ok {
				return true
			}
			if workPath.MatchString(s) {
				report(line(n), "names /work, the development machine's tree: "+strconv.Quote(s))
			}
			if escapes(dir, s) {
				report(line(n), "the path "+strconv.Quote(s)+" leaves the repository")
			}
		case *ast.CallExpr:
			switch callName(n) {
			case "filepath.Join", "path.Join":
				if p, ok := joinedPath(dir, n.Args); ok && (p == ".." || strings.HasPrefix(p, "../")) {
					report(line(n), "the path joined here leads to "+p+", outside the repository")
				}
			case "filepath.Dir", "path.Dir":
				if len(n.Args) == 1 && isIdent(n.Args[0], "repoRoot") {
					report(line(n), "the parent of repoRoot is outside the repository")
				}
			}
		}
		return true
	})
	return nil
}

// joinedPath is where a Join call's arguments lead, relative to the root,
// as far as they are known: string literals, with repoRoot or a literal
// first. ok is false when the start is not known.
func joinedPath(dir string, args []ast.Expr) (p string, ok bool) {
	if len(args) == 0 {
		return "", false
	}
	switch {
	case isIdent(args[0], "repoRoot"):
		p = "."
	default:
		s, isLit := literal(args[0])
		if !isLit {
			return "", false
		}
		p = path.Join(dir, s)
	}
	for _, a := range args[1:] {
		s, isLit := literal(a)
		if !isLit {
			break // what follows an unknown element is unknown
		}
		p = path.Join(p, s)
	}
	return p, true
}

func literal(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok {
		return "", false
	}
	return stringValue(lit)
}

func stringValue(lit *ast.BasicLit) (string, bool) {
	if lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func callName(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + sel.Sel.Name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
