package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// morloc 0.69 to 0.96 write the manifest into the launcher script `nexus`
// beside the pools, with the absolute path of the directory they were
// built in (version 1's build_dir, the later schema's build.path): the
// pools run there. From 0.78 the pools' paths are absolute too. A bundle
// is unpacked elsewhere, so its copy of the launcher records "." instead,
// the launcher's own directory, where the bundle puts the pools
// (manifest.buildDir reads it so), and paths relative to it.

// launcherMarker is the line after which a launcher embeds its manifest.
const launcherMarker = "### MANIFEST ###"

// ProgramTarget is what `nexus bundle TARGET` loads: TARGET itself, or,
// for a directory that morloc 0.69 to 0.96 built (no manifest.json, but a
// launcher embedding a manifest whose build directory it is), that
// launcher.
func ProgramTarget(target string) (string, error) {
	st, err := os.Stat(target)
	if err != nil || !st.IsDir() {
		return target, nil
	}
	if _, err := os.Stat(filepath.Join(target, "manifest.json")); err == nil {
		return target, nil
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return target, nil
	}
	var found []string
	for _, e := range entries {
		p := filepath.Join(target, e.Name())
		if !e.Type().IsRegular() || !embedsManifest(p) {
			continue
		}
		m, err := manifest.Load(p)
		if err == nil && sameDir(m.Dir, target) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return target, nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s holds %d launchers of programs built there (%s): name the one to bundle", target, len(found), strings.Join(found, ", "))
}

// embedsManifest reports whether the file p is a script holding a
// manifest after the marker line.
func embedsManifest(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(data, []byte("#!")) {
		return false
	}
	_, ok := payloadOffset(data)
	return ok
}

// payloadOffset is where the manifest a launcher embeds begins: after the
// marker's line.
func payloadOffset(data []byte) (int, bool) {
	for off := 0; off < len(data); {
		line := data[off:]
		end := bytes.IndexByte(line, '\n')
		if end < 0 {
			end = len(line)
		}
		if strings.TrimRight(string(line[:end]), "\r \t") == launcherMarker {
			return min(off+end+1, len(data)), true
		}
		off += end + 1
	}
	return 0, false
}

// relocatedLauncher is the launcher m was read from with its recorded
// build directory made ".", or nil when m is not embedded in a launcher
// or records no absolute directory. It is read back to check that its
// pools now run in its own directory.
func relocatedLauncher(m *manifest.Manifest) ([]byte, error) {
	if m.Format == manifest.FormatFile || !filepath.IsAbs(m.Build.Path) {
		return nil, nil
	}
	data, err := os.ReadFile(m.Path)
	if err != nil {
		return nil, err
	}
	off, ok := payloadOffset(data)
	if !ok {
		return nil, fmt.Errorf("%s: no %q line", m.Path, launcherMarker)
	}
	payload := data[off:]
	start, end, ok := valueSpan(payload, "build_dir")
	if !ok {
		if bs, be, found := valueSpan(payload, "build"); found {
			if ps, pe, found := valueSpan(payload[bs:be], "path"); found {
				start, end, ok = bs+ps, bs+pe, true
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s: the embedded manifest records its build directory %s, but neither as build_dir nor as build.path", m.Path, m.Build.Path)
	}
	// Every string that starts in the build directory (the pools' paths)
	// starts in "." instead: relative, as JSON writes the directory.
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(filepath.Clean(m.Build.Path) + "/"); err != nil {
		return nil, err
	}
	prefix := bytes.TrimSuffix(bytes.TrimSpace(quoted.Bytes()), []byte(`"`))
	rest := bytes.ReplaceAll(payload[end:], prefix, []byte(`"`))
	out := append(append(append(append([]byte{}, data[:off]...), bytes.ReplaceAll(payload[:start], prefix, []byte(`"`))...), `"."`...), rest...)
	again, err := manifest.Parse(m.Path, out)
	if err != nil {
		return nil, fmt.Errorf("%s with its build directory made \".\": %w", m.Path, err)
	}
	if !sameDir(again.Dir, filepath.Dir(m.Path)) {
		return nil, fmt.Errorf("%s with its build directory made \".\" runs its pools in %s", m.Path, again.Dir)
	}
	return out, nil
}

// valueSpan is the byte span of the value of key in the JSON object data
// (the last, when the key repeats: the one a decoder keeps).
func valueSpan(data []byte, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return start, end, ok
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return start, end, ok
		}
		if k == key {
			end = int(dec.InputOffset())
			start, ok = end-len(raw), true
		}
	}
	return start, end, ok
}

// sameDir reports whether a and b (absolute, or relative to the working
// directory) are one directory, links resolved.
func sameDir(a, b string) bool {
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p
	}
	return resolve(a) == resolve(b)
}
