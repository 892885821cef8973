package morlocwire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Data files: the bytes a morloc program reads for a file argument
// (source: file, form: packet or bytes) or @load: a whole data packet, or
// bare msgpack (morloc-runtime cli.rs load_morloc_data_file).

// IsPacket reports whether b starts with a packet's magic.
func IsPacket(b []byte) bool {
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == Magic
}

// DataPacketJSON decodes a whole data packet held in b (as morloc's
// `-f packet` writes it, or a @save file) into JSON for the type t, in
// nexus's value conventions. A packet whose schema metadata differs from
// t's wire schema is refused as morloc refuses it ("file has schema `ai4`,
// requested `s`"); a compressed packet (zstd) is refused with a clear
// error, nexus having no zstd.
func DataPacketJSON(b []byte, t *manifest.Type, d Dialect) (json.RawMessage, error) {
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("a morloc packet needs at least %d bytes, the file has %d", HeaderSize, len(b))
	}
	p, err := ParsePacket(b)
	if err != nil {
		return nil, err
	}
	h := p.Header
	switch {
	case h.Type() == TypeStream:
		return nil, fmt.Errorf("a morloc stream file, not a data packet (stream files are read as IStream or IFile values)")
	case h.Type() != TypeData:
		return nil, fmt.Errorf("expected a data packet, got a packet of type %d", h.Type())
	case h.Compression() != 0:
		return nil, fmt.Errorf("a compressed morloc packet (method %d): nexus reads uncompressed packets only (write it with -z 0)", h.Compression())
	}
	if s, ok := p.Schema(); ok && t != nil {
		if want := WireSchema(t); s != want {
			return nil, fmt.Errorf("schema mismatch: file has schema `%s`, requested `%s`", s, want)
		}
	}
	if h.Source() == SourceMesg && h.Format() == FormatVoidstar && h.Status() == StatusPass {
		return p.Result(t, d, nil)
	}
	if h.Source() == SourceMesg && h.Format() == FormatMsgpack && h.Status() == StatusPass {
		return p.Result(t, d, nil)
	}
	return nil, fmt.Errorf("a %s+%s packet: nexus reads MESG packets of VOIDSTAR or MSGPACK data", name(sourceNames[:], h.Source()), name(formatNames[:], h.Format()))
}

// MsgpackJSON decodes msgpack bytes holding one value of type t into JSON.
func MsgpackJSON(b []byte, t *manifest.Type, d Dialect) (json.RawMessage, error) {
	n, err := layout(t, d)
	if err != nil {
		return nil, err
	}
	out, err := msgpackJSON(n, b)
	if err != nil {
		return nil, fmt.Errorf("not msgpack of %s: %w", WireSchema(t), err)
	}
	return out, nil
}
