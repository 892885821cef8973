package pool

// A stand-in for internal/morlocwire (branch morloc-wire), written against
// the API the design agreed (docs of issue 19), so that the driver compiles
// and runs against real 0.69 pools before that package lands. It knows only
// what 0.69's pools need: MESG+MSGPACK arguments, MESG+VOIDSTAR and
// RPTR+VOIDSTAR results in 0.69's layout, FAIL packets. It goes, whole,
// when morlocwire is merged: morlocwire.go then calls that package instead.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

const (
	wireHeaderSize = 32
	wireMagic      = 0x0707f86d

	wireTypeData = 0
	wireTypeCall = 1
	wireTypePing = 2

	wireSourceMesg = 0
	wireSourceFile = 1
	wireSourceRptr = 2

	wireFormatMsgpack  = 1
	wireFormatText     = 2
	wireFormatVoidstar = 4

	wireStatusFail = 1
)

// wireDialect is what differs on the wire between morloc versions; the
// stand-in knows 0.69's only.
type wireDialect struct{ version string }

func wireDialectOf(version string) (wireDialect, error) {
	major, minor, ok := wireVersionParts(version)
	if !ok {
		return wireDialect{}, fmt.Errorf("morloc version %q is not a version number", version)
	}
	if major != 0 || minor >= 72 {
		return wireDialect{}, fmt.Errorf("pools of morloc %s (a Rust runtime) are not supported yet", version)
	}
	return wireDialect{version: version}, nil
}

func wireVersionParts(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

func wireHeader(dst []byte, command [8]byte, offset uint32, length uint64) []byte {
	var h [wireHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], wireMagic)
	copy(h[12:20], command[:])
	binary.LittleEndian.PutUint32(h[20:], offset)
	binary.LittleEndian.PutUint64(h[24:], length)
	return append(dst, h[:]...)
}

func wirePing() []byte { return wireHeader(nil, [8]byte{wireTypePing}, 0, 0) }

func wireIsPing(h []byte) bool {
	return len(h) >= wireHeaderSize && binary.LittleEndian.Uint32(h) == wireMagic && h[12] == wireTypePing
}

// wireCallPacket is a CALL header for mid followed by args, the
// concatenated argument packets.
func wireCallPacket(mid uint32, args []byte) []byte {
	cmd := [8]byte{wireTypeCall}
	binary.LittleEndian.PutUint32(cmd[4:], mid)
	return append(wireHeader(make([]byte, 0, wireHeaderSize+len(args)), cmd, 0, uint64(len(args))), args...)
}

// wireAppendArg appends one MESG+MSGPACK data packet holding v as t says.
func wireAppendArg(dst []byte, t *manifest.Type, v json.RawMessage, _ wireDialect) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	start := len(dst)
	dst = wireHeader(dst, [8]byte{wireTypeData, wireSourceMesg, wireFormatMsgpack}, 0, 0)
	e := &mpackEncoder{b: dst}
	if err := e.value(t, x, ""); err != nil {
		return nil, err
	}
	dst = e.b
	binary.LittleEndian.PutUint64(dst[start+24:], uint64(len(dst)-start-wireHeaderSize))
	return dst, nil
}

// wireAppendArrayArg is wireAppendArg for an argument that came as an
// array: its numbers are written straight from its bytes when t is as many
// nested lists of numbers as the array has dimensions.
func wireAppendArrayArg(dst []byte, t *manifest.Type, a ndarray.Array, d wireDialect) ([]byte, error) {
	elem := t.Unwrap()
	for range a.Shape {
		if elem == nil || elem.Kind != manifest.List {
			elem = nil
			break
		}
		elem = elem.Elem.Unwrap()
	}
	if elem == nil || (elem.Kind != manifest.Float && elem.Kind != manifest.Int) || a.Len()*a.DType.Size() != len(a.Data) {
		text, err := ndarray.AppendPoolJSON(nil, &a)
		if err != nil {
			return nil, err
		}
		return wireAppendArg(dst, t, text, d)
	}
	start := len(dst)
	dst = wireHeader(dst, [8]byte{wireTypeData, wireSourceMesg, wireFormatMsgpack}, 0, 0)
	e := &mpackEncoder{b: slices.Grow(dst, 9*a.Len()+5*len(a.Shape))}
	i := 0
	var err error
	var nest func(dim int)
	nest = func(dim int) {
		if dim == len(a.Shape) {
			err = e.arrayElem(elem, &a, i, err)
			i++
			return
		}
		e.arrayHeader(a.Shape[dim])
		for range a.Shape[dim] {
			nest(dim + 1)
		}
	}
	nest(0)
	if err != nil {
		return nil, err
	}
	dst = e.b
	binary.LittleEndian.PutUint64(dst[start+24:], uint64(len(dst)-start-wireHeaderSize))
	return dst, nil
}

// arrayElem writes element i of a as t, a Float or an Int; after an
// error it writes nothing and keeps the first.
func (e *mpackEncoder) arrayElem(t *manifest.Type, a *ndarray.Array, i int, err error) error {
	if err != nil {
		return err
	}
	var f float64
	var n int64
	isInt := true
	switch a.DType {
	case ndarray.I4:
		n = int64(int32(binary.LittleEndian.Uint32(a.Data[4*i:])))
	case ndarray.I8:
		n = int64(binary.LittleEndian.Uint64(a.Data[8*i:]))
	default:
		f, isInt = math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:])), false
	}
	if t.Kind == manifest.Float {
		if isInt {
			f = float64(n)
		}
		if t.Code == "f4" {
			e.b = append(e.b, 0xca)
			e.b = binary.BigEndian.AppendUint32(e.b, math.Float32bits(float32(f)))
		} else {
			e.b = append(e.b, 0xcb)
			e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(f))
		}
		return nil
	}
	if !isInt {
		if f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			return fmt.Errorf("at [%d]: %v is not an integer", i, f)
		}
		n = int64(f)
	}
	return e.integer(t.Code, strconv.FormatInt(n, 10), func() string { return "" })
}

type mpackEncoder struct {
	b     []byte
	scope []*manifest.Type
}

func (e *mpackEncoder) value(t *manifest.Type, v any, path string) error {
	at := func() string {
		if path == "" {
			return ""
		}
		return "at " + path + ": "
	}
	mismatch := func() error { return fmt.Errorf("%sexpected %s, got %v", at(), t.Kind, v) }
	switch t.Kind {
	case manifest.Nil:
		if v != nil {
			return mismatch()
		}
		e.b = append(e.b, 0xc0)
	case manifest.Bool:
		x, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		if x {
			e.b = append(e.b, 0xc3)
		} else {
			e.b = append(e.b, 0xc2)
		}
	case manifest.Int:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch()
		}
		return e.integer(t.Code, string(n), at)
	case manifest.Float:
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), 64); err != nil {
				return fmt.Errorf("%s%s is not a number", at(), x)
			}
		case string:
			nf, ok := ndarray.NonFinite(x)
			if !ok {
				return mismatch()
			}
			f = nf
		default:
			return mismatch()
		}
		if t.Code == "f4" {
			e.b = append(e.b, 0xca)
			e.b = binary.BigEndian.AppendUint32(e.b, math.Float32bits(float32(f)))
		} else {
			e.b = append(e.b, 0xcb)
			e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(f))
		}
	case manifest.Str:
		s, ok := v.(string)
		if !ok {
			return mismatch()
		}
		n := len(s)
		switch {
		case n < 32:
			e.b = append(e.b, 0xa0|byte(n))
		case n < 1<<8:
			e.b = append(e.b, 0xd9, byte(n))
		case n < 1<<16:
			e.b = append(e.b, 0xda)
			e.b = binary.BigEndian.AppendUint16(e.b, uint16(n))
		default:
			e.b = append(e.b, 0xdb)
			e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
		}
		e.b = append(e.b, s...)
	case manifest.List:
		if obj, ok := v.(map[string]any); ok && t.IsMap() {
			// a string-keyed Map in pool form: its pairs, in key order
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			e.arrayHeader(len(keys))
			for _, k := range keys {
				e.arrayHeader(2)
				if err := e.value(t.Elem.Unwrap().Items[0], k, path+"."+k); err != nil {
					return err
				}
				if err := e.value(t.Elem.Unwrap().Items[1], obj[k], path+"."+k); err != nil {
					return err
				}
			}
			return nil
		}
		xs, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		e.arrayHeader(len(xs))
		for i, x := range xs {
			if err := e.value(t.Elem, x, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case manifest.Tuple:
		xs, ok := v.([]any)
		if !ok || len(xs) != len(t.Items) {
			return mismatch()
		}
		e.arrayHeader(len(xs))
		for i, x := range xs {
			if err := e.value(t.Items[i], x, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case manifest.Record:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		e.arrayHeader(len(t.Fields)) // records travel as arrays, in field order
		for _, f := range t.Fields {
			if err := e.value(f.Type, obj[f.Key], path+"."+f.Key); err != nil {
				return err
			}
		}
	case manifest.Optional:
		if v == nil {
			e.b = append(e.b, 0xc0)
			return nil
		}
		return e.value(t.Elem, v, path)
	case manifest.Recursive:
		e.scope = append(e.scope, t)
		err := e.value(t.Elem, v, path)
		e.scope = e.scope[:len(e.scope)-1]
		return err
	case manifest.BackRef:
		for i := len(e.scope) - 1; i >= 0; i-- {
			if e.scope[i].Name == t.Name {
				return e.value(e.scope[i], v, path)
			}
		}
		return fmt.Errorf("%stype ^%s refers to no enclosing declaration", at(), t.Name)
	default:
		return fmt.Errorf("%sa %s cannot be sent to a morloc pool", at(), t.Kind)
	}
	return nil
}

func (e *mpackEncoder) arrayHeader(n int) {
	switch {
	case n < 16:
		e.b = append(e.b, 0x90|byte(n))
	case n < 1<<16:
		e.b = append(e.b, 0xdc)
		e.b = binary.BigEndian.AppendUint16(e.b, uint16(n))
	default:
		e.b = append(e.b, 0xdd)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
}

func (e *mpackEncoder) integer(code, text string, at func() string) error {
	if strings.HasPrefix(code, "u") {
		u, err := strconv.ParseUint(text, 10, 64)
		bits := 64
		if w, werr := strconv.Atoi(code[1:]); werr == nil {
			bits = 8 * w
		}
		if err != nil || (bits < 64 && u >= 1<<bits) {
			return fmt.Errorf("%s%s does not fit %s", at(), text, code)
		}
		e.b = append(e.b, 0xcf)
		e.b = binary.BigEndian.AppendUint64(e.b, u)
		return nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	bits := 64
	if w, werr := strconv.Atoi(strings.TrimPrefix(code, "i")); werr == nil && code != "j" {
		bits = 8 * w
	}
	if err != nil || (bits < 64 && (n < -(1<<(bits-1)) || n >= 1<<(bits-1))) {
		return fmt.Errorf("%s%s does not fit %s", at(), text, code)
	}
	switch {
	case n >= 0 && n < 128:
		e.b = append(e.b, byte(n))
	case n < 0 && n >= -32:
		e.b = append(e.b, byte(int8(n)))
	default:
		e.b = append(e.b, 0xd3)
		e.b = binary.BigEndian.AppendUint64(e.b, uint64(n))
	}
	return nil
}

// wirePacket is one packet read whole.
type wirePacket struct {
	Header        [wireHeaderSize]byte
	Meta, Payload []byte
}

// wireReadPacket reads one packet, refusing one over max bytes.
func wireReadPacket(r io.Reader, max int64) (*wirePacket, error) {
	p := &wirePacket{}
	if _, err := io.ReadFull(r, p.Header[:]); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(p.Header[:]) != wireMagic {
		return nil, fmt.Errorf("a packet begins with % x, not morloc's magic number", p.Header[:4])
	}
	offset := int64(binary.LittleEndian.Uint32(p.Header[20:]))
	length := binary.LittleEndian.Uint64(p.Header[24:])
	if length > uint64(max) || offset+int64(length) > max {
		return nil, fmt.Errorf("a packet of %d bytes is over the %d-byte limit", offset+int64(length), max)
	}
	body := make([]byte, offset+int64(length))
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	p.Meta, p.Payload = body[:offset], body[offset:]
	return p, nil
}

// wireFailure is a FAIL packet: the pool's message.
type wireFailure struct{ Message string }

func (f *wireFailure) Error() string { return f.Message }

// Result decodes a result packet into JSON for type t (nil: the schema the
// packet carries).
func (p *wirePacket) Result(t *manifest.Type, d wireDialect, mem *wireMemory) (json.RawMessage, error) {
	h := p.Header[:]
	if h[12] != wireTypeData {
		return nil, fmt.Errorf("the reply is a packet of type %d, not data", h[12])
	}
	source, format, status := h[13], h[14], h[17]
	if status == wireStatusFail {
		return nil, &wireFailure{Message: strings.ToValidUTF8(string(p.Payload), "\uFFFD")}
	}
	if t == nil {
		s := p.metaSchema()
		if s == "" {
			return nil, errors.New("the result carries no schema and the manifest gives none")
		}
		var err error
		if t, err = manifest.ParseType(s); err != nil {
			return nil, fmt.Errorf("the result's schema %q: %v", s, err)
		}
	}
	if format != wireFormatVoidstar {
		return nil, fmt.Errorf("results of format %d are not read yet", format)
	}
	var r vsReader
	var root uint64
	switch source {
	case wireSourceMesg:
		r = vsReader{inline: p.Payload}
	case wireSourceRptr:
		if len(p.Payload) < 8 {
			return nil, errors.New("a shared-memory result without its pointer")
		}
		if mem == nil {
			return nil, errors.New("a shared-memory result, and no shared memory to read it from")
		}
		r = vsReader{mem: mem}
		root = binary.LittleEndian.Uint64(p.Payload)
	default:
		return nil, fmt.Errorf("results from source %d are not read yet", source)
	}
	out, err := r.value(nil, t, root)
	if err != nil {
		return nil, fmt.Errorf("reading the result: %w", err)
	}
	return out, nil
}

func (p *wirePacket) metaSchema() string {
	m := p.Meta
	for len(m) >= 8 && string(m[:3]) == "mmh" {
		kind, size := m[3], int(binary.LittleEndian.Uint32(m[4:8]))
		if 8+size > len(m) {
			break
		}
		if kind == 1 {
			return strings.TrimRight(string(m[8:8+size]), "\x00")
		}
		m = m[8+size:]
	}
	return ""
}

// vsReader reads a voidstar value: inline (relptrs are offsets into the
// payload) or in shared memory.
type vsReader struct {
	inline []byte
	mem    *wireMemory
	scope  []*manifest.Type
}

func (r *vsReader) bytes(rel uint64, n int) ([]byte, error) {
	if r.mem != nil {
		return r.mem.at(rel, n)
	}
	if rel > uint64(len(r.inline)) || uint64(n) > uint64(len(r.inline))-rel {
		return nil, fmt.Errorf("a pointer %d+%d past the %d-byte payload", rel, n, len(r.inline))
	}
	return r.inline[rel : rel+uint64(n)], nil
}

// width and align are 0.69's C layout (schema.c).
func vsWidth(t *manifest.Type, scope []*manifest.Type) int {
	switch t.Kind {
	case manifest.Nil, manifest.Bool:
		return 1
	case manifest.Int, manifest.Float:
		w, _ := strconv.Atoi(t.Code[1:])
		if t.Code == "j" {
			w = 8
		}
		return w
	case manifest.Str, manifest.List:
		return 16
	case manifest.Tuple, manifest.Record:
		off, maxAlign := 0, 1
		for _, it := range vsItems(t) {
			a := vsAlign(it, scope)
			maxAlign = max(maxAlign, a)
			off = alignUp(off, a) + vsWidth(it, scope)
		}
		return alignUp(off, maxAlign)
	case manifest.Optional:
		a := vsAlign(t.Elem, scope)
		return alignUp(alignUp(1, a)+vsWidth(t.Elem, scope), a)
	case manifest.Recursive:
		return vsWidth(t.Elem, append(scope, t))
	case manifest.BackRef:
		if d := vsLookup(t, scope); d != nil {
			return vsWidth(d, scope)
		}
	}
	return 8
}

func vsAlign(t *manifest.Type, scope []*manifest.Type) int {
	switch t.Kind {
	case manifest.Nil, manifest.Bool:
		return 1
	case manifest.Int, manifest.Float:
		return vsWidth(t, scope)
	case manifest.Tuple, manifest.Record:
		a := 1
		for _, it := range vsItems(t) {
			a = max(a, vsAlign(it, scope))
		}
		return a
	case manifest.Optional:
		return vsAlign(t.Elem, scope)
	case manifest.Recursive:
		return vsAlign(t.Elem, append(scope, t))
	case manifest.BackRef:
		if d := vsLookup(t, scope); d != nil {
			return vsAlign(d, scope)
		}
	}
	return 8
}

func vsLookup(t *manifest.Type, scope []*manifest.Type) *manifest.Type {
	for i := len(scope) - 1; i >= 0; i-- {
		if scope[i].Name == t.Name {
			return scope[i]
		}
	}
	return nil
}

func vsItems(t *manifest.Type) []*manifest.Type {
	if t.Kind == manifest.Tuple {
		return t.Items
	}
	items := make([]*manifest.Type, len(t.Fields))
	for i, f := range t.Fields {
		items[i] = f.Type
	}
	return items
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

func (r *vsReader) value(dst []byte, t *manifest.Type, at uint64) ([]byte, error) {
	w := vsWidth(t, r.scope)
	b, err := r.bytes(at, w)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case manifest.Nil:
		return append(dst, "null"...), nil
	case manifest.Bool:
		if b[0] != 0 {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case manifest.Int:
		signed := t.Code[0] != 'u'
		var u uint64
		switch w {
		case 1:
			u = uint64(b[0])
			if signed {
				return strconv.AppendInt(dst, int64(int8(b[0])), 10), nil
			}
		case 2:
			u = uint64(binary.LittleEndian.Uint16(b))
			if signed {
				return strconv.AppendInt(dst, int64(int16(u)), 10), nil
			}
		case 4:
			u = uint64(binary.LittleEndian.Uint32(b))
			if signed {
				return strconv.AppendInt(dst, int64(int32(u)), 10), nil
			}
		default:
			u = binary.LittleEndian.Uint64(b)
			if signed {
				return strconv.AppendInt(dst, int64(u), 10), nil
			}
		}
		return strconv.AppendUint(dst, u, 10), nil
	case manifest.Float:
		var f float64
		bits := 64
		if w == 4 {
			f, bits = float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 32
		} else {
			f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return ndarray.ClientSpelling.Append(dst, f), nil
		}
		return strconv.AppendFloat(dst, f, 'g', -1, bits), nil
	case manifest.Str:
		n, data := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		if n == 0 {
			return append(dst, `""`...), nil
		}
		if n > 1<<40 {
			return nil, fmt.Errorf("a string of %d bytes", n)
		}
		s, err := r.bytes(data, int(n))
		if err != nil {
			return nil, err
		}
		return appendJSONString(dst, s), nil
	case manifest.List:
		n, data := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		ew := uint64(vsWidth(t.Elem, r.scope))
		if n > 1<<40/ew {
			return nil, fmt.Errorf("a list of %d elements", n)
		}
		dst = append(dst, '[')
		if k := t.Elem.Kind; (k == manifest.Int || k == manifest.Float) && n > 0 {
			// numbers: their block at once, read here rather than looked up one by one
			block, err := r.bytes(data, int(n*ew))
			if err != nil {
				return nil, err
			}
			inline := vsReader{inline: block}
			for i := uint64(0); i < n; i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = inline.value(dst, t.Elem, i*ew); err != nil {
					return nil, err
				}
			}
			return append(dst, ']'), nil
		}
		for i := uint64(0); i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = r.value(dst, t.Elem, data+i*ew); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case manifest.Tuple, manifest.Record:
		open, closing := byte('['), byte(']')
		if t.Kind == manifest.Record {
			open, closing = '{', '}'
		}
		dst = append(dst, open)
		off := 0
		for i, it := range vsItems(t) {
			off = alignUp(off, vsAlign(it, r.scope))
			if i > 0 {
				dst = append(dst, ',')
			}
			if t.Kind == manifest.Record {
				dst = appendJSONString(dst, []byte(t.Fields[i].Key))
				dst = append(dst, ':')
			}
			if dst, err = r.value(dst, it, at+uint64(off)); err != nil {
				return nil, err
			}
			off += vsWidth(it, r.scope)
		}
		return append(dst, closing), nil
	case manifest.Optional:
		if b[0] == 0 {
			return append(dst, "null"...), nil
		}
		return r.value(dst, t.Elem, at+uint64(alignUp(1, vsAlign(t.Elem, r.scope))))
	case manifest.Recursive:
		r.scope = append(r.scope, t)
		dst, err = r.value(dst, t.Elem, at)
		r.scope = r.scope[:len(r.scope)-1]
		return dst, err
	case manifest.BackRef:
		if d := vsLookup(t, r.scope); d != nil {
			return r.value(dst, d, at)
		}
	}
	return nil, fmt.Errorf("a %s result cannot be read yet", t.Kind)
}

func appendJSONString(dst, s []byte) []byte {
	if !utf8.Valid(s) {
		s = bytes.ToValidUTF8(s, []byte("\uFFFD"))
	}
	q, _ := json.Marshal(string(s))
	return append(dst, q...)
}

// wireMemory reads a program's shared-memory volumes read-only, mapping
// them as they appear (0.69: relptrs index the volumes' data regions laid
// end to end).
type wireMemory struct {
	basename, fallbackDir string
	mu                    sync.Mutex
	volumes               [][]byte // each mapping, its 216-byte header included
}

const shmHeader069 = 216

func wireOpenMemory(basename, fallbackDir string, _ wireDialect) *wireMemory {
	return &wireMemory{basename: basename, fallbackDir: fallbackDir}
}

func (m *wireMemory) at(rel uint64, n int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; i < 32; i++ {
		if i == len(m.volumes) {
			if err := m.mapVolume(i); err != nil {
				return nil, err
			}
		}
		data := m.volumes[i][shmHeader069:]
		size := binary.LittleEndian.Uint64(m.volumes[i][136:])
		if size > uint64(len(data)) {
			size = uint64(len(data))
		}
		if rel < size {
			if uint64(n) > size-rel {
				return nil, fmt.Errorf("a value at %d+%d crosses the end of shared-memory volume %d", rel, n, i)
			}
			return data[rel : rel+uint64(n)], nil
		}
		rel -= size
	}
	return nil, fmt.Errorf("a pointer past every shared-memory volume")
}

func (m *wireMemory) mapVolume(i int) error {
	name := fmt.Sprintf("%s_%d", m.basename, i)
	f, err := os.Open(filepath.Join(shmDir, name))
	if err != nil {
		var err2 error
		if f, err2 = os.Open(filepath.Join(m.fallbackDir, name)); err2 != nil {
			return fmt.Errorf("opening shared-memory volume %s: %w", name, err)
		}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() <= shmHeader069 {
		return fmt.Errorf("shared-memory volume %s has %d bytes", name, fi.Size())
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mapping shared-memory volume %s: %w", name, err)
	}
	m.volumes = append(m.volumes, b)
	return nil
}

func (m *wireMemory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.volumes {
		_ = syscall.Munmap(v)
	}
	m.volumes = nil
	return nil
}
