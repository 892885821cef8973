package pool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// morlocWire is everything the morloc driver asks of morloc's wire format
// (internal/morlocwire: packets, msgpack arguments, voidstar results,
// shared memory): this file alone calls the codec.
type morlocWire struct {
	dialect morlocwire.Dialect
	mem     *morlocwire.Memory // an instance's shared memory; nil where only calls are encoded
}

// maxMorlocReply bounds a result packet: a header claiming more is a
// broken pool, not a buffer to allocate.
const maxMorlocReply = 2 << 30

func newMorlocWire(version string) (*morlocWire, error) {
	d, err := morlocwire.DialectOf(version)
	if err != nil {
		return nil, err
	}
	return &morlocWire{dialect: d}, nil
}

// withMemory is the wire of an instance, whose results are read from its
// shared-memory volumes (/dev/shm/<basename>_<i>, or files in fallbackDir),
// mapped as results need them.
func (w *morlocWire) withMemory(basename, fallbackDir string) *morlocWire {
	return &morlocWire{dialect: w.dialect, mem: morlocwire.OpenMemory(basename, fallbackDir, w.dialect)}
}

func (w *morlocWire) closeMemory() {
	if w.mem != nil {
		_ = w.mem.Close()
	}
}

func (w *morlocWire) ping() []byte { return morlocwire.Ping() }

// callPacket encodes a call of mid: each argument as a msgpack data packet
// laid out exactly as its schema says. The arrays among the arguments
// (their places in args hold null; Path[0] is the argument) are encoded
// from their bytes; an argument that is a whole list of numbers is written
// from them as the packet goes out (morlocwire.ArrayArg), never whole.
func (w *morlocWire) callPacket(mid int, types []*manifest.Type, args []json.RawMessage, arrays []ndarray.Array) (*morlocPacket, error) {
	if len(args) > len(types) {
		return nil, fmt.Errorf("the manifest gives schemas for %d arguments, not %d", len(types), len(args))
	}
	byArg := make(map[int][]ndarray.Array, len(arrays))
	for _, a := range arrays {
		idx, ok := a.Path[0].(int)
		if !ok || idx < 0 || idx >= len(args) {
			return nil, fmt.Errorf("array path %v names no argument", a.Path)
		}
		a.Path = a.Path[1:] // inside the argument
		byArg[idx] = append(byArg[idx], a)
	}
	p := &morlocPacket{}
	var body []byte // the arguments encoded since the last streamed one
	for i, arg := range args {
		t := types[i]
		if t == nil {
			return nil, fmt.Errorf("argument %d has no schema in the manifest", i+1)
		}
		var err error
		switch as := byArg[i]; {
		case len(as) == 1 && len(as[0].Path) == 0:
			var x *morlocwire.ArrayArg
			var ok bool
			if x, ok, err = morlocwire.NewArrayArg(t, as[0], w.dialect); ok {
				p.add(body, nil)
				p.add(nil, x)
				body = nil
				continue
			}
			if err == nil {
				body, err = morlocwire.AppendArrayArg(body, t, as[0], w.dialect)
			}
		case len(as) > 0:
			body, err = morlocwire.AppendArgArrays(body, t, arg, as, w.dialect)
		default:
			body, err = morlocwire.AppendArg(body, t, arg, w.dialect)
		}
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
	}
	p.add(body, nil)
	p.head = morlocwire.AppendCallHeader(nil, uint32(mid), p.size)
	if len(p.pieces) > 0 && p.pieces[0].b != nil {
		// The header and the first arguments in one write.
		p.head = append(p.head, p.pieces[0].b...)
		p.pieces = p.pieces[1:]
	}
	return p, nil
}

// morlocPacket is a call packet: its header, then the argument packets,
// some encoded, some (large lists of numbers) written as they go out.
type morlocPacket struct {
	head   []byte
	pieces []packetPiece
	size   int // of the argument packets, the header excluded
}

type packetPiece struct {
	b []byte
	a *morlocwire.ArrayArg
}

func (p *morlocPacket) add(b []byte, a *morlocwire.ArrayArg) {
	switch {
	case a != nil:
		p.pieces = append(p.pieces, packetPiece{a: a})
		p.size += a.Len()
	case len(b) > 0:
		p.pieces = append(p.pieces, packetPiece{b: b})
		p.size += len(b)
	}
}

// len is the whole packet's size.
func (p *morlocPacket) len() int { return morlocwire.HeaderSize + p.size }

// writeTo sends the packet.
func (p *morlocPacket) writeTo(w io.Writer) error {
	if _, err := w.Write(p.head); err != nil {
		return err
	}
	for _, piece := range p.pieces {
		var err error
		if piece.a != nil {
			_, err = piece.a.WriteTo(w)
		} else {
			_, err = w.Write(piece.b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// morlocReply is a pool's reply, read whole.
type morlocReply = morlocwire.Packet

// readReply reads one result packet.
func (w *morlocWire) readReply(r io.Reader) (*morlocReply, error) {
	return morlocwire.ReadPacket(r, maxMorlocReply)
}

// result decodes a reply into the value of type t (nil: the schema the
// reply carries), copying it out of shared memory at once; with asArrays
// a list of numbers comes back as an array, written as JSON by whoever
// answers (CallOptions.Ret). A failure packet gives a *CallError with the
// pool's message.
func (w *morlocWire) result(p *morlocReply, t *manifest.Type, asArrays bool, lang string) (ndarray.Value, error) {
	// At once: the pool may free the block when its worker starts its
	// next job (morlocwire's Packet.Hold).
	release, err := p.Hold(w.mem)
	if err != nil {
		return ndarray.Value{}, err
	}
	defer release()
	if t == nil {
		s, ok := p.Schema()
		if !ok && p.Header.Status() != morlocwire.StatusFail {
			return ndarray.Value{}, errors.New("the result carries no schema and the manifest gives none")
		}
		if ok {
			if t, err = manifest.ParseType(s); err != nil {
				return ndarray.Value{}, fmt.Errorf("the result's schema %q: %w", s, err)
			}
		}
	}
	var v ndarray.Value
	if asArrays {
		v, err = p.Value(t, w.dialect, w.mem)
	} else {
		v.JSON, err = p.Result(t, w.dialect, w.mem)
	}
	if f := (*morlocwire.Failure)(nil); errors.As(err, &f) {
		return ndarray.Value{}, &CallError{Lang: lang, Message: strings.ToValidUTF8(f.Message, "\uFFFD")}
	}
	return v, err
}

// shmFiles lists the shared-memory files a program's pools left under
// basename: /dev/shm/<basename>_<i> and <basename>.registry.
func shmFiles(basename string) []string {
	files, _ := morlocwire.ShmFiles(basename)
	return files
}
