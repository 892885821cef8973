package argmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// cliStdin is where a CLI argument given as "-" is read from (tests swap it).
var cliStdin io.Reader = os.Stdin

// argInput is the text of a data argument as morloc's nexus takes it
// (v0.69 cli.c parse_cli_data_argument_singular; v0.98 morloc-runtime
// cli.rs classify_arg_source): "-" or "/dev/stdin" stands for the whole of
// stdin, the name of an existing file for that file's contents (read says
// which), anything else for itself. That is how a value too large for a
// command line (the kernel caps one argv string at 128 KiB) reaches a
// command. As in 0.98, a token shaped like a JSON literal is itself even
// if a file has its name (a file named 42 does not shadow the number). A
// quoted (literal) argument is its own text always: morloc quotes it
// before it looks for a file. Only regular files are read: a directory's
// name stays a word, where morloc fails to read it.
func argInput(text string, quoted bool) (data []byte, read bool, err error) {
	switch src, path := argSource(text, quoted); src {
	case fromStdin:
		var b bytes.Buffer
		if f, ok := cliStdin.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				b.Grow(int(st.Size()) + 1) // redirected from a file: read it in one go
			}
		}
		if _, err := b.ReadFrom(cliStdin); err != nil {
			return nil, false, fmt.Errorf("reading the value from stdin: %w", err)
		}
		return b.Bytes(), true, nil
	case fromFile:
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, false, fileError(path, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

func fileError(path string, err error) error {
	return fmt.Errorf("%s names a file, but it cannot be read: %w", path, err)
}

// Where a CLI argument's value comes from (argSource).
const (
	fromText = iota
	fromStdin
	fromFile
)

// argSource classifies a data argument as argInput reads it.
func argSource(text string, quoted bool) (int, string) {
	switch {
	case quoted || text == "":
		return fromText, ""
	case text == "-" || text == "/dev/stdin":
		return fromStdin, ""
	case jsonLiteralShape(text):
		return fromText, ""
	}
	if st, err := os.Stat(text); err == nil && st.Mode().IsRegular() {
		return fromFile, text
	}
	return fromText, ""
}

// jsonLiteralShape reports whether text starts as a JSON value does: a
// string, object, list or number, or is null, true or false (0.98's
// is_json_literal_shape).
func jsonLiteralShape(text string) bool {
	switch c := text[0]; {
	case c == '"' || c == '{' || c == '[' || c >= '0' && c <= '9':
		return true
	case c == '-':
		return len(text) > 1 && text[1] >= '0' && text[1] <= '9'
	}
	return text == "null" || text == "true" || text == "false"
}

// cliParser reads the values of one command line's arguments. With
// arrays on (CLICall), a whole argument that is a large list of numbers
// goes into an array as it is read, as over MCP (fastPositional), so that
// it reaches its pool as raw numbers (docs/pool-protocol.md, "Arrays";
// for a morloc pool, msgpack written straight from them), with no JSON
// text of it kept.
type cliParser struct {
	arrays    bool
	collected []ndarray.Array
}

// value reads text as a value of type t. index ≥ 0 says it is the whole
// argument of that index (not an element of a variadic one, not a field),
// which may become an array; msg says what is wrong with the text.
func (cp *cliParser) value(text string, t *manifest.Type, quoted bool, index int) (json.RawMessage, string, error) {
	if raw, ok, err := cp.streamed(text, t, quoted, index); ok || err != nil {
		return raw, "", err
	}
	data, read, err := argInput(text, quoted)
	if err != nil {
		return nil, "", err
	}
	if _, _, nest := numericNest(t); nest {
		if !read {
			data = []byte(text)
		}
		if cp != nil && cp.arrays && index >= 0 && len(data) >= cliArrayMinBytes && bytes.IndexByte(data, '"') < 0 {
			e := &fastEncoder{b: data, arrayMin: DefaultArrayMin, path: []pathElem{{idx: index}}}
			if end, ok := e.value(t, jsontext.SkipSpace(data, 0), 0); ok && jsontext.SkipSpace(data, end) == len(data) && len(e.arrays) > 0 {
				cp.collected = append(cp.collected, e.arrays...)
				return e.out, "", nil
			}
		}
		if raw, ok := fastNumericText(data, t); ok {
			return raw, "", nil
		}
	}
	if read {
		text = string(data)
	}
	raw, msg := parseText(text, t, quoted)
	return raw, msg, nil
}

// streamed reads a large file argument that holds lists of numbers
// straight into an array (readNumericFile); ok is false when it is not one.
func (cp *cliParser) streamed(text string, t *manifest.Type, quoted bool, index int) (json.RawMessage, bool, error) {
	if cp == nil || !cp.arrays || index < 0 {
		return nil, false, nil
	}
	if _, _, nest := numericNest(t); !nest {
		return nil, false, nil
	}
	src, path := argSource(text, quoted)
	if src != fromFile {
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
	cp.collected = append(cp.collected, a)
	return json.RawMessage("null"), true, nil
}

// text is the text of a value that is parsed as a whole elsewhere (a
// group's record): a file's or stdin's contents, as argInput says.
func (cp *cliParser) text(text string) (string, error) {
	data, read, err := argInput(text, false)
	if err != nil || !read {
		return text, err
	}
	return string(data), nil
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
