package pool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// morlocWire is everything the morloc driver asks of morloc's wire format
// (packets, msgpack arguments, voidstar results, shared memory): this file
// alone calls the codec, so that the driver does not depend on its shape.
type morlocWire struct {
	dialect wireDialect
	mem     *wireMemory // the program's shared memory; nil before openMemory
}

// maxMorlocReply bounds a result packet: a header claiming more is a
// broken pool, not a buffer to allocate.
const maxMorlocReply = 2 << 30

func newMorlocWire(version string) (*morlocWire, error) {
	d, err := wireDialectOf(version)
	if err != nil {
		return nil, err
	}
	return &morlocWire{dialect: d}, nil
}

// openMemory prepares to read the program's shared-memory volumes
// (/dev/shm/<basename>_<i>, or files in fallbackDir), mapped as results
// need them.
func (w *morlocWire) openMemory(basename, fallbackDir string) {
	w.mem = wireOpenMemory(basename, fallbackDir, w.dialect)
}

func (w *morlocWire) closeMemory() {
	if w.mem != nil {
		_ = w.mem.Close()
	}
}

func (w *morlocWire) ping() []byte { return wirePing() }

func (w *morlocWire) isPing(h []byte) bool { return wireIsPing(h) }

// callPacket encodes a call of mid: each argument as a msgpack data packet
// laid out as its schema says. The arrays among the arguments (their
// places in args hold null) take the fast path when one is a whole
// argument; others are written into their argument as JSON first.
func (w *morlocWire) callPacket(mid int, types []*manifest.Type, args []json.RawMessage, arrays []ndarray.Array) ([]byte, error) {
	if len(args) > len(types) {
		return nil, fmt.Errorf("the manifest gives schemas for %d arguments, not %d", len(types), len(args))
	}
	whole := make(map[int]*ndarray.Array)
	var placed []json.RawMessage // args with arrays written in, made on the first
	for i := range arrays {
		a := &arrays[i]
		idx, ok := a.Path[0].(int)
		if !ok || idx < 0 || idx >= len(args) {
			return nil, fmt.Errorf("array path %v names no argument", a.Path)
		}
		if len(a.Path) == 1 {
			whole[idx] = a
			continue
		}
		text, err := ndarray.AppendPoolJSON(nil, a)
		if err != nil {
			return nil, err
		}
		if placed == nil {
			placed = append([]json.RawMessage(nil), args...)
		}
		if placed[idx], err = ndarray.Place(placed[idx], a.Path[1:], text); err != nil {
			return nil, err
		}
	}
	if placed != nil {
		args = placed
	}
	var body []byte
	for i, arg := range args {
		t := types[i]
		if t == nil {
			return nil, fmt.Errorf("argument %d has no schema in the manifest", i+1)
		}
		var err error
		if a := whole[i]; a != nil {
			body, err = wireAppendArrayArg(body, t, *a, w.dialect)
		} else {
			body, err = wireAppendArg(body, t, arg, w.dialect)
		}
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
	}
	return wireCallPacket(uint32(mid), body), nil
}

// morlocReply is a pool's reply, read whole.
type morlocReply = wirePacket

// readReply reads one result packet.
func (w *morlocWire) readReply(r io.Reader) (*morlocReply, error) {
	return wireReadPacket(r, maxMorlocReply)
}

// result decodes a reply into the JSON value of type t (nil: the schema
// the reply carries), copying it out of shared memory at once. A failure
// packet gives a *CallError with the pool's message.
func (w *morlocWire) result(p *morlocReply, t *manifest.Type, lang string) (json.RawMessage, error) {
	v, err := p.Result(t, w.dialect, w.mem)
	if f := (*wireFailure)(nil); errors.As(err, &f) {
		return nil, &CallError{Lang: lang, Message: f.Message}
	}
	return v, err
}
