package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// An unshaped argument whose source is auto (a list, a record: morloc's
// compiler gives a Str or a scalar source inline, manifest fillShape) is
// read as morloc's classifier reads it (v0.98 morloc-runtime cli.rs
// classify_arg_source; v0.69 cli.c parse_cli_data_argument_singular):
// "-" or "/dev/stdin" stands for the whole of stdin (once per run), the
// name of an existing file for that file's contents, anything else for
// itself. That is how a value too large for a command line (the kernel
// caps one argv string at 128 KiB) reaches a command. A token shaped like
// JSON is itself even if a file has its name (a file named [7] does not
// shadow the list). Only regular files are read: a directory's name stays
// a word, which the type then refuses. Arguments with a source, form or
// check other than these defaults are read by cliText (shape.go).

// Where a CLI argument's value comes from (argSource).
const (
	fromText = iota
	fromStdin
	fromFile
)

// argSource classifies the token of an auto-source argument.
func argSource(text string) int {
	switch {
	case text == "":
		return fromText
	case text == "-" || text == "/dev/stdin":
		return fromStdin
	case jsonShaped(text):
		return fromText
	}
	if st, err := os.Stat(text); err == nil && st.Mode().IsRegular() {
		return fromFile
	}
	return fromText
}

func fileError(path string, err error) error {
	return fmt.Errorf("the argument '%s' is a filename, but it can't be read: %w", path, err)
}

// value reads one CLI token for the argument a as a value of type t.
// index ≥ 0 says it is the whole argument of that index (not an element of
// a variadic one, not a field), which is read from stdin or a file when
// its source is auto, and which may become an array (with r.arrays on), as
// over MCP (fastPositional), so that it reaches its pool as raw numbers
// (docs/internals.md, "Arrays"; for a morloc pool, msgpack written
// straight from them), with no JSON text of it kept. msg says what is
// wrong.
func (r *cliReader) value(a *manifest.Arg, t *manifest.Type, text string, index int) (json.RawMessage, string) {
	if a == nil || (a.Shaped() && !a.Many) {
		return r.cliText(a, t, text)
	}
	quoted := a.Quoted
	src := fromText
	if index >= 0 && !quoted && !a.Many && a.Source == manifest.SourceAuto {
		src = argSource(text)
	}
	data := []byte(text)
	switch src {
	case fromText:
		if index >= 0 && !quoted && !a.Many && a.Source == manifest.SourceAuto && looksLikePath(text) && !r.fs.exists(text) {
			return nil, fmt.Sprintf("file '%s' not found", text) // morloc's words (cli.rs read_argv_bytes)
		}
	case fromStdin:
		b, err := r.readStdin()
		if err != nil {
			return nil, fmt.Sprintf("reading the value from stdin: %v", err)
		}
		data = b
	case fromFile:
		if raw, ok, err := r.streamed(text, t, index); ok || err != nil {
			if err != nil {
				return nil, err.Error()
			}
			return raw, ""
		}
		b, err := r.fs.readFile(text)
		if err != nil {
			return nil, fileError(text, err).Error()
		}
		if binaryData(b, text) {
			// form auto: msgpack or a morloc data packet (loadData)
			v, err := loadData(b, text, t)
			if err != nil {
				return nil, err.Error()
			}
			return v, ""
		}
		data = b
	}
	if _, _, nest := numericNest(t); nest {
		if r.arrays && index >= 0 && len(data) >= cliArrayMinBytes && bytes.IndexByte(data, '"') < 0 {
			e := &fastEncoder{b: data, arrayMin: DefaultArrayMin, path: []ndarray.Step{{Idx: index}}}
			if end, ok := e.value(t, jsontext.SkipSpace(data, 0), 0); ok && jsontext.SkipSpace(data, end) == len(data) && len(e.arrays) > 0 {
				r.collected = append(r.collected, e.arrays...)
				return e.out, ""
			}
		}
		if raw, ok := fastNumericText(data, t); ok {
			return raw, ""
		}
	}
	if src != fromText {
		text = string(data)
	}
	return parseText(text, t, quoted)
}

// binaryData reports whether a file's bytes are msgpack or a morloc
// packet rather than JSON text, as loadData tells them apart.
func binaryData(b []byte, path string) bool {
	return strings.HasSuffix(path, ".mpk") || strings.HasSuffix(path, ".msgpack") ||
		len(b) >= morlocwire.HeaderSize && morlocwire.IsPacket(b)
}

// streamed reads a large file argument that holds lists of numbers
// straight into an array (readNumericFile); ok is false when it is not one.
func (r *cliReader) streamed(path string, t *manifest.Type, index int) (json.RawMessage, bool, error) {
	if !r.arrays || index < 0 || strings.HasSuffix(path, ".mpk") || strings.HasSuffix(path, ".msgpack") {
		return nil, false, nil
	}
	if _, _, nest := numericNest(t); !nest {
		return nil, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fileError(path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() < streamFileMin {
		return nil, false, nil
	}
	a, ok, err := readNumericFile(f, t, index)
	if err != nil {
		return nil, false, fileError(path, err)
	}
	if !ok {
		return nil, false, nil
	}
	r.collected = append(r.collected, a)
	return json.RawMessage("null"), true, nil
}

// recordText is the text of a group's whole record, which is parsed
// elsewhere: stdin's or a file's contents, or the token itself, as for an
// auto-source argument (a record's source is auto).
func (r *cliReader) recordText(text string) (string, error) {
	switch argSource(text) {
	case fromStdin:
		b, err := r.readStdin()
		if err != nil {
			return "", fmt.Errorf("reading the value from stdin: %w", err)
		}
		return string(b), nil
	case fromFile:
		b, err := r.fs.readFile(text)
		if err != nil {
			return "", fileError(text, err)
		}
		return string(b), nil
	}
	return text, nil
}

// cliArrayMinBytes is the size from which a numeric list is read into an
// array: below it, DefaultArrayMin elements cannot fit.
const cliArrayMinBytes = 2 * DefaultArrayMin

// fastNumericText writes the JSON text of a numeric nest t (lists of Int
// or Real) in pool form in one pass, with no decoded tree: what the
// generic path (a json.Decoder into any, then toPool) writes, at a
// fraction of its time and memory for a million numbers. ok is false when
// the text is anything else or unusual; the generic path then decides,
// with its error messages.
func fastNumericText(b []byte, t *manifest.Type) (json.RawMessage, bool) {
	if _, _, nest := numericNest(t); !nest {
		return nil, false
	}
	i := jsontext.SkipSpace(b, 0)
	e := &fastEncoder{b: b, out: make([]byte, 0, len(b)+len(b)/8)}
	end, ok := e.value(t, i, 0)
	if !ok || jsontext.SkipSpace(b, end) != len(b) || len(e.arrays) > 0 {
		return nil, false // arrays: "NaN" and the like, which the CLI's JSON does not take
	}
	return e.out, true
}
