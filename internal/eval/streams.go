package eval

import (
	"context"
	"encoding/json"
)

// Output streams (docs/spec.md §7.3.15): the intrinsics a pure
// command writes with. `@open path :: OStream T` (tag open_ostream),
// `@append`, `@stdout` and `@stderr` give a handle; `@write level h xs`
// adds the list xs; `@flush h` commits what is buffered; `@close h`
// finishes the stream. The evaluator only sequences them: what a stream
// is (morloc's stream file format, or nexus's stdout) belongs to the
// Streams its caller gives RunWith. A handle left open when the run ends
// is discarded (Stream.Abort when it has one), as morloc's sweep does:
// only what was flushed stays.

// Streams opens the output streams of one run. schema is the stream's
// value schema, a list `[T]` (as morloc writes it in the file's header).
type Streams interface {
	// Create makes (or empties) the file path for a new stream.
	Create(path, schema string) (Stream, error)
	// Append reopens the stream file path to write more elements.
	Append(path, schema string) (Stream, error)
	// Std opens the standard stream name: "stdout" or "stderr".
	Std(name, schema string) (Stream, error)
}

// Stream is one open output stream.
type Stream interface {
	// Write adds the elements of values, a JSON array (the client form
	// nexus sends), at the compression level given to @write.
	Write(level int, values json.RawMessage) error
	Flush() error
	Close() error
}

// aborter is a Stream that can be dropped without finishing it.
type aborter interface{ Abort() }

// RunOptions adjust one run.
type RunOptions struct {
	// Streams opens what @open, @append, @stdout and @stderr write; nil
	// refuses them with an Unsupported error when the run reaches one.
	Streams Streams
}

// RunWith is Run with options for this run.
func (p *Program) RunWith(ctx context.Context, args []json.RawMessage, o RunOptions) (json.RawMessage, error) {
	v, r, err := p.evalWith(ctx, args, o)
	if err != nil {
		return nil, err
	}
	b, perr := r.toJSON(v, p.ret, clientForm)
	if perr != nil {
		return nil, perr
	}
	return b, nil
}

// Writes lists the output intrinsics the tree uses ("@open", "@append",
// "@stdout", "@stderr"), each once, sorted: a caller decides from them
// where the command may run (a tool that writes to nexus's own stdout may
// not).
func (p *Program) Writes() []string {
	var out []string
	for _, u := range p.uses {
		switch u {
		case "@open", "@append", "@stdout", "@stderr":
			out = append(out, u)
		}
	}
	return out
}

// streamState is the open streams of one run; a handle is its index.
type streamState struct {
	opener  Streams
	handles []Stream
	closed  []bool
}

// finish discards the streams left open.
func (s *streamState) finish() {
	for i, h := range s.handles {
		if !s.closed[i] {
			s.closed[i] = true
			if a, ok := h.(aborter); ok {
				a.Abort()
			}
		}
	}
}

// streamName is how messages name an open node.
func streamName(n *node) string {
	switch n.op {
	case opStdStream:
		return "@" + n.format
	case opOpenStream:
		if n.format == "append" {
			return "@append"
		}
	}
	return "@open"
}

func (r *run) evalOpenStream(n *node) (Value, error) {
	name := streamName(n)
	if r.streams.opener == nil {
		return unit, &Error{Kind: Unsupported, Path: n.path, Msg: name + " cannot run here: nexus writes streams only on the CLI and for tools"}
	}
	schema := n.name
	var s Stream
	var err error
	switch n.op {
	case opStdStream:
		s, err = r.streams.opener.Std(n.format, schema)
	default:
		pv, perr := r.evalAs(n.child, vStr, "a "+name+" path is %s, not a string")
		if perr != nil {
			return unit, perr
		}
		path := r.path(pv.s)
		if n.format == "append" {
			s, err = r.streams.opener.Append(path, schema)
		} else {
			s, err = r.streams.opener.Create(path, schema)
		}
		if err != nil {
			return unit, at(n, thrown("%s '%s': %s", name, pv.s, ioReason(err)))
		}
	}
	if err != nil {
		return unit, at(n, thrown("%s: %s", name, err.Error()))
	}
	r.streams.handles = append(r.streams.handles, s)
	r.streams.closed = append(r.streams.closed, false)
	return smallInt(int64(len(r.streams.handles) - 1)), nil
}

// handle finds the open stream a handle value names.
func (r *run) handle(n *node, what string) (int, Stream, error) {
	hv, err := r.eval(n)
	if err != nil {
		return 0, nil, err
	}
	if hv.k != vInt || hv.i != nil || hv.n < 0 || hv.n >= int64(len(r.streams.handles)) {
		return 0, nil, at(n, internal("%s: not a stream handle", what))
	}
	i := int(hv.n)
	if r.streams.closed[i] {
		return 0, nil, at(n, thrown("%s on a closed stream", what))
	}
	return i, r.streams.handles[i], nil
}

func (r *run) evalWrite(n *node) (Value, error) {
	_, s, err := r.handle(n.dest, "@write")
	if err != nil {
		return unit, err
	}
	level, err := r.evalLevel(n.level, "@write")
	if err != nil {
		return unit, err
	}
	v, err := r.eval(n.value)
	if err != nil {
		return unit, err
	}
	b, perr := r.toJSON(v, n.value.typ, clientForm)
	if perr != nil {
		return unit, perr
	}
	if werr := s.Write(int(level), b); werr != nil {
		return unit, at(n, thrown("@write: %s", werr.Error()))
	}
	return unit, nil
}

func (r *run) evalFlush(n *node) (Value, error) {
	_, s, err := r.handle(n.child, "@flush")
	if err != nil {
		return unit, err
	}
	if ferr := s.Flush(); ferr != nil {
		return unit, at(n, thrown("@flush: %s", ferr.Error()))
	}
	return unit, nil
}

func (r *run) evalCloseHandle(n *node) (Value, error) {
	i, s, err := r.handle(n.child, "@close")
	if err != nil {
		return unit, err
	}
	r.streams.closed[i] = true
	if cerr := s.Close(); cerr != nil {
		return unit, at(n, internal("@close: %s", cerr.Error()))
	}
	return unit, nil
}
