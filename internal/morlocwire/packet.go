package morlocwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// HeaderSize is the size of every packet's header (v0.69 packet.h:93-118;
// v0.98 morloc-runtime-types/src/packet.rs:460-472).
const HeaderSize = 32

// Magic is the first four bytes of every packet, little-endian: 6d f8 07 07.
const Magic = 0x0707f86d

// Packet types: byte 12 of the header (v0.69 packet.h:18-20; v0.98 packet.rs:24-28).
const (
	TypeData   = 0
	TypeCall   = 1
	TypePing   = 2
	TypeStream = 3 // 0.98, stream files only
	TypeFooter = 4 // 0.98, stream files only
)

// Data sources (v0.69 packet.h:53-55; v0.98 packet.rs:59-61).
const (
	SourceMesg = 0 // the payload is the data
	SourceFile = 1 // the payload is a path to a file holding the data
	SourceRptr = 2 // the payload is an 8-byte relative pointer into shared memory
)

// Data formats (v0.69 packet.h:58-63; v0.98 packet.rs:65-70).
const (
	FormatJSON     = 0
	FormatMsgpack  = 1
	FormatText     = 2
	FormatData     = 3
	FormatVoidstar = 4
	FormatArrow    = 5
)

// Status of a data packet (v0.69 packet.h:72-73).
const (
	StatusPass = 0
	StatusFail = 1
)

// Metadata block types (v0.69 packet.h:123-124; v0.98 packet.rs:202-260).
const (
	MetaSchema     = 1 // NUL-terminated schema string, hints removed
	MetaXXHash     = 2
	MetaVolIndex   = 3 // 0.98: u16 volume index baked into an inline payload's relptrs
	MetaFrameIndex = 4 // 0.98: zstd frame index
)

// Header is a decoded 32-byte packet header.
type Header struct {
	Magic   uint32
	Plain   uint16
	Version uint16
	Flavor  uint16
	Mode    uint16
	Command [8]byte // byte 0 is the packet type; the rest depends on it
	Offset  uint32  // metadata bytes between the header and the payload
	Length  uint64  // payload bytes
}

// ParseHeader decodes the first 32 bytes of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("morloc packet header: %d bytes, want %d", len(b), HeaderSize)
	}
	h := Header{
		Magic:   binary.LittleEndian.Uint32(b[0:]),
		Plain:   binary.LittleEndian.Uint16(b[4:]),
		Version: binary.LittleEndian.Uint16(b[6:]),
		Flavor:  binary.LittleEndian.Uint16(b[8:]),
		Mode:    binary.LittleEndian.Uint16(b[10:]),
		Offset:  binary.LittleEndian.Uint32(b[20:]),
		Length:  binary.LittleEndian.Uint64(b[24:]),
	}
	copy(h.Command[:], b[12:20])
	if h.Magic != Magic {
		return h, fmt.Errorf("morloc packet header: magic %08x, want %08x (not a morloc packet)", h.Magic, uint32(Magic))
	}
	return h, nil
}

// Type is the packet type (TypeData, TypeCall, TypePing...).
func (h Header) Type() byte { return h.Command[0] }

// Source, Format, Compression, Encryption and Status are a data packet's fields.
func (h Header) Source() byte      { return h.Command[1] }
func (h Header) Format() byte      { return h.Command[2] }
func (h Header) Compression() byte { return h.Command[3] }
func (h Header) Encryption() byte  { return h.Command[4] }
func (h Header) Status() byte      { return h.Command[5] }

// Midx is a call packet's manifold index (the manifest command's mid).
func (h Header) Midx() uint32 { return binary.LittleEndian.Uint32(h.Command[4:]) }

// Entrypoint is a call packet's entrypoint (0 local, 1 remote).
func (h Header) Entrypoint() byte { return h.Command[1] }

func appendHeader(dst []byte, cmd [8]byte, offset uint32, length uint64) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, Magic)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // plain, version, flavor, mode: all 0 in both versions
	dst = append(dst, cmd[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, offset)
	return binary.LittleEndian.AppendUint64(dst, length)
}

// Ping is the ping packet a pool echoes byte for byte (v0.69 packet.c:88-102,
// 49-60; v0.98 packet.rs:504-515).
func Ping() []byte {
	return appendHeader(make([]byte, 0, HeaderSize), [8]byte{TypePing}, 0, 0)
}

// IsPing reports whether h (at least a header) is a ping packet.
func IsPing(h []byte) bool {
	hd, err := ParseHeader(h)
	return err == nil && hd.Type() == TypePing
}

// AppendCall appends a local call packet for mid whose body is args, the
// argument packets (AppendArg) concatenated in order (v0.69
// packet.c:438-475; v0.98 packet.rs:846-866).
func AppendCall(dst []byte, mid uint32, args []byte) []byte {
	return append(AppendCallHeader(dst, mid, len(args)), args...)
}

// AppendCallHeader appends the header alone of a call packet for mid whose
// argument packets, length bytes in all, are written after it apart (an
// ArrayArg among them).
func AppendCallHeader(dst []byte, mid uint32, length int) []byte {
	var cmd [8]byte
	cmd[0] = TypeCall
	binary.LittleEndian.PutUint32(cmd[4:], mid)
	return appendHeader(dst, cmd, 0, uint64(length))
}

// CallPacket is AppendCall into a new buffer.
func CallPacket(mid uint32, args []byte) []byte {
	return AppendCall(make([]byte, 0, HeaderSize+len(args)), mid, args)
}

// appendDataHeader appends the header of a MESG+MSGPACK argument packet
// with no metadata (pools take their schema from their own code, so none is
// needed: reference §2.2 [probe]) and returns where its length field is.
func appendDataHeader(dst []byte) ([]byte, int) {
	cmd := [8]byte{TypeData, SourceMesg, FormatMsgpack}
	dst = appendHeader(dst, cmd, 0, 0)
	return dst, len(dst) - 8
}

// Packet is one packet read from a pool: its header, metadata and payload.
type Packet struct {
	Header  Header
	Meta    []byte // the metadata area (Header.Offset bytes, padding included)
	Payload []byte // Header.Length bytes
}

// ReadPacket reads one whole packet from r: the header, then the metadata
// and payload into one buffer sized from the header. A packet larger than
// max bytes (header excluded) is refused before anything is allocated.
// A reader that ends before the first byte gives io.EOF (the pool closed
// the connection without replying, as when its worker died).
func ReadPacket(r io.Reader, max int64) (*Packet, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("morloc packet: connection closed inside the header: %w", err)
		}
		return nil, err
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return nil, err
	}
	body := uint64(h.Offset) + h.Length
	if h.Length > uint64(max) || body > uint64(max) {
		return nil, fmt.Errorf("morloc packet: %d bytes of metadata and payload, more than the %d allowed", body, max)
	}
	buf := make([]byte, body)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("morloc packet: connection closed after %d of %d bytes: %w", HeaderSize, HeaderSize+body, errUnexpected(err))
	}
	return &Packet{Header: h, Meta: buf[:h.Offset:h.Offset], Payload: buf[h.Offset:]}, nil
}

func errUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ParsePacket splits a whole packet held in b (as ReadPacket would read it).
func ParsePacket(b []byte) (*Packet, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	body := uint64(h.Offset) + h.Length
	if uint64(len(b)-HeaderSize) != body {
		return nil, fmt.Errorf("morloc packet: header says %d bytes of metadata and payload, got %d", body, len(b)-HeaderSize)
	}
	return &Packet{Header: h, Meta: b[HeaderSize : HeaderSize+int(h.Offset)], Payload: b[HeaderSize+int(h.Offset):]}, nil
}

// MetaBlock is one metadata block: "mmh", its type, then size bytes.
type MetaBlock struct {
	Type byte
	Data []byte
}

// MetaBlocks lists the packet's metadata blocks. They are read from the
// start of the metadata area until a block without the "mmh" magic or one
// that would run past the area: what follows is padding (v0.69
// packet.c:302-325; v0.98 packet.rs:1283-1308). Unknown types are kept.
func (p *Packet) MetaBlocks() []MetaBlock {
	var out []MetaBlock
	m := p.Meta
	for pos := 0; pos+8 <= len(m); {
		if m[pos] != 'm' || m[pos+1] != 'm' || m[pos+2] != 'h' {
			break
		}
		size := binary.LittleEndian.Uint32(m[pos+4:])
		end := uint64(pos) + 8 + uint64(size)
		if end > uint64(len(m)) {
			break
		}
		out = append(out, MetaBlock{Type: m[pos+3], Data: m[pos+8 : end]})
		pos = int(end)
	}
	return out
}

// Schema is the schema string of the packet's SCHEMA_STRING block, and
// whether it has one.
func (p *Packet) Schema() (string, bool) {
	for _, b := range p.MetaBlocks() {
		if b.Type == MetaSchema {
			s := b.Data
			for i, c := range s {
				if c == 0 {
					s = s[:i]
					break
				}
			}
			return string(s), true
		}
	}
	return "", false
}

// volIndex is the VOL_INDEX hint of an inline voidstar payload (0.98
// packet.rs:1421-1428), 0 when absent.
func (p *Packet) volIndex() uint16 {
	for _, b := range p.MetaBlocks() {
		if b.Type == MetaVolIndex && len(b.Data) >= 2 {
			return binary.LittleEndian.Uint16(b.Data)
		}
	}
	return 0
}

// Failure is a FAIL packet: the pool's error message, as the user function
// raised it (v0.69 packet.c:327-338).
type Failure struct{ Message string }

func (f *Failure) Error() string { return f.Message }
