package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/spec.md is the contract that code comments cite by section number,
// so its numbering is fixed and every section cited must exist. It also
// stands alone: people clone the repository without the documents it was
// first written from.
func TestSpecSections(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(repoRoot, "docs", "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec) > specMaxBytes {
		t.Errorf("docs/spec.md is %d bytes, over its budget of %d", len(spec), specMaxBytes)
	}
	for _, bad := range docsForbidden.FindAll(spec, -1) {
		t.Errorf("docs/spec.md names %q: it must not depend on documents outside the repository or on issue numbers", bad)
	}
	have := specHeadings(spec)
	for _, want := range fixedSpecSections() {
		if !have[want] {
			t.Errorf("docs/spec.md has no section %s, whose number code cites", want)
		}
	}
	cites, err := specCitations(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cites {
		if !have[c.section] {
			t.Errorf("%s cites docs/spec.md §%s, which does not exist", c.at, c.section)
		}
	}
}

// The heading and citation readers find what they are meant to.
func TestSpecReaders(t *testing.T) {
	doc := []byte("# T\n## 1. Words\n### 4.5 Tools\n#### 7.3.15 Handle\nSee §9.\n```\n## 8. not a heading in a block\n```\n")
	got := specHeadings(doc)
	for _, s := range []string{"1", "4.5", "7.3.15"} {
		if !got[s] {
			t.Errorf("heading %s not found in %v", s, got)
		}
	}
	for _, s := range []string{"8", "9"} {
		if got[s] {
			t.Errorf("%s read as a heading", s)
		}
	}
	line := "// as docs/spec.md §4.1 and §4.7 say; docs/spec.md §7.3.1–§7.3.14, then §8."
	sections := citedSections(line)
	if want := "4.1 4.7 7.3.1 7.3.14"; strings.Join(sections, " ") != want {
		t.Errorf("citations of %q: got %v, want %s", line, sections, want)
	}
}

// specMaxBytes is docs/spec.md's share of the docs/ budget.
const specMaxBytes = 36 << 10

// fixedSpecSections are the numbers code is written against.
func fixedSpecSections() []string {
	out := []string{"1", "2", "3", "4", "5", "6", "7", "8"}
	for i := 1; i <= 7; i++ {
		out = append(out, fmt.Sprintf("4.%d", i), fmt.Sprintf("7.%d", i))
	}
	for i := 1; i <= 15; i++ {
		out = append(out, fmt.Sprintf("7.3.%d", i))
	}
	return out
}

var specHeading = regexp.MustCompile(`^#{2,4} (\d+(?:\.\d+)*)\.? `)

// specHeadings returns the section numbers of a markdown text's headings,
// outside fenced code blocks.
func specHeadings(doc []byte) map[string]bool {
	have := map[string]bool{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if m := specHeading.FindStringSubmatch(line); m != nil && !fenced {
			have[m[1]] = true
		}
	}
	return have
}

// specCitation is a section of docs/spec.md that a file cites.
type specCitation struct{ at, section string }

// specCitations lists every citation of docs/spec.md in the repository's
// code and documents.
func specCitations(root string) ([]specCitation, error) {
	var out []specCitation
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "__pycache__":
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "e2e/spec_test.go" || !citesSpec(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, s := range citedSections(line) {
				out = append(out, specCitation{at: fmt.Sprintf("%s:%d", rel, i+1), section: s})
			}
		}
		return nil
	})
	return out, err
}

// citesSpec reports whether a file is one whose citations are checked.
func citesSpec(rel string) bool {
	switch path.Ext(rel) {
	case ".go", ".sh", ".py", ".R", ".cpp", ".hpp", ".md":
		return true
	}
	return path.Base(rel) == "Makefile"
}

var (
	specCite    = regexp.MustCompile(`docs/spec\.md,? ((?:(?:, |,| and | or |–|-)?§\d+(?:\.\d+)*)+)`)
	specSection = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
)

// citedSections returns the sections a line cites: "docs/spec.md §4.1 and
// §4.7" cites 4.1 and 4.7.
func citedSections(line string) []string {
	var out []string
	for _, m := range specCite.FindAllStringSubmatch(line, -1) {
		for _, s := range specSection.FindAllStringSubmatch(m[1], -1) {
			out = append(out, s[1])
		}
	}
	return out
}
