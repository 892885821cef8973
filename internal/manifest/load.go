package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Error is a fault in a manifest: the file, the JSON path of the fault, and
// what was expected there.
type Error struct {
	File string
	Path string // e.g. "commands[1].args[0].schema"; empty for the whole file
	Msg  string
	// Embedded is true when File is a launcher script and Path is a path
	// inside the manifest it embeds.
	Embedded bool
}

func (e *Error) Error() string {
	file := e.File
	if e.Embedded {
		file += " (embedded after " + manifestMarker + ")"
	}
	if e.Path == "" {
		return fmt.Sprintf("manifest %s: %s", file, e.Msg)
	}
	return fmt.Sprintf("manifest %s: at %s: %s", file, e.Path, e.Msg)
}

// ErrNotFound is wrapped by every error that means "there is no program
// there" (as opposed to "the program there is broken").
var ErrNotFound = errors.New("program not found")

// Load resolves target (a manifest file, a directory holding manifest.json,
// or a launcher script) and reads the manifest it names.
func Load(target string) (*Manifest, error) {
	path, err := Resolve(target)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return Parse(path, data)
}

// Parse decodes and validates manifest bytes; path names the file in errors
// and anchors relative paths. The bytes may be a manifest.json (morloc 0.97
// on, and nexus's own programs) or a launcher script embedding its manifest
// after a `### MANIFEST ###` line: version 1 (morloc 0.69 to 0.74), which is
// converted into the same structs, or the unversioned schema (0.75 to 0.96).
func Parse(path string, data []byte) (*Manifest, error) {
	m, err := parse(path, data)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = path
			if _, embedded := embeddedManifest(data); embedded {
				e.Embedded = true
			}
		}
		return nil, err
	}
	return m, nil
}

func parse(path string, data []byte) (*Manifest, error) {
	fail := func(p, format string, a ...any) error {
		return &Error{Path: p, Msg: fmt.Sprintf(format, a...)}
	}
	payload, format := data, FormatFile
	if off, ok := embeddedManifest(data); ok {
		payload, format = data[off:], FormatEmbedded
	} else if bytes.HasPrefix(data, []byte("#!")) {
		return nil, fail("", "a script with no %q line: expected a manifest or a launcher that embeds one", manifestMarker)
	}
	// Syntax errors are placed in the whole file, so a launcher's line
	// numbers are right.
	at := func(pos int64) (int, int) { return lineCol(data, int64(len(data)-len(payload))+pos) }
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset counts the bytes read, the offending one included.
			line, col := at(se.Offset - 1)
			return nil, fail("", "not valid JSON at line %d, column %d: %v", line, col, err)
		case errors.Is(err, io.EOF):
			if format == FormatEmbedded {
				return nil, fail("", "not valid JSON: nothing follows the %q line", manifestMarker)
			}
			return nil, fail("", "not valid JSON: the file is empty")
		case errors.Is(err, io.ErrUnexpectedEOF):
			line, col := at(int64(len(payload)))
			return nil, fail("", "not valid JSON at line %d, column %d: unexpected end of file", line, col)
		}
		return nil, fail("", "not valid JSON: %v", err)
	}
	// dec.More() misses a stray '}' or ']', so look at the bytes themselves.
	rest := payload[dec.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		line, col := at(int64(len(payload) - len(trimmed)))
		return nil, fail("", "not valid JSON at line %d, column %d: trailing data after the top-level object", line, col)
	}
	// Version 1 says so, and has build_dir where the later schema has a
	// build object (which may sit beside a "version" of someone else's).
	if obj, ok := raw.(map[string]any); ok {
		_, versioned := obj["version"]
		_, later := obj["build"]
		if versioned && !later {
			return parseV1(path, raw, payload)
		}
	}
	if err := checkShape(raw, "", manifestShape); err != nil {
		return nil, err
	}
	m := &Manifest{Path: path, Format: format}
	if err := json.Unmarshal(payload, m); err != nil {
		return nil, fail("", "%v", err)
	}
	m.Dir = buildDir(path, m.Build.Path)
	m.readDefaults(raw)
	if m.InlineSize != nil && *m.InlineSize < 0 {
		return nil, fail("inline_size", "expected a size in bytes (0 or more) or null, got %d", *m.InlineSize)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// buildDir is the pools' working directory: the build directory the
// manifest records (absolute up to morloc 0.96, "." from 0.97), relative
// to the manifest's own directory; that directory when it records none.
func buildDir(manifestPath, recorded string) string {
	dir := filepath.Dir(manifestPath)
	switch {
	case recorded == "":
		return dir
	case filepath.IsAbs(recorded):
		return filepath.Clean(recorded)
	}
	return filepath.Join(dir, recorded)
}

// lineCol turns the 0-based byte index pos into a 1-based line and column.
func lineCol(data []byte, pos int64) (int, int) {
	pos = max(0, min(pos, int64(len(data))))
	before := data[:pos]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(pos) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// validate checks the rules of docs/spec.md §2 that JSON shape alone does not
// and parses every type string.
func (m *Manifest) validate() error {
	fail := func(p, format string, a ...any) error {
		return &Error{Path: p, Msg: fmt.Sprintf(format, a...)}
	}
	if m.Name == "" {
		return fail("name", "expected a non-empty program name")
	}
	for i, p := range m.Pools {
		at := fmt.Sprintf("pools[%d]", i)
		if p.Lang == "" {
			return fail(at+".lang", "expected a language name such as \"py\", \"r\" or \"cpp\"")
		}
		if len(p.Exec) == 0 || p.Exec[0] == "" {
			return fail(at+".exec", "expected a non-empty argv array to start the pool")
		}
		rt, err := parseRuntime(p.Metadata["runtime"])
		if err != nil {
			return fail(at+".metadata.runtime", "%v", err)
		}
		m.Pools[i].Runtime = rt
		w, err := parseWorkers(p.Metadata["workers"])
		if err != nil {
			return fail(at+".metadata.workers", "%v", err)
		}
		m.Pools[i].Workers = w
		if m.Pools[i].Arrays, err = parseArrays(p.Metadata["arrays"]); err != nil {
			return fail(at+".metadata.arrays", "%v", err)
		}
	}
	names := map[string]int{}
	for i := range m.Commands {
		c := &m.Commands[i]
		at := fmt.Sprintf("commands[%d]", i)
		if c.Name == "" {
			return fail(at+".name", "expected a non-empty command name")
		}
		if j, dup := names[c.Name]; dup {
			return fail(at+".name", "command %q is already defined at commands[%d]", c.Name, j)
		}
		names[c.Name] = i
		switch c.Type {
		case Remote:
			if c.Pool < 0 || c.Pool >= len(m.Pools) {
				return fail(at+".pool", "pool index %d out of range: the manifest has %d pool(s)", c.Pool, len(m.Pools))
			}
			for k, np := range c.NeededPools {
				if np < 0 || np >= len(m.Pools) {
					return fail(fmt.Sprintf("%s.needed_pools[%d]", at, k), "pool index %d out of range: the manifest has %d pool(s)", np, len(m.Pools))
				}
			}
		case Pure:
		default:
			return fail(at+".type", "unknown command type %q (expected \"remote\" or \"pure\")", c.Type)
		}
		if err := c.parseTypes(at); err != nil {
			return err
		}
		m.readShapes(c, at)
		timeout, err := parseTimeout(c.Metadata["timeout"])
		if err != nil {
			return fail(at+".metadata.timeout", "%v", err)
		}
		c.Timeout = timeout
	}
	for i := range m.Commands {
		c := &m.Commands[i]
		for k, t := range c.Terminals {
			at := fmt.Sprintf("commands[%d].terminals[%d]", i, k)
			if t.Long == "" && t.Short == "" {
				return fail(at, "expected a terminal with a long or short name")
			}
			if _, ok := names[t.Entry]; !ok {
				return fail(at+".entry", "entry %q names no command in the manifest", t.Entry)
			}
		}
	}
	return m.parseFeatures()
}

func (c *Command) parseTypes(at string) error {
	fail := func(p, format string, a ...any) error {
		return &Error{Path: p, Msg: fmt.Sprintf(format, a...)}
	}
	rt, err := ParseType(c.Return.Schema)
	if err != nil {
		return fail(at+".return.schema", "%v", err)
	}
	c.Return.T = rt
	for j := range c.Args {
		a := &c.Args[j]
		aat := fmt.Sprintf("%s.args[%d]", at, j)
		switch a.Kind {
		case KindPos, KindOpt:
			t, err := ParseType(a.Schema)
			if err != nil {
				return fail(aat+".schema", "%v", err)
			}
			a.T = t
			if a.Kind == KindOpt && a.Long == "" && a.Short == "" {
				return fail(aat, "expected an option with a long or short name")
			}
		case KindFlag:
			a.T = &Type{Kind: Bool, Code: "b"}
			if a.Long == "" && a.Short == "" {
				return fail(aat, "expected a flag with a long or short name")
			}
		case KindGrp:
			t, err := ParseType(a.Schema)
			if err != nil {
				return fail(aat+".schema", "%v", err)
			}
			if !t.IsRecord() {
				return fail(aat+".schema", "expected a record type (m...) for a group argument, got a %s", t.Unwrap().Kind)
			}
			a.T = t
			rec := t.Unwrap()
			for k := range a.Entries {
				e := &a.Entries[k]
				eat := fmt.Sprintf("%s.entries[%d]", aat, k)
				var ft *Type
				for _, f := range rec.Fields {
					if f.Key == e.Key {
						ft = f.Type
					}
				}
				if ft == nil {
					return fail(eat+".key", "field %q is not in the group's record %s", e.Key, a.Schema)
				}
				if e.Arg.Kind != KindOpt && e.Arg.Kind != KindFlag {
					return fail(eat+".arg.kind", "expected \"opt\" or \"flag\", got %q", e.Arg.Kind)
				}
				if e.Arg.Kind == KindFlag && ft.Kind != Bool {
					return fail(eat+".arg.kind", "a flag sets a Bool, but field %q of %s is a %s", e.Key, a.Schema, ft.Kind)
				}
				e.Arg.T = ft
			}
		default:
			return fail(aat+".kind", "unknown argument kind %q (expected \"pos\", \"opt\", \"flag\" or \"grp\")", a.Kind)
		}
	}
	return nil
}
