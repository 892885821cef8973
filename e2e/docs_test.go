package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The documents stay small enough to read whole: each of docs/*.md at most
// docsFileMax bytes, all of them together docsTotalMax, README.md
// readmeMax. They stand alone (no issue numbers, nothing outside the
// repository), and every relative link and #anchor among them resolves.
func TestDocsStayWithinBudget(t *testing.T) {
	for _, p := range docsProblems(repoRoot) {
		t.Error(p)
	}
}

// The checker finds each kind of fault it is meant to.
func TestDocsProblemsFindsFaults(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# R\nSee [a](docs/a.md#the-a-section) and [gone](docs/gone.md).\n"+strings.Repeat("x", readmeMax))
	write("docs/a.md", "# A\n## The `a` section\nAs issue 12 said, see ../shared/x.\n"+
		"[b](b.md#nowhere) [ok](#the-a-section) [self](#missing) [web](https://example.org/x#y)\n"+
		"```\n[in a block](nothing.md)\n```\nAlso docs/other.md.\n")
	write("docs/b.md", "# B\n"+strings.Repeat("y", docsFileMax))
	for _, name := range []string{"c", "d", "e"} {
		write("docs/"+name+".md", strings.Repeat("z", docsFileMax-1000))
	}
	got := strings.Join(docsProblems(root), "\n")
	// The faults seeded above are found; what is fine is not reported.
	checkSays(t, "the problems found", got, []string{
		"docs/b.md is", "README.md is", "docs/ together are",
		`docs/a.md names "issue 12"`, `docs/a.md names "../shared"`,
		"README.md links docs/gone.md", "docs/a.md links b.md#nowhere", "docs/a.md links #missing",
		"docs/a.md names docs/other.md",
	}, []string{"the-a-section", "example.org", "nothing.md"})
}

func TestHeadingAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"`nexus run` and launchers: morloc's command line": "nexus-run-and-launchers-morlocs-command-line",
		"HTTPS and HTTP/3": "https-and-http3",
		"4.5 Tools":        "45-tools",
		"Talk-back: elicitation, sampling, roots": "talk-back-elicitation-sampling-roots",
	} {
		if got := headingAnchor(heading); got != want {
			t.Errorf("headingAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

const (
	docsFileMax  = 40_000
	docsTotalMax = 150_000
	readmeMax    = 16_000
)

var (
	docsForbidden = regexp.MustCompile(`\.\./shared|SPEC\.md|PURE\.md|morloc-pool-protocol|[Ii]ssue \d+`)
	docsLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	docsNamed     = regexp.MustCompile(`docs/[a-z0-9-]+\.md`)
	docsCode      = regexp.MustCompile("`[^`]*`")
)

// docsProblems checks the documents under root: README.md and docs/*.md.
func docsProblems(root string) []string {
	var problems []string
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	sort.Strings(docs)
	total := 0
	for _, p := range docs {
		total += docSize(p)
		if n := docSize(p); n > docsFileMax {
			problems = append(problems, fmt.Sprintf("%s is %d bytes, over %d", docPath(root, p), n, docsFileMax))
		}
	}
	if total > docsTotalMax {
		problems = append(problems, fmt.Sprintf("docs/ together are %d bytes, over %d", total, docsTotalMax))
	}
	readme := filepath.Join(root, "README.md")
	if n := docSize(readme); n > readmeMax {
		problems = append(problems, fmt.Sprintf("README.md is %d bytes, over %d", n, readmeMax))
	}
	for _, p := range append([]string{readme}, docs...) {
		text, err := os.ReadFile(p)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, bad := range docsForbidden.FindAll(text, -1) {
			problems = append(problems, fmt.Sprintf("%s names %q: a document must stand alone, without issue numbers or files outside the repository", docPath(root, p), bad))
		}
		named := map[string]bool{}
		for _, name := range docsNamed.FindAllString(string(text), -1) {
			if !named[name] && !docExists(filepath.Join(root, name)) {
				problems = append(problems, fmt.Sprintf("%s names %s, which does not exist", docPath(root, p), name))
			}
			named[name] = true
		}
		for _, target := range markdownLinks(text) {
			if msg := linkProblem(p, target); msg != "" {
				problems = append(problems, fmt.Sprintf("%s links %s: %s", docPath(root, p), target, msg))
			}
		}
	}
	return problems
}

// markdownLinks returns the targets of a document's inline links, outside
// fenced blocks and code spans.
func markdownLinks(text []byte) []string {
	var out []string
	for _, line := range proseLines(text) {
		for _, m := range docsLink.FindAllStringSubmatch(docsCode.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// proseLines returns a document's lines outside fenced code blocks.
func proseLines(text []byte) []string {
	var out []string
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		} else if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// linkProblem says what is wrong with a relative link from the document at
// from, or "" when its file and anchor exist; links with a scheme are not
// followed.
func linkProblem(from, target string) string {
	if strings.Contains(strings.SplitN(target, "#", 2)[0], ":") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	path := from
	if file != "" {
		path = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
	}
	if !docExists(path) {
		return "no such file"
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return ""
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if !markdownAnchors(text)[anchor] {
		return "no such heading"
	}
	return ""
}

// markdownAnchors returns the anchors GitHub gives a document's headings.
func markdownAnchors(text []byte) map[string]bool {
	have := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		a := headingAnchor(heading)
		if n := seen[a]; n > 0 {
			have[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			have[a] = true
		}
		seen[a]++
	}
	return have
}

// headingAnchor is GitHub's anchor for a heading: lower case, punctuation
// dropped but for hyphens and underscores, spaces as hyphens.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func docSize(p string) int {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

func docExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func docPath(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}
