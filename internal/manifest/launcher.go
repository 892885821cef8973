package manifest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Launchers. morloc has written three kinds of launcher script, and nexus
// writes a fourth (docs/spec.md §3, §2.7):
//
//   - morloc 0.69 to 0.88: `exec morloc-nexus "$0" "$@"`, then a line
//     `### MANIFEST ###` and the manifest itself (version 1 up to 0.74, the
//     unversioned schema from 0.75);
//   - morloc 0.89 to 0.96: the same with `exec morloc-nexus run "$0" "$@"`;
//   - morloc 0.97 on: `exec morloc-nexus run '<abs>/manifest.json' "$@"`
//     (or `daemon`), the manifest in a file of its own;
//   - `nexus launcher`: `exec <nexus> run '<manifest path>' "$@"`, where the
//     path may be a launcher of the first two kinds.
//
// A launcher that embeds its manifest is its own manifest file: Resolve
// returns its path, and Parse reads the manifest after the marker.

// manifestMarker is the line after which a launcher embeds its manifest
// (morloc's read_manifest_payload, nexus.c and morloc-manifest/src/lib.rs).
const manifestMarker = "### MANIFEST ###"

// maxLauncherHops bounds launchers naming launchers (a nexus launcher of a
// morloc launcher is two).
const maxLauncherHops = 8

// Resolve finds the file holding the manifest a target names
// (docs/spec.md §3, Targets): a manifest file, a directory holding
// manifest.json, a launcher embedding its manifest (that launcher), or a
// launcher naming a manifest or another launcher.
func Resolve(target string) (string, error) {
	if strings.TrimSpace(target) == "" {
		return "", fmt.Errorf("missing program: give a manifest file, a program directory or a launcher script")
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotFound, target, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %s (looked for a manifest file, a directory holding manifest.json, or a launcher script)", ErrNotFound, target)
	}
	if st.IsDir() {
		p := filepath.Join(abs, "manifest.json")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s is a directory without manifest.json", ErrNotFound, target)
		}
		return p, nil
	}
	return resolveFile(abs, 0)
}

// resolveFile follows launcher scripts from the file path to the file
// holding the manifest.
func resolveFile(path string, hops int) (string, error) {
	if !isScript(path) {
		return path, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotFound, path, err)
	}
	if _, ok := embeddedManifest(data); ok {
		return path, nil
	}
	next, err := launcherTarget(path, data)
	if err != nil {
		return "", err
	}
	if next == path {
		return "", fmt.Errorf("%w: launcher %s runs itself (\"$0\") but has no %q line with a manifest after it", ErrNotFound, path, manifestMarker)
	}
	if hops+1 >= maxLauncherHops {
		return "", fmt.Errorf("%w: launcher %s: more than %d launchers name one another", ErrNotFound, path, maxLauncherHops)
	}
	return resolveFile(next, hops+1)
}

// isScript reports whether the file starts with "#!".
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 2)
	n, _ := io.ReadFull(f, head)
	return n == 2 && string(head) == "#!"
}

// embeddedManifest finds the manifest a launcher script embeds: the bytes
// after the first line (not the shebang) that starts with the marker.
// It returns the payload's offset in data.
func embeddedManifest(data []byte) (int, bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return 0, false
	}
	pos := bytes.IndexByte(data, '\n')
	for pos >= 0 && pos+1 < len(data) {
		line := data[pos+1:]
		end := bytes.IndexByte(line, '\n')
		if bytes.HasPrefix(line, []byte(manifestMarker)) {
			if end < 0 {
				return len(data), true
			}
			return pos + 1 + end + 1, true
		}
		if end < 0 {
			break
		}
		pos += 1 + end
	}
	return 0, false
}

// launcherTarget reads a launcher script whose last exec line is
// `exec <runtime> run|mcp|daemon <path> "$@"` and returns that path ("$0"
// is the script itself; a relative path is relative to the script's
// directory).
func launcherTarget(script string, data []byte) (string, error) {
	var execLine string
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "exec ") {
			execLine = l
		}
	}
	if execLine == "" {
		return "", fmt.Errorf("%w: launcher %s has no `exec ... run '<manifest>'` line", ErrNotFound, script)
	}
	words := shellWords(execLine)
	for i, w := range words {
		if (w == "run" || w == "mcp" || w == "daemon") && i+1 < len(words) {
			p := words[i+1]
			if p == "$0" {
				return script, nil
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(script), p)
			}
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("%w: launcher %s names %s, which does not exist", ErrNotFound, script, p)
			}
			return p, nil
		}
	}
	if len(words) > 2 && words[2] == "$0" {
		return script, nil // morloc ≤ 0.88: exec morloc-nexus "$0" "$@"
	}
	return "", fmt.Errorf("%w: launcher %s: exec line names no manifest after `run`, and no %q line follows it", ErrNotFound, script, manifestMarker)
}

// shellWords splits a line on blanks, honouring single and double quotes
// and backslash escapes, enough for the launchers morloc and nexus write.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
