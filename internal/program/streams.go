package program

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// What a pure command's output streams write (eval.Streams; docs/spec.md
// §7.3.15): files in morloc's stream file format, stderr as morloc's raw
// stream framing, and stdout as morloc's nexus renders a stream with its
// default `-f json`: one JSON array of every element written, `[]` for
// none, the elements printed as a returned list is (stdio_server.rs
// do_write).

// runStreams opens the streams of one pure run. stdout is where a
// @stdout stream goes; nil refuses one (over MCP, where stdout is the
// protocol's). The files it created or appended to are kept, in order,
// for a tool's result to name.
type runStreams struct {
	stdout io.Writer
	mu     sync.Mutex
	files  []writtenFile
}

type writtenFile struct {
	path, schema string
	elements     int
}

func streamType(schema string) (*manifest.Type, error) {
	t, err := manifest.ParseType(schema)
	if err != nil {
		return nil, err
	}
	if t.Unwrap().Kind != manifest.List {
		return nil, fmt.Errorf("a stream holds a list type, not %s", schema)
	}
	return t, nil
}

func (s *runStreams) Create(path, schema string) (eval.Stream, error) {
	return s.file(path, schema, morlocwire.CreateStream)
}

func (s *runStreams) Append(path, schema string) (eval.Stream, error) {
	return s.file(path, schema, morlocwire.AppendStream)
}

func (s *runStreams) file(path, schema string, open func(string, *manifest.Type, morlocwire.Dialect) (*morlocwire.OStream, error)) (eval.Stream, error) {
	t, err := streamType(schema)
	if err != nil {
		return nil, err
	}
	o, err := open(path, t, morlocwire.Rust)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s.mu.Lock()
	s.files = append(s.files, writtenFile{path: path, schema: schema})
	i := len(s.files) - 1
	s.mu.Unlock()
	return &countedStream{OStream: o, count: func(n int) {
		s.mu.Lock()
		s.files[i].elements += n
		s.mu.Unlock()
	}}, nil
}

func (s *runStreams) Std(name, schema string) (eval.Stream, error) {
	t, err := streamType(schema)
	if err != nil {
		return nil, err
	}
	switch name {
	case "stderr":
		return morlocwire.StdioStream(os.Stderr, t, morlocwire.Rust)
	case "stdout":
		if s.stdout == nil {
			return nil, errors.New("stdout is the MCP protocol's here")
		}
		return &jsonStdout{w: s.stdout, ret: &manifest.Return{Schema: schema, T: t}}, nil
	}
	return nil, fmt.Errorf("no standard stream %q", name)
}

// countedStream counts the elements written to a file.
type countedStream struct {
	*morlocwire.OStream
	count func(int)
}

func (c *countedStream) Write(level int, values json.RawMessage) error {
	if err := c.OStream.Write(level, values); err != nil {
		return err
	}
	var items []json.RawMessage
	if json.Unmarshal(values, &items) == nil {
		c.count(len(items))
	}
	return nil
}

// jsonStdout is a @stdout stream rendered as one JSON array: "[" before
// the first element, the elements joined by ",", "]\n" at close, each
// batch printed as the CLI prints a returned list (morloc's spellings of
// NaN and the infinities too).
type jsonStdout struct {
	w       io.Writer
	ret     *manifest.Return
	pending []byte // written, not yet flushed
	opened  bool
	any     bool
}

func (j *jsonStdout) Write(level int, values json.RawMessage) error {
	out, err := argmap.CLIResultValue(j.ret, ndarray.Value{JSON: values})
	if err != nil {
		return err
	}
	if inner := out[1 : len(out)-1]; len(inner) > 0 {
		if len(j.pending) > 0 {
			j.pending = append(j.pending, ',')
		}
		j.pending = append(j.pending, inner...)
	}
	return nil
}

func (j *jsonStdout) Flush() error {
	var b []byte
	if !j.opened {
		b = append(b, '[')
		j.opened = true
	}
	if len(j.pending) > 0 {
		if j.any {
			b = append(b, ',')
		}
		b = append(b, j.pending...)
		j.any = true
		j.pending = j.pending[:0]
	}
	if len(b) == 0 {
		return nil
	}
	_, err := j.w.Write(b)
	return err
}

func (j *jsonStdout) Close() error {
	if err := j.Flush(); err != nil {
		return err
	}
	_, err := j.w.Write([]byte("]\n"))
	return err
}

// Abort ends a stream left open: what was flushed stays, unterminated.
func (j *jsonStdout) Abort() {}

// writtenBlocks is the content of a tool call whose pure command wrote
// files, so that the client learns where they are: the value as text
// (unless null), then a resource_link naming each file (a client of an
// older MCP version gets its URI as text).
func writtenBlocks(value json.RawMessage, files []writtenFile) json.RawMessage {
	var blocks []any
	if s := string(value); s != "null" && s != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": s})
	}
	for _, f := range files {
		blocks = append(blocks, map[string]any{
			"type":        "resource_link",
			"uri":         "file://" + filepath.ToSlash(f.path),
			"name":        filepath.Base(f.path),
			"mimeType":    "application/octet-stream",
			"description": fmt.Sprintf("a morloc stream file of %s: %d element(s) written", f.schema, f.elements),
		})
	}
	b, _ := json.Marshal(blocks)
	return b
}
