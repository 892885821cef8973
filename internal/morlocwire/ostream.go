package morlocwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Output streams in morloc 0.98's stream file format: what a pure command's
// `@open path :: OStream T`, `@append`, `@write`, `@flush` and `@close`
// write, and what `@stderr` writes to fd 2 (morloc-runtime stream.rs
// shared_open_ostream_with_schema, flush_write_buffer, append_one_element,
// emit_subpacket_to_disk, shared_close_handle; morloc-runtime-types
// packet.rs make_stream_header_block, make_footer_packet,
// make_temp_footer_packet, make_final_footer_packet, StreamDiag).
//
// A stream file is a STREAM header (32 bytes, the value schema `[T]` as
// metadata), then one DATA sub-packet (MESG+VOIDSTAR, uncompressed) per
// flush, each holding the elements written since the previous one, then a
// footer: after each flush a temp footer (the StreamDiag block) with the
// 8-byte EOF tail, overwritten by the next sub-packet; at close the final
// footer (StreamDiag, SUBPACKET_INDEX, FOOTER_FINAL, FOOTER_STATUS closed)
// and its tail. A sub-packet's payload is morloc's write buffer: the Array
// header {n, 16}, the n elements' slots, then each element's own variable
// data, each padded to 8 bytes, relative pointers counted from the
// payload's start. Only the Rust dialect (0.88 on) has stream files.

// Stream-file packet types and metadata blocks (packet.rs:24-28, 202-274).
const (
	metaSubpacketIndex = 5
	metaStreamDiag     = 6
	metaFooterFinal    = 7
	metaFooterStatus   = 8
	footerClosed       = 0
	streamDiagSize     = 160
	streamTailSize     = 8
)

// streamTailMagic is PACKET_MAGIC with its bytes reversed (packet.rs:183).
var streamTailMagic = [4]byte{0x07, 0x07, 0xf8, 0x6d}

// maxWriteBuffer is morloc's write buffer (stream.rs
// WRITE_BUFFER_BYTES_DEFAULT): buffered elements are flushed when they
// would pass it.
const maxWriteBuffer = 16 << 20

// streamDiag is packet.rs StreamDiag (160 bytes, little-endian).
type streamDiag struct {
	pid, oversize                                         uint32
	start, subpackets, elements, uncompressed, compressed uint64
	largest, largestIdx, firstFlush, lastFlush            uint64
	tail                                                  []uint64 // at most 8, oldest first
}

func (d *streamDiag) bytes() []byte {
	b := make([]byte, 0, streamDiagSize)
	b = binary.LittleEndian.AppendUint32(b, 1) // STREAM_DIAG_VERSION
	b = binary.LittleEndian.AppendUint32(b, d.pid)
	b = binary.LittleEndian.AppendUint32(b, d.oversize)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(d.tail)))
	b = binary.LittleEndian.AppendUint64(b, 0) // reserved
	for _, v := range []uint64{d.start, d.subpackets, d.elements, d.uncompressed, d.compressed, d.largest, d.largestIdx, d.firstFlush, d.lastFlush} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for i := 0; i < 8; i++ {
		var v uint64
		if i < len(d.tail) {
			v = d.tail[i]
		}
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// footerPacket is make_footer_packet: a FOOTER header whose offset and
// length are the blocks' size, then the blocks, then the EOF tail.
func footerPacket(blocks ...[]byte) []byte {
	var body []byte
	for i := 0; i+1 < len(blocks); i += 2 {
		body = append(body, 'm', 'm', 'h', blocks[i][0])
		body = binary.LittleEndian.AppendUint32(body, uint32(len(blocks[i+1])))
		body = append(body, blocks[i+1]...)
	}
	out := appendHeader(nil, [8]byte{TypeFooter}, uint32(len(body)), uint64(len(body)))
	out = append(out, body...)
	out = binary.LittleEndian.AppendUint32(out, uint32(HeaderSize+len(body)))
	return append(out, streamTailMagic[:]...)
}

// schemaMeta is a metadata area holding one SCHEMA_STRING block (NUL
// ended), padded to 32 bytes (packet.rs append_metadata_entry).
func schemaMeta(schema string) []byte {
	m := []byte{'m', 'm', 'h', MetaSchema}
	m = binary.LittleEndian.AppendUint32(m, uint32(len(schema)+1))
	m = append(m, schema...)
	m = append(m, 0)
	for len(m)%32 != 0 {
		m = append(m, 0)
	}
	return m
}

// OStream writes one morloc stream of values of a list type [T]: to a file
// (seekable: temp footers after each flush) or to a pipe such as stderr
// (header, sub-packets and the final footer only, as morloc's nexus
// relays a stdio stream).
type OStream struct {
	w        io.Writer
	f        *os.File // the file, when the stream is one
	list     *node    // [T]
	elem     *node
	schema   string // the value schema [T], as the header holds it
	cursor   int64  // where the next sub-packet goes
	seekable bool
	diag     streamDiag
	entries  [][2]uint64 // (offset, element count) of each sub-packet
	buf      [][]byte    // the elements' flattened blobs since the last flush
	bufSize  int
	closed   bool
}

// streamType checks that t is a list type a stream can hold (in a dialect
// that has stream files) and returns its layout.
func streamType(t *manifest.Type, d Dialect) (*node, error) {
	if !d.VolumeRelptr {
		return nil, fmt.Errorf("stream files exist from morloc 0.88 on, not in %s", d.Version)
	}
	if t == nil || t.Unwrap().Kind != manifest.List {
		return nil, fmt.Errorf("a stream holds a list type, not %s", t)
	}
	return layout(t.Unwrap(), d)
}

// CreateStream opens path for writing a stream of t (a list type, the
// value schema morloc writes): the file is created or emptied, locked
// against another writer (flock, as morloc does), and its header written.
func CreateStream(path string, t *manifest.Type, d Dialect) (*OStream, error) {
	n, err := streamType(t, d)
	if err != nil {
		return nil, err
	}
	if path == "/dev/stdout" || path == "/dev/stderr" || path == "/dev/stdin" || path == "-" {
		return nil, fmt.Errorf("@open OStream '%s': use @stdout or @stderr for the standard streams", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("@open OStream '%s': could not acquire exclusive flock: %v", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	s := newOStream(f, n, WireSchema(t.Unwrap()))
	s.f, s.seekable = f, true
	hdr := s.header()
	if _, err := f.WriteAt(hdr, 0); err != nil {
		f.Close()
		return nil, err
	}
	s.cursor = int64(len(hdr))
	return s, nil
}

// AppendStream opens an existing stream file of t to write more elements
// after its last whole sub-packet (morloc's @append): its schema must be
// t's; its footer is replaced at close.
func AppendStream(path string, t *manifest.Type, d Dialect) (*OStream, error) {
	n, err := streamType(t, d)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("@append '%s': could not acquire exclusive flock: %v", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	schema := WireSchema(t.Unwrap())
	s := newOStream(f, n, schema)
	s.f, s.seekable = f, true
	if err := s.resume(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("@append '%s': %w", path, err)
	}
	return s, nil
}

// StdioStream writes a stream of t to w, a pipe (morloc's @stderr).
func StdioStream(w io.Writer, t *manifest.Type, d Dialect) (*OStream, error) {
	n, err := streamType(t, d)
	if err != nil {
		return nil, err
	}
	s := newOStream(w, n, WireSchema(t.Unwrap()))
	hdr := s.header()
	if _, err := w.Write(hdr); err != nil {
		return nil, err
	}
	s.cursor = int64(len(hdr))
	return s, nil
}

func newOStream(w io.Writer, n *node, schema string) *OStream {
	return &OStream{w: w, list: n, elem: n.elem, schema: schema}
}

func (s *OStream) header() []byte {
	meta := schemaMeta(s.schema)
	out := appendHeader(nil, [8]byte{TypeStream}, uint32(len(meta)), math.MaxUint64)
	return append(out, meta...)
}

// resume reads an existing stream file: its schema, then its sub-packets
// up to the first packet that is not a whole data packet.
func (s *OStream) resume(b []byte) error {
	p, err := ParseHeader(b)
	if err != nil {
		return err
	}
	if p.Type() != TypeStream {
		return errors.New("not a morloc stream file")
	}
	end := HeaderSize + int(p.Offset)
	if end > len(b) {
		return errors.New("truncated stream header")
	}
	hp := &Packet{Header: p, Meta: b[HeaderSize:end]}
	if got, _ := hp.Schema(); got != s.schema {
		return fmt.Errorf("schema mismatch: the file holds `%s`, the stream writes `%s`", got, s.schema)
	}
	pos := end
	for pos+HeaderSize <= len(b) {
		h, err := ParseHeader(b[pos:])
		if err != nil || h.Type() != TypeData {
			break
		}
		size := HeaderSize + int(h.Offset) + int(h.Length)
		if pos+size > len(b) {
			break
		}
		payload := b[pos+HeaderSize+int(h.Offset) : pos+size]
		count := uint64(0)
		if len(payload) >= 8 {
			count = binary.LittleEndian.Uint64(payload)
		}
		s.entries = append(s.entries, [2]uint64{uint64(pos), count})
		s.diag.subpackets++
		s.diag.elements += count
		s.diag.uncompressed += uint64(len(payload))
		s.diag.compressed += uint64(len(payload))
		pos += size
	}
	s.cursor = int64(pos)
	return s.f.Truncate(int64(pos))
}

// Write adds the elements of values (a JSON array of T) to the stream;
// level is the compression level, which must be 0 (nexus has no zstd).
func (s *OStream) Write(level int, values json.RawMessage) error {
	if s.closed {
		return errors.New("@write on a closed stream")
	}
	if level != 0 {
		return fmt.Errorf("@write level %d: nexus writes uncompressed streams only (level 0)", level)
	}
	dec := json.NewDecoder(bytes.NewReader(values))
	dec.UseNumber()
	var items []any
	if err := dec.Decode(&items); err != nil {
		return fmt.Errorf("@write: expected a JSON array of elements: %v", err)
	}
	for i, it := range items {
		blob, err := flatten(s.elem, it)
		if err != nil {
			return fmt.Errorf("@write: element %d: %w", i, err)
		}
		if s.bufSize+len(blob)+s.elem.width > maxWriteBuffer && len(s.buf) > 0 {
			if err := s.Flush(); err != nil {
				return err
			}
		}
		s.buf = append(s.buf, blob)
		s.bufSize += len(blob)
		s.diag.elements++
	}
	return nil
}

// Flush writes the elements buffered since the last flush as one
// sub-packet; with none buffered it does nothing.
func (s *OStream) Flush() error {
	if s.closed {
		return errors.New("@flush on a closed stream")
	}
	if len(s.buf) == 0 {
		return nil
	}
	payload := s.payload()
	meta := schemaMeta(s.schema)
	pkt := appendHeader(nil, [8]byte{TypeData, SourceMesg, FormatVoidstar}, uint32(len(meta)), uint64(len(payload)))
	pkt = append(pkt, meta...)
	pkt = append(pkt, payload...)
	at := s.cursor
	if err := s.put(pkt, at); err != nil {
		return err
	}
	s.cursor += int64(len(pkt))
	s.entries = append(s.entries, [2]uint64{uint64(at), uint64(len(s.buf))})
	d := &s.diag
	d.subpackets++
	d.uncompressed += uint64(len(payload))
	d.compressed += uint64(len(payload))
	if uint64(len(payload)) > d.largest {
		d.largest, d.largestIdx = uint64(len(payload)), d.subpackets-1
	}
	now := nowMicros()
	if d.firstFlush == 0 {
		d.firstFlush = now
	}
	d.lastFlush = now
	d.tail = append(d.tail, uint64(at))
	if len(d.tail) > 8 {
		d.tail = d.tail[1:]
	}
	s.buf, s.bufSize = s.buf[:0], 0
	if s.seekable {
		temp := footerPacket([]byte{metaStreamDiag}, d.bytes())
		return s.put(temp, s.cursor)
	}
	return nil
}

// Close flushes what is buffered and writes the final footer.
func (s *OStream) Close() error {
	if s.closed {
		return errors.New("@close on a closed stream")
	}
	if err := s.Flush(); err != nil {
		return err
	}
	s.closed = true
	idx := binary.LittleEndian.AppendUint64(nil, uint64(len(s.entries)))
	for _, e := range s.entries {
		idx = binary.LittleEndian.AppendUint64(idx, e[0])
		idx = binary.LittleEndian.AppendUint64(idx, e[1])
	}
	final := footerPacket([]byte{metaStreamDiag}, s.diag.bytes(), []byte{metaSubpacketIndex}, idx,
		[]byte{metaFooterFinal}, nil, []byte{metaFooterStatus}, []byte{footerClosed})
	if err := s.put(final, s.cursor); err != nil {
		return err
	}
	if s.f != nil {
		if err := s.f.Truncate(s.cursor + int64(len(final))); err != nil {
			return err
		}
		if err := s.f.Sync(); err != nil {
			return err
		}
		return s.f.Close()
	}
	return nil
}

// Abort closes the file without a final footer: what a run that failed
// leaves, a temp-footer file (morloc's sweep does the same).
func (s *OStream) Abort() {
	if s.closed {
		return
	}
	s.closed = true
	if s.f != nil {
		s.f.Close()
	}
}

func (s *OStream) put(b []byte, at int64) error {
	if s.seekable {
		_, err := s.f.WriteAt(b, at)
		return err
	}
	_, err := s.w.Write(b)
	return err
}

// payload lays the buffered elements out as morloc's write buffer does
// (stream.rs append_one_element, flush_write_buffer): the Array header,
// the elements' slots, then each element's variable data (its flattened
// blob past the slot) padded to 8 bytes, its relative pointers moved from
// the blob's start to the payload's.
func (s *OStream) payload() []byte {
	w := s.elem.width
	n := len(s.buf)
	dataStart := 16 + n*w
	out := make([]byte, dataStart, dataStart+s.bufSize)
	binary.LittleEndian.PutUint64(out, uint64(n))
	binary.LittleEndian.PutUint64(out[8:], 16)
	for i, blob := range s.buf {
		slot := 16 + i*w
		copy(out[slot:slot+w], blob[:w])
		base := len(out)
		out = append(out, blob[w:]...)
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		// A byte at blob offset p is now at slot+p (p < w) or base+p-w.
		where := func(p int) int {
			if p < w {
				return slot + p
			}
			return base + p - w
		}
		relocate(s.elem, blob, 0, func(p int, r uint64) {
			binary.LittleEndian.PutUint64(out[where(p):], uint64(where(int(r))))
		})
	}
	return out
}

// relocate calls move for each relative pointer of the value of n at
// offset at of blob (a flattened value, pointers counted from its start):
// the pointer's offset and its value.
func relocate(n *node, blob []byte, at int, move func(p int, r uint64)) {
	switch n.kind {
	case manifest.Int:
		if n.prim == pBig && binary.LittleEndian.Uint64(blob[at:]) > 1 {
			move(at+8, binary.LittleEndian.Uint64(blob[at+8:]))
		}
	case manifest.Str, manifest.List:
		size := int(binary.LittleEndian.Uint64(blob[at:]))
		if size == 0 {
			return
		}
		r := int(binary.LittleEndian.Uint64(blob[at+8:]))
		move(at+8, uint64(r))
		if n.kind == manifest.List && !n.elem.fixedWidth() {
			for i := 0; i < size; i++ {
				relocate(n.elem, blob, r+i*n.elem.width, move)
			}
		}
	case manifest.Tuple, manifest.Record:
		for k, c := range n.items {
			relocate(c, blob, at+n.offs[k], move)
		}
	case manifest.Optional:
		r := binary.LittleEndian.Uint64(blob[at:])
		if int64(r) == -1 {
			return
		}
		move(at, r)
		relocate(n.elem, blob, int(r), move)
	case manifest.BackRef:
		relocate(n.elem, blob, at, move)
	}
}

// flatten lays out one value of n as morloc's flatten_into does: its slot
// first, then its variable data depth first, relative pointers counted
// from the blob's start.
func flatten(n *node, v any) ([]byte, error) {
	e := &vsEncoder{buf: make([]byte, n.width)}
	if err := e.value(n, v, 0, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type vsEncoder struct {
	buf []byte
}

// alloc reserves size bytes at the cursor aligned to align, zeroed.
func (e *vsEncoder) alloc(size, align int) int {
	at := alignUp(len(e.buf), max(align, 1))
	for len(e.buf) < at+size {
		e.buf = append(e.buf, 0)
	}
	return at
}

func (e *vsEncoder) value(n *node, v any, at, depth int) error {
	if depth > 512 {
		return errors.New("value nested too deeply")
	}
	b := e.buf[at : at+n.width]
	switch n.kind {
	case manifest.Nil:
		return nil
	case manifest.Bool:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("expected a boolean, got %v", v)
		}
		if x {
			b[0] = 1
		}
		return nil
	case manifest.Int:
		if n.prim == pBig {
			return e.bigInt(v, at)
		}
		return putInt(b, n.prim, v)
	case manifest.Float:
		f, err := floatOf(v)
		if err != nil {
			return err
		}
		if n.prim == pF4 {
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
		} else {
			binary.LittleEndian.PutUint64(b, math.Float64bits(f))
		}
		return nil
	case manifest.Str:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected a string, got %v", v)
		}
		binary.LittleEndian.PutUint64(b, uint64(len(s)))
		if len(s) == 0 {
			return nil
		}
		d := e.alloc(len(s), 1)
		copy(e.buf[d:], s)
		binary.LittleEndian.PutUint64(e.buf[at+8:], uint64(d))
		return nil
	case manifest.List:
		items, err := listOf(n, v)
		if err != nil {
			return err
		}
		if n.fixedLen > 0 && len(items) != n.fixedLen {
			return fmt.Errorf("expected exactly %d items, got %d", n.fixedLen, len(items))
		}
		binary.LittleEndian.PutUint64(e.buf[at:], uint64(len(items)))
		if len(items) == 0 {
			return nil
		}
		align := n.elem.align
		if n.elem.prim.numeric() || n.elem.prim == pBool {
			align = 64 // array_data_alignment: SIMD-aligned numbers
		}
		w := n.elem.width
		d := e.alloc(len(items)*w, align)
		binary.LittleEndian.PutUint64(e.buf[at+8:], uint64(d))
		for i, it := range items {
			if err := e.value(n.elem, it, d+i*w, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case manifest.Tuple:
		items, ok := v.([]any)
		if !ok || len(items) != len(n.items) {
			return fmt.Errorf("expected a tuple of %d items, got %v", len(n.items), v)
		}
		for k, c := range n.items {
			if err := e.value(c, items[k], at+n.offs[k], depth+1); err != nil {
				return err
			}
		}
		return nil
	case manifest.Record:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("expected an object, got %v", v)
		}
		for k, c := range n.items {
			if err := e.value(c, obj[n.keys[k]], at+n.offs[k], depth+1); err != nil {
				return fmt.Errorf(".%s: %w", n.keys[k], err)
			}
		}
		return nil
	case manifest.Optional:
		if v == nil {
			binary.LittleEndian.PutUint64(b, math.MaxUint64) // RELNULL
			return nil
		}
		d := e.alloc(n.elem.width, n.elem.align)
		binary.LittleEndian.PutUint64(e.buf[at:], uint64(d))
		return e.value(n.elem, v, d, depth+1)
	case manifest.BackRef:
		return e.value(n.elem, v, at, depth+1)
	}
	return fmt.Errorf("cannot write a %s", n.code)
}

func listOf(n *node, v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case map[string]any:
		if n.isMap {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = []any{k, x[k]}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("expected an array, got %v", v)
}

func floatOf(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseFloat(string(x), 64)
	case string:
		switch strings.ToLower(x) {
		case "nan":
			return math.NaN(), nil
		case "inf", "infinity":
			return math.Inf(1), nil
		case "-inf", "-infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("expected a number, got %v", v)
}

// integer is v, a decoded JSON number, as the integer it must be.
func integer(v any) (*big.Int, error) {
	num, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("expected an integer, got %v", v)
	}
	i, ok := new(big.Int).SetString(string(num), 10)
	if !ok {
		return nil, fmt.Errorf("expected an integer, got %s", num)
	}
	return i, nil
}

func putInt(b []byte, p prim, v any) error {
	i, err := integer(v)
	if err != nil {
		return err
	}
	lo, hi, _ := intRange(p)
	if p == pU8 {
		if i.Sign() < 0 || i.BitLen() > 64 {
			return fmt.Errorf("%s does not fit u8", v)
		}
		binary.LittleEndian.PutUint64(b, i.Uint64())
		return nil
	}
	if !i.IsInt64() || i.Int64() < lo || i.Int64() > hi {
		return fmt.Errorf("%s does not fit %s", v, primName(p))
	}
	x := i.Int64()
	switch primWidth(p) {
	case 1:
		b[0] = byte(x)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(x))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(x))
	default:
		binary.LittleEndian.PutUint64(b, uint64(x))
	}
	return nil
}

func primName(p prim) string {
	for k, v := range primCodes {
		if v == p {
			return k
		}
	}
	return "?"
}

// bigInt writes a j value as decimal_to_limbs does: its minimal
// two's-complement little-endian u64 limbs; one limb inline {1, value},
// more behind a relative pointer {n, relptr}.
func (e *vsEncoder) bigInt(v any, at int) error {
	i, err := integer(v)
	if err != nil {
		return err
	}
	limbs := twosLimbs(i)
	binary.LittleEndian.PutUint64(e.buf[at:], uint64(len(limbs)))
	if len(limbs) == 1 {
		binary.LittleEndian.PutUint64(e.buf[at+8:], limbs[0])
		return nil
	}
	d := e.alloc(8*len(limbs), 8)
	binary.LittleEndian.PutUint64(e.buf[at+8:], uint64(d))
	for k, l := range limbs {
		binary.LittleEndian.PutUint64(e.buf[d+8*k:], l)
	}
	return nil
}

func twosLimbs(i *big.Int) []uint64 {
	if i.Sign() == 0 {
		return []uint64{0}
	}
	mag := new(big.Int).Abs(i)
	var limbs []uint64
	for _, w := range mag.Bits() {
		limbs = append(limbs, uint64(w))
	}
	if i.Sign() < 0 {
		carry := uint64(1)
		for k := range limbs {
			limbs[k] = ^limbs[k]
			sum := limbs[k] + carry
			if sum < carry {
				carry = 1
			} else {
				carry = 0
			}
			limbs[k] = sum
		}
		if limbs[len(limbs)-1]>>63 == 0 {
			limbs = append(limbs, math.MaxUint64)
		}
	} else if limbs[len(limbs)-1]>>63 != 0 {
		limbs = append(limbs, 0)
	}
	return limbs
}

func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }
