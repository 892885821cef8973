package argmap

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// How an argument's value is read when its manifest entry says more than
// "an inline value of its type": the source, form, checks and list fields
// morloc 0.98 writes (manifest/argfields.go). This file follows morloc's
// nexus and runtime at v0.98.2: data/rust/morloc-nexus/src/dispatch.rs
// (apply_checks, substitute_stdio_dash, apply_shape_to_argv,
// process_inline_bytes_escapes) and data/rust/morloc-runtime/src/cli.rs
// (classify_arg_source, dispatch_shape_core, load_morloc_data_file,
// try_bytes_only, try_bytes_hybrid, try_list_with_config). Their error
// texts are kept, so a morloc user reads the same words.
//
// On the CLI every field applies to the token as morloc applies it. Over
// MCP a value is JSON of its type, except a `source: file` argument, whose
// value is a path on nexus's machine that nexus reads (as the CLI does);
// checks apply to the values a client gives.

// wireDialect reads morloc packets in files: manifests with shape fields
// come from morloc 0.97 on, whose packets are the Rust runtime's.
var wireDialect = morlocwire.Rust

// dataFS is the file system the shape fields read; a test may swap it.
type dataFS struct {
	readFile func(string) ([]byte, error)
	exists   func(string) bool
	stdin    io.Reader
}

var osFS = dataFS{
	readFile: os.ReadFile,
	exists: func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	},
	stdin: os.Stdin,
}

// surfaceType is the type of an argument's value as a caller gives it: a
// path (Str) for a `source: file` argument, else its own (argType).
func surfaceType(a *manifest.Arg) *manifest.Type {
	if a != nil && a.IsPath() {
		if a.T.Unwrap().Kind == manifest.Optional {
			return &manifest.Type{Kind: manifest.Optional, Code: "?", Elem: pathType}
		}
		return pathType
	}
	return argType(a)
}

var pathType = &manifest.Type{Kind: manifest.Str, Code: "s"}

// ---- checks ----

// stdioSentinel is morloc's `-` shorthand for a checked path (dispatch.rs
// substitute_stdio_dash): with mode r it is /dev/stdin, with w
// /dev/stdout; otherwise the value as given.
func stdioSentinel(v, mode string) string {
	if v != "-" {
		return v
	}
	switch mode {
	case "r":
		return "/dev/stdin"
	case "w":
		return "/dev/stdout"
	}
	return v
}

// checkPath applies a path check of the given mode to p (dispatch.rs
// apply_path_check): r exists and is readable; w is writable, or does not
// exist in a writable directory; x does not exist, in a writable
// directory; rw exists, readable and writable. The standard-stream
// sentinels pass unchecked, as in morloc.
func checkPath(p, mode string) error {
	if p == "/dev/stdin" || p == "/dev/stdout" {
		return nil
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("check.path: argv '%s' contains an interior NUL byte", p)
	}
	switch mode {
	case "r":
		if syscall.Access(p, 4) != nil {
			return fmt.Errorf("check.path: r requires path '%s' to exist and be readable", p)
		}
	case "w":
		err := syscall.Access(p, 2)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("check.path: w requires path '%s' to be writable (%v)", p, err)
		}
		return parentWritable(p, "w")
	case "x":
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("check.path: x requires path '%s' to not yet exist", p)
		}
		return parentWritable(p, "x")
	case "rw":
		if syscall.Access(p, 4) != nil {
			return fmt.Errorf("check.path: r requires path '%s' to exist and be readable", p)
		}
		if syscall.Access(p, 2) != nil {
			return fmt.Errorf("check.path: rw requires path '%s' to exist and be writable", p)
		}
	default:
		return fmt.Errorf("check.path: unknown mode '%s'; expected one of: r, w, x, rw", mode)
	}
	return nil
}

func parentWritable(p, mode string) error {
	dir := filepath.Dir(p)
	if syscall.Access(dir, 2) != nil {
		return fmt.Errorf("check.path: %s requires parent directory of '%s' to be writable", mode, p)
	}
	return nil
}

// applyChecks runs a's checks on the path p.
func applyChecks(a *manifest.Arg, p string) error {
	for _, c := range a.Checks {
		if c.Kind == manifest.CheckPath {
			if err := checkPath(p, c.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// listCheck is a per-element check, worded as morloc's runtime words it
// (cli.rs apply_list_check).
func listCheck(line, mode string) error {
	if err := checkPath(line, mode); err != nil {
		switch mode {
		case "r":
			return fmt.Errorf("path check :r: '%s' is not readable", line)
		case "x":
			return fmt.Errorf("path check :x: '%s' already exists", line)
		}
		return fmt.Errorf("path check :%s: %s", mode, strings.TrimPrefix(err.Error(), "check.path: "))
	}
	return nil
}

// ---- the CLI token ----

// cliReader reads the CLI tokens of one command line: stdin may be read by
// one argument only (cli.rs claim_stdin).
type cliReader struct {
	fs         dataFS
	stdinTaken bool
	// arrays on (CLICall): a whole argument that is a large list of
	// numbers goes into an array as it is read (cliinput.go).
	arrays    bool
	collected []ndarray.Array
}

func (r *cliReader) readStdin() ([]byte, error) {
	if r.stdinTaken {
		return nil, errors.New("stdin was already consumed by another argument; only one argument may read '-'")
	}
	r.stdinTaken = true
	return io.ReadAll(r.fs.stdin)
}

// jsonShaped is morloc's test for an inline value (cli.rs
// is_json_literal_shape): a string, object or array, a number, or one of
// null, true, false.
func jsonShaped(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" {
		return false
	}
	switch c := t[0]; {
	case c == '"' || c == '{' || c == '[' || (c >= '0' && c <= '9'):
		return true
	case c == '-':
		return len(t) > 1 && t[1] >= '0' && t[1] <= '9'
	}
	switch strings.TrimRight(t, " \t\r\n") {
	case "null", "true", "false":
		return true
	}
	return false
}

var dataExtensions = []string{".json", ".mpk", ".msgpack", ".csv", ".tsv", ".arrow", ".parquet"}

// looksLikePath is cli.rs arg_looks_like_file_path.
func looksLikePath(s string) bool {
	if jsonShaped(s) || s == "-" || s == "" {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	low := strings.ToLower(s)
	for _, e := range dataExtensions {
		if strings.HasSuffix(low, e) {
			return true
		}
	}
	return false
}

// argBytes resolves an auto-source token to its bytes (cli.rs
// read_argv_bytes): stdin for "-" and /dev/stdin, the token itself when it
// is shaped like JSON, an existing file's content; path is the file's
// name ("" for stdin and inline bytes), inline whether the token itself.
func (r *cliReader) argBytes(tok string) (b []byte, path string, inline bool, err error) {
	switch {
	case tok == "-" || tok == "/dev/stdin":
		b, err = r.readStdin()
		return b, "", false, err
	case jsonShaped(tok):
		return []byte(tok), "", true, nil
	case r.fs.exists(tok):
		b, err = r.fs.readFile(tok)
		if err != nil {
			return nil, "", false, fmt.Errorf("the argument '%s' is a filename, but it can't be read", tok)
		}
		return b, tok, false, nil
	case looksLikePath(tok):
		return nil, "", false, fmt.Errorf("file '%s' not found", tok)
	}
	return nil, "", false, fmt.Errorf("argument '%s' is not inline JSON (would have to start with \", {, [, a digit, -digit, or be the bare keyword null/true/false) and is not an existing file path", tok)
}

// cliText reads one CLI token (or a default) for the argument a, whose
// value has type t: a's source, form and checks as morloc's nexus applies
// them, or parseText when a has none. A `source: file` value stays its
// path here (Resolve reads the file, as it does for MCP); a checked path
// has `-` replaced and is checked by Resolve too.
func (r *cliReader) cliText(a *manifest.Arg, t *manifest.Type, text string) (json.RawMessage, string) {
	if a == nil || !a.Shaped() || a.Many {
		quoted := a != nil && a.Quoted
		return parseText(text, t, quoted)
	}
	if a.IsPath() {
		if text == "null" && t.Unwrap().Kind == manifest.Optional {
			return json.RawMessage("null"), ""
		}
		return quoteRaw(text), ""
	}
	if mode := a.PathMode(); mode != "" {
		return parseText(stdioSentinel(text, mode), t, true)
	}
	v, err := r.shaped(a, t, text)
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

// shaped is dispatch_shape_core for an inline or auto source.
func (r *cliReader) shaped(a *manifest.Arg, t *manifest.Type, text string) (json.RawMessage, error) {
	if a.Source == manifest.SourceInline && (a.Form == manifest.FormBytes || a.Form == manifest.FormBytesOnly) {
		// dispatch.rs apply_shape_to_argv: the token's characters are the
		// bytes, with escapes.
		b, err := inlineBytes(text)
		if err != nil {
			return nil, err
		}
		return bytesJSON(b, t)
	}
	if a.Form == manifest.FormAuto {
		if a.Source == manifest.SourceInline || jsonShaped(text) {
			v, msg := parseText(text, t, a.Quoted)
			if msg != "" {
				return nil, errors.New(msg)
			}
			return v, nil
		}
		b, path, _, err := r.argBytes(text)
		if err != nil {
			return nil, err
		}
		return loadData(b, path, t)
	}
	var b []byte
	var path string
	inline := a.Source == manifest.SourceInline
	if inline {
		b = []byte(text)
	} else {
		var err error
		if b, path, inline, err = r.argBytes(text); err != nil {
			return nil, err
		}
	}
	if a.Form == manifest.FormList && inline {
		if !strings.HasPrefix(text, "[") {
			return nil, errors.New("form: list: inline argv is not a JSON array (must start with `[`). Pass a path to a file with one element per line, `-` for stdin, or an inline JSON array like '[1,2,3]'.")
		}
		v, msg := parseText(text, t, false)
		if msg != "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	return readForm(b, path, a, t, r.fs)
}

// inlineBytes is dispatch.rs process_inline_bytes_escapes: the token's
// UTF-8 bytes, with \\ \n \t \r \0 and \xNN.
func inlineBytes(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return nil, errors.New("trailing backslash with no escape character")
		}
		switch s[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case '0':
			out = append(out, 0)
		case 'x':
			if i+2 >= len(s) {
				return nil, errors.New("incomplete `\\x` escape: needs two hex digits")
			}
			h := s[i+1 : i+3]
			v, err := strconv.ParseUint(h, 16, 8)
			if err != nil {
				return nil, fmt.Errorf("invalid `\\x` escape: `\\x%s` must be two hex digits", h)
			}
			out = append(out, byte(v))
			i += 2
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, fmt.Errorf("unrecognized escape: `\\%c`; supported: \\\\ \\n \\t \\r \\0 \\xNN", r)
		}
	}
	return out, nil
}

// bytesJSON is a list of byte values as a value of t (a list of numbers).
func bytesJSON(b []byte, t *manifest.Type) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Itoa(int(c)))
	}
	buf.WriteByte(']')
	return decodeJSONAs(buf.Bytes(), t)
}

// ---- reading bytes by form ----

// readForm reads the bytes of a value (a file's, stdin's, or a token's) as
// a's form says, as a value of type t.
func readForm(b []byte, path string, a *manifest.Arg, t *manifest.Type, fs dataFS) (json.RawMessage, error) {
	switch a.Form {
	case manifest.FormPacket:
		if !morlocwire.IsPacket(b) {
			if len(b) < 4 {
				return nil, errors.New("form: packet requires at least 4 bytes of input")
			}
			return nil, errors.New("form: packet requires the input to begin with the morloc packet magic")
		}
		return loadData(b, "", t)
	case manifest.FormBytes:
		if morlocwire.IsPacket(b) {
			return loadData(b, "", t)
		}
		return bytesOnly(b, t)
	case manifest.FormBytesOnly:
		return bytesOnly(b, t)
	case manifest.FormList:
		return listLines(b, a, t, fs)
	}
	return loadData(b, path, t)
}

// decodeJSONAs reads JSON text b (one value, whitespace around it allowed)
// as a value of t, in the form pools receive.
func decodeJSONAs(b []byte, t *manifest.Type) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: data after the value")
	}
	raw, _, verr := argToPool(t, v)
	if verr != nil {
		return nil, verr
	}
	return raw, nil
}

// loadData reads a data file's bytes as a value of t, as morloc's
// load_morloc_data_file does: raw text for a Str (one trailing newline
// dropped); inf, -inf and nan for a Real; JSON for a .json file; msgpack
// for .mpk and .msgpack; a morloc data packet; JSON when the bytes look
// like it, msgpack otherwise.
func loadData(b []byte, path string, t *manifest.Type) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, errors.New("cannot parse 0-length data")
	}
	base := t.Unwrap()
	if base.Kind == manifest.Optional {
		base = base.Elem.Unwrap()
	}
	if base.Kind == manifest.Str && !morlocwire.IsPacket(b) {
		trimmed := bytes.TrimLeft(b, " \t\r\n\v\f")
		if (len(trimmed) == 0 || trimmed[0] != '"') && utf8.Valid(b) {
			s := strings.TrimSuffix(string(b), "\n")
			s = strings.TrimSuffix(s, "\r")
			return quoteRaw(s), nil
		}
	}
	if base.Kind == manifest.Float {
		switch strings.TrimPrefix(strings.TrimSpace(string(b)), `\`) {
		case "inf":
			return nonFiniteText(math.Inf(1)), nil
		case "-inf":
			return nonFiniteText(math.Inf(-1)), nil
		case "nan":
			return nonFiniteText(math.NaN()), nil
		}
	}
	switch {
	case strings.HasSuffix(path, ".json"):
		return decodeJSONAs(b, t)
	case strings.HasSuffix(path, ".mpk") || strings.HasSuffix(path, ".msgpack"):
		return fromWire(morlocwire.MsgpackJSON(b, t, wireDialect))(t)
	case len(b) >= morlocwire.HeaderSize && morlocwire.IsPacket(b):
		return fromWire(morlocwire.DataPacketJSON(b, t, wireDialect))(t)
	}
	if c := b[0]; (len(b) > 1 && strings.IndexByte("'\"[{tfn\t\n\r 0123456789-", c) >= 0) || (len(b) == 1 && c >= '0' && c <= '9') {
		v, jerr := decodeJSONAs(b, t)
		if jerr == nil {
			return v, nil
		}
		if v, err := fromWire(morlocwire.MsgpackJSON(b, t, wireDialect))(t); err == nil {
			return v, nil
		}
		return nil, jerr
	}
	return fromWire(morlocwire.MsgpackJSON(b, t, wireDialect))(t)
}

// fromWire turns morlocwire's JSON into the form pools receive.
func fromWire(raw json.RawMessage, err error) func(*manifest.Type) (json.RawMessage, error) {
	return func(t *manifest.Type) (json.RawMessage, error) {
		if err != nil {
			return nil, err
		}
		return decodeJSONAs(raw, t)
	}
}

// fixedWidth is an element type form: bytes can hold: a Bool or a sized
// number, with its width.
func fixedWidth(t *manifest.Type) (int, bool) {
	switch t.Kind {
	case manifest.Bool:
		return 1, true
	case manifest.Int, manifest.Float:
		switch t.Code {
		case "i1", "u1":
			return 1, true
		case "i2", "u2":
			return 2, true
		case "i4", "u4", "f4":
			return 4, true
		case "i8", "u8", "f8":
			return 8, true
		}
	}
	return 0, false
}

var scalarNames = map[string]string{"b": "Bool", "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64",
	"u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64", "f4": "F32", "f8": "F64"}

// bytesOnly reads b as the packed little-endian elements of t, a list of
// fixed-width numbers (cli.rs try_bytes_only).
func bytesOnly(b []byte, t *manifest.Type) (json.RawMessage, error) {
	lt := t.Unwrap()
	if lt.Kind == manifest.Optional {
		lt = lt.Elem.Unwrap()
	}
	if lt.Kind != manifest.List {
		return nil, errors.New("form: bytes requires the wire schema to be a<scalar>")
	}
	et := lt.Elem.Unwrap()
	w, ok := fixedWidth(et)
	if !ok {
		return nil, fmt.Errorf("form: bytes requires a fixed-width scalar element; got `%s`", et.Kind)
	}
	name := scalarNames[et.Code]
	if len(b)%w != 0 {
		return nil, fmt.Errorf("form: bytes: input has %d bytes, expected a multiple of %d (the element width for `[%s]`)", len(b), w, name)
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := 0; i < len(b); i += w {
		if i > 0 {
			buf.WriteByte(',')
		}
		e := b[i : i+w]
		switch et.Code {
		case "b":
			if e[0] > 1 {
				return nil, fmt.Errorf("form: bytes: byte at offset %d is 0x%02x; [Bool] requires 0 or 1", i, e[0])
			}
			buf.WriteString(strconv.FormatBool(e[0] == 1))
		case "i1":
			buf.WriteString(strconv.Itoa(int(int8(e[0]))))
		case "u1":
			buf.WriteString(strconv.Itoa(int(e[0])))
		case "i2":
			buf.WriteString(strconv.Itoa(int(int16(le16(e)))))
		case "u2":
			buf.WriteString(strconv.Itoa(int(le16(e))))
		case "i4":
			buf.WriteString(strconv.FormatInt(int64(int32(le32(e))), 10))
		case "u4":
			buf.WriteString(strconv.FormatUint(uint64(le32(e)), 10))
		case "i8":
			buf.WriteString(strconv.FormatInt(int64(le64(e)), 10))
		case "u8":
			buf.WriteString(strconv.FormatUint(le64(e), 10))
		case "f4":
			buf.Write(floatJSON(float64(math.Float32frombits(le32(e))), 32))
		case "f8":
			buf.Write(floatJSON(math.Float64frombits(le64(e)), 64))
		}
	}
	buf.WriteByte(']')
	return decodeJSONAs(buf.Bytes(), t)
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

func floatJSON(f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nonFiniteText(f)
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s)
}

// listLines is form: list (cli.rs try_list_with_config): the bytes are
// UTF-8 text with one element per line (a trailing empty line dropped, a
// trailing \r on each line ignored); a's list fields say how each line is
// read. A list of tuples or records whose lines are not JSON is read as
// a headerless table: tab-, then comma-, then whitespace-separated.
func listLines(b []byte, a *manifest.Arg, t *manifest.Type, fs dataFS) (json.RawMessage, error) {
	lt := t.Unwrap()
	if lt.Kind == manifest.Optional {
		lt = lt.Elem.Unwrap()
	}
	if lt.Kind != manifest.List {
		return nil, errors.New("form: list requires a list-typed wire schema")
	}
	et := lt.Elem
	if !utf8.Valid(b) {
		return nil, errors.New("form: list: input is not valid UTF-8")
	}
	text := string(b)
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	for n, line := range lines {
		for _, c := range a.ListChecks {
			if err := listCheck(line, c.Value); err != nil {
				return nil, fmt.Errorf("form: list: element %d: %v", n+1, err)
			}
		}
	}
	parts := make([]json.RawMessage, 0, len(lines))
	if a.ListSource == manifest.SourceInline {
		eu := et.Unwrap()
		au1 := eu.Kind == manifest.List && eu.Elem.Unwrap().Code == "u1"
		for _, line := range lines {
			switch {
			case au1 && !strings.HasPrefix(strings.TrimLeft(line, " \t"), "["):
				v, err := bytesJSON([]byte(line), et)
				if err != nil {
					return nil, err
				}
				parts = append(parts, v)
			case eu.Kind == manifest.Str || (eu.Kind == manifest.Optional && eu.Elem.Unwrap().Kind == manifest.Str):
				parts = append(parts, quoteRaw(line))
			default:
				parts = append(parts, json.RawMessage(line))
			}
		}
		v, err := decodeJSONAs(joinArray(parts), t)
		if err == nil {
			return v, nil
		}
		if k := et.Unwrap().Kind; k != manifest.Tuple && k != manifest.Record {
			return nil, err
		}
		return tableRows(text, lines, et, t, err)
	}
	for n, line := range lines {
		v, err := listElement(line, a, et, fs)
		if err != nil {
			return nil, fmt.Errorf("form: list: element %d: %v", n+1, err)
		}
		parts = append(parts, v)
	}
	return decodeJSONAs(joinArray(parts), t)
}

// listElement reads one line of a form: list value whose list source is
// file (the line is a path) or auto (classified as a CLI token is).
func listElement(line string, a *manifest.Arg, et *manifest.Type, fs dataFS) (json.RawMessage, error) {
	if a.ListForm != manifest.FormAuto {
		b, err := fs.readFile(line)
		if err != nil {
			return nil, fmt.Errorf("cannot open '%s'", line)
		}
		elem := &manifest.Arg{Kind: manifest.KindPos, Form: a.ListForm}
		return readForm(b, "", elem, et, fs)
	}
	if a.ListSource == manifest.SourceFile {
		b, err := fs.readFile(line)
		if err != nil {
			return nil, fmt.Errorf("The argument '%s' is a filename, but it can't be read", line)
		}
		return loadData(b, line, et)
	}
	r := &cliReader{fs: fs}
	b, path, inline, err := r.argBytes(line)
	if err != nil {
		return nil, err
	}
	if inline {
		return decodeJSONAs(b, et)
	}
	return loadData(b, path, et)
}

// tableRows is the tabular fallback of form: list on tuples and records
// (cli.rs parse_delimited_rows, split_whitespace_rows): each row's cells
// are JSON for their column's type, strings quoted; the first delimiter
// whose rows read as the type wins.
func tableRows(text string, lines []string, et, t *manifest.Type, jsonErr error) (json.RawMessage, error) {
	row := et.Unwrap()
	var cols []*manifest.Type
	var keys []string
	if row.Kind == manifest.Tuple {
		cols = row.Items
	} else {
		for _, f := range row.Fields {
			cols = append(cols, f.Type)
			keys = append(keys, f.Key)
		}
	}
	cell := func(s string, ct *manifest.Type) json.RawMessage {
		if k := ct.Unwrap().Kind; k == manifest.Str || k == manifest.File || k == manifest.InStream || k == manifest.OutStream {
			return quoteRaw(s)
		}
		return json.RawMessage(s)
	}
	build := func(records [][]string) (json.RawMessage, error) {
		rows := make([]json.RawMessage, 0, len(records))
		for n, rec := range records {
			if len(rec) != len(cols) {
				return nil, fmt.Errorf("line %d has %d columns; expected %d", n+1, len(rec), len(cols))
			}
			var b []byte
			if keys == nil {
				b = append(b, '[')
			} else {
				b = append(b, '{')
			}
			for i, c := range rec {
				if i > 0 {
					b = append(b, ',')
				}
				if keys != nil {
					b = append(b, quoteRaw(keys[i])...)
					b = append(b, ':')
				}
				b = append(b, cell(c, cols[i])...)
			}
			if keys == nil {
				b = append(b, ']')
			} else {
				b = append(b, '}')
			}
			rows = append(rows, b)
		}
		return decodeJSONAs(joinArray(rows), t)
	}
	lastErr := jsonErr
	for _, delim := range []rune{'\t', ','} {
		rd := csv.NewReader(strings.NewReader(text))
		rd.Comma = delim
		rd.FieldsPerRecord = -1
		records, err := rd.ReadAll()
		if err == nil {
			var v json.RawMessage
			if v, err = build(records); err == nil {
				return v, nil
			}
		}
		lastErr = err
	}
	var records [][]string
	for _, l := range lines {
		records = append(records, strings.Fields(l))
	}
	if v, err := build(records); err == nil {
		return v, nil
	} else {
		lastErr = err
	}
	return nil, fmt.Errorf("form: list: the lines are neither JSON nor a table of the row type: %v", lastErr)
}

// shapedPlan reports whether a command's arguments (group entries too)
// have a source, form or check to apply.
func shapedPlan(p *plan) bool {
	for _, sl := range p.slots {
		if sl.arg.Shaped() {
			return true
		}
		for _, f := range sl.fields {
			if f.entry != nil && f.entry.Shaped() {
				return true
			}
		}
	}
	return false
}

// argDescription is an argument's tool description: text (its docstring
// and default), then for a `source: file` argument that its value is a
// path on nexus's machine, with the compiler's format hint: an MCP client
// cannot hand nexus a file, so nexus reads it where it runs.
// Other shapes leave the description as morloc writes it.
func argDescription(a *manifest.Arg, text string) string {
	if a == nil || !a.IsPath() {
		return text
	}
	hint := "Path of a file on the machine nexus runs on; nexus reads it, and its content is the value"
	if a.Format != nil && *a.Format != "" && *a.Format != "read the value from the file at this path" {
		hint += " (" + *a.Format + ")"
	}
	hint += "."
	if text == "" {
		return hint
	}
	return text + " " + hint
}

// defaultType is the type an option's default is read as: a path for a
// `source: file` option, else the option's own type.
func defaultType(a *manifest.Arg) *manifest.Type {
	if a.IsPath() {
		return surfaceType(a)
	}
	return a.T
}

// noStdin is the stdin of FromCLI, which reads none.
type noStdin struct{}

func (noStdin) Read([]byte) (int, error) {
	return 0, errors.New("stdin is not read here")
}
