package morlocwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

var sourceNames = [...]string{"MESG", "FILE", "RPTR"}
var formatNames = [...]string{"JSON", "MSGPACK", "TEXT", "DATA", "VOIDSTAR", "ARROW"}

func name(names []string, c byte) string {
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("%#02x", c)
}

// check returns the error of a packet that is not a result Result can
// read: not a data packet, a FAIL packet (*Failure), compressed or
// encrypted, or one whose schema is not t's.
func (p *Packet) check(t *manifest.Type) error {
	h := p.Header
	if h.Type() != TypeData {
		return fmt.Errorf("morloc result: a packet of type %d, not data", h.Type())
	}
	if h.Status() == StatusFail {
		return &Failure{Message: string(p.Payload)}
	}
	if h.Status() != StatusPass {
		return fmt.Errorf("morloc result: status %d", h.Status())
	}
	if h.Compression() != 0 {
		return fmt.Errorf("morloc result: compressed (method %d); compressed results are not supported", h.Compression())
	}
	if h.Encryption() != 0 {
		return fmt.Errorf("morloc result: encrypted (method %d); encrypted results are not supported", h.Encryption())
	}
	// A pool writes its return schema into the packet; morloc's own nexus
	// refuses a result whose schema is not the command's (v0.69 nexus.c:244-254).
	if s, ok := p.Schema(); ok && t != nil {
		if want := WireSchema(t); s != want {
			return fmt.Errorf("morloc result: the pool says its schema is %q, the manifest says %q", s, want)
		}
	}
	return nil
}

// Result decodes a result packet into JSON for the type t, in nexus's
// value conventions (see decoder): MESG+VOIDSTAR inline, RPTR+VOIDSTAR
// through mem, MESG+MSGPACK, and FILE+MSGPACK (0.98 with MORLOC_NO_SHM;
// the file is read, not removed). A FAIL packet gives a *Failure with the
// pool's message.
func (p *Packet) Result(t *manifest.Type, d Dialect, mem *Memory) (json.RawMessage, error) {
	if err := p.check(t); err != nil {
		return nil, err
	}
	n, err := layout(t, d)
	if err != nil {
		return nil, err
	}
	h := p.Header
	switch src, f := h.Source(), h.Format(); {
	case f == FormatVoidstar && (src == SourceMesg || src == SourceRptr):
		return p.voidstar(n, d, mem)
	case f == FormatMsgpack && src == SourceMesg:
		return msgpackJSON(n, p.Payload)
	case f == FormatMsgpack && src == SourceFile:
		path := p.Payload
		if k := bytes.IndexByte(path, 0); k >= 0 {
			path = path[:k]
		}
		b, err := readResultFile(string(path))
		if err != nil {
			return nil, fmt.Errorf("morloc result in a file: %w", err)
		}
		return msgpackJSON(n, b)
	default:
		return nil, fmt.Errorf("morloc result: %s+%s results are not supported (pools send VOIDSTAR or MSGPACK)", name(sourceNames[:], src), name(formatNames[:], f))
	}
}

// readResultFile reads the regular file a FILE packet names, in one
// buffer of its size (a device or a pipe is refused).
func readResultFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

func msgpackJSON(n *node, b []byte) (json.RawMessage, error) {
	r := &mpReader{b: b, out: make([]byte, 0, len(b)+len(b)/2+16), spell: ndarray.ClientSpelling}
	if err := r.value(n); err != nil {
		return nil, fmt.Errorf("morloc result: %w", err)
	}
	if r.i != len(b) {
		return nil, fmt.Errorf("morloc result: %d bytes after the msgpack value", len(b)-r.i)
	}
	return r.out, nil
}

// root finds a voidstar result's root value: at the start of an inline
// payload, or where an RPTR packet's relative pointer says. release is
// called when the decode is done.
func (p *Packet) root(n *node, d Dialect, mem *Memory) (sp space, b []byte, release func(), err error) {
	release = func() {}
	if p.Header.Source() == SourceMesg {
		in := &inline{b: p.Payload}
		if d.VolumeRelptr {
			in.base = uint64(p.volIndex()) << 48
		}
		if len(p.Payload) < n.width {
			return nil, nil, release, fmt.Errorf("morloc result: %d-byte payload, the value takes %d", len(p.Payload), n.width)
		}
		return in, p.Payload[:n.width], release, nil
	}
	if len(p.Payload) < 8 {
		return nil, nil, release, fmt.Errorf("morloc result: RPTR payload of %d bytes, want an 8-byte relative pointer", len(p.Payload))
	}
	if mem == nil {
		return nil, nil, release, fmt.Errorf("morloc result: the value is in shared memory, and no shared memory was opened")
	}
	if release, err = mem.acquire(); err != nil {
		return nil, nil, func() {}, err
	}
	r := binary.LittleEndian.Uint64(p.Payload)
	if b, err = mem.bytes(r, uint64(n.width)); err != nil {
		release()
		return nil, nil, func() {}, fmt.Errorf("morloc result in shared memory: %w", err)
	}
	return mem, b, release, nil
}

func (p *Packet) voidstar(n *node, d Dialect, mem *Memory) (json.RawMessage, error) {
	sp, b, release, err := p.root(n, d, mem)
	if err != nil {
		return nil, err
	}
	defer release()
	dec := newDecoder(sp, estimate(sp, n, b, 0)+16)
	if err := dec.value(n, b); err != nil {
		return nil, fmt.Errorf("morloc result: %w", err)
	}
	return dec.out, nil
}

// Value is Result as an ndarray.Value: a result that is a list of numbers
// comes as an array (its bytes copied out of the packet or shared memory at
// once, converted to f8, i4 or i8), which nexus writes as JSON in parallel
// when it answers (argmap.ResultValue); any other result as JSON.
func (p *Packet) Value(t *manifest.Type, d Dialect, mem *Memory) (ndarray.Value, error) {
	if err := p.check(t); err != nil {
		return ndarray.Value{}, err
	}
	n, err := layout(t, d)
	if err != nil {
		return ndarray.Value{}, err
	}
	if n.kind == manifest.List && n.elem.prim.numeric() && p.Header.Format() == FormatVoidstar {
		if a, ok, err := p.numbers(n, d, mem); err != nil {
			return ndarray.Value{}, err
		} else if ok {
			return ndarray.Value{JSON: json.RawMessage("null"), Arrays: []ndarray.Array{a}}, nil
		}
	}
	raw, err := p.Result(t, d, mem)
	return ndarray.Value{JSON: raw}, err
}

// numbers copies a voidstar list of numbers into an array; ok is false
// for one an array cannot hold (a u8 above MaxInt64, more than
// ndarray.MaxElements items, a fixed length it does not have).
func (p *Packet) numbers(n *node, d Dialect, mem *Memory) (ndarray.Array, bool, error) {
	sp, b, release, err := p.root(n, d, mem)
	if err != nil {
		return ndarray.Array{}, false, err
	}
	defer release()
	size, rel := arrayHeader(b)
	if size > ndarray.MaxElements || n.fixedLen > 0 && size != uint64(n.fixedLen) {
		return ndarray.Array{}, false, nil
	}
	e := n.elem.prim
	w := primWidth(e)
	count := int(size)
	if dt, _, ok := arrayDType(e); ok {
		// The array's bytes as they are: copied out (and, when large, let
		// go of in shared memory) in one go.
		var data []byte
		if m, inShm := sp.(*Memory); inShm && size*uint64(w) >= copyPiece {
			data, err = m.copyOut(rel, size*uint64(w))
		} else if size > 0 {
			if data, err = sp.bytes(rel, size*uint64(w)); err == nil {
				data = bytes.Clone(data)
			}
		}
		if err != nil {
			return ndarray.Array{}, false, fmt.Errorf("morloc result: list of %d numbers: %w", size, err)
		}
		return ndarray.Array{Path: []any{}, DType: dt, Shape: []int{count}, Data: data}, true, nil
	}
	var data []byte
	if size > 0 {
		if data, err = sp.bytes(rel, size*uint64(w)); err != nil {
			return ndarray.Array{}, false, fmt.Errorf("morloc result: list of %d numbers: %w", size, err)
		}
	}
	switch e {
	case pF4:
		out := make([]byte, 8*count)
		var buf [32]byte
		for k := 0; k < count; k++ {
			f := float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*k:])))
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				// The double nearest f's shortest decimal (appendFloat32).
				f, _ = strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], f, 'g', -1, 32)), 64)
			}
			binary.LittleEndian.PutUint64(out[8*k:], math.Float64bits(f))
		}
		return ndarray.Array{Path: []any{}, DType: ndarray.F8, Shape: []int{count}, Data: out}, true, nil
	}
	out := make([]byte, 8*count)
	for k := 0; k < count; k++ {
		var v int64
		switch e {
		case pI1:
			v = int64(int8(data[k]))
		case pU1:
			v = int64(data[k])
		case pI2:
			v = int64(int16(binary.LittleEndian.Uint16(data[2*k:])))
		case pU2:
			v = int64(binary.LittleEndian.Uint16(data[2*k:]))
		case pU4:
			v = int64(binary.LittleEndian.Uint32(data[4*k:]))
		case pU8:
			u := binary.LittleEndian.Uint64(data[8*k:])
			if u > math.MaxInt64 {
				return ndarray.Array{}, false, nil
			}
			v = int64(u)
		}
		binary.LittleEndian.PutUint64(out[8*k:], uint64(v))
	}
	return ndarray.Array{Path: []any{}, DType: ndarray.I8, Shape: []int{count}, Data: out}, true, nil
}
