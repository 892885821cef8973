package pool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxFrameSize is the largest frame body either side may send (256 MiB).
const MaxFrameSize = 256 << 20

// minFrameSize is the size of the smallest JSON object, "{}".
const minFrameSize = 2

// blobBit marks a frame header as a blob's (protocol 2): its body is raw
// bytes belonging to the next message (docs/pool-protocol.md, "Framing").
const blobBit = 1 << 31

// ProtocolError reports a frame or message that breaks the pool protocol.
// The side that sees one stops talking to the other.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return e.Reason }

func protocolErrorf(format string, args ...any) error {
	return &ProtocolError{Reason: fmt.Sprintf(format, args...)}
}

// frameHeader is the room a message buffer keeps in front of its payload,
// so that the header and the payload go out in one write without a copy.
const frameHeader = 4

// writeFrame writes payload as one message frame. Callers serialize writes:
// a frame must never interleave with another.
func writeFrame(w io.Writer, payload []byte) error {
	if len(payload) < minFrameSize || len(payload) > MaxFrameSize {
		return protocolErrorf("frame of %d bytes is outside %d..%d", len(payload), minFrameSize, MaxFrameSize)
	}
	// One buffer so that a small frame is one write(2), not two.
	buf := make([]byte, frameHeader+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(len(payload)))
	copy(buf[frameHeader:], payload)
	_, err := w.Write(buf)
	return err
}

// writeHeaded writes a message whose buffer starts with frameHeader bytes
// of room for the header, which it fills in.
func writeHeaded(w io.Writer, buf []byte) error {
	n := len(buf) - frameHeader
	if n < minFrameSize || n > MaxFrameSize {
		return protocolErrorf("frame of %d bytes is outside %d..%d", n, minFrameSize, MaxFrameSize)
	}
	binary.BigEndian.PutUint32(buf, uint32(n))
	_, err := w.Write(buf)
	return err
}

// writeBlob writes one blob frame.
func writeBlob(w io.Writer, data []byte) error {
	if len(data) > MaxFrameSize {
		return protocolErrorf("blob of %d bytes is over %d", len(data), MaxFrameSize)
	}
	var header [frameHeader]byte
	binary.BigEndian.PutUint32(header[:], blobBit|uint32(len(data)))
	if _, err := w.Write(header[:]); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// readChunk is how much of a frame's body is read before more memory is
// given to it: a header alone never makes nexus allocate much.
const readChunk = 1 << 20

// readFrame reads one frame's body and whether it is a blob. It returns
// io.EOF when r ends cleanly between frames, and a *ProtocolError for a bad
// length or a frame cut short. The buffer grows as the bytes arrive, so a
// header that lies about a large body costs only what was really sent.
func readFrame(r io.Reader) (body []byte, blob bool, err error) {
	var header [frameHeader]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, false, protocolErrorf("end of stream inside a frame header")
		}
		return nil, false, err
	}
	n := binary.BigEndian.Uint32(header[:])
	if n&blobBit != 0 {
		blob = true
		n &^= blobBit
		if n > MaxFrameSize {
			return nil, true, protocolErrorf("blob length %d is over %d", n, MaxFrameSize)
		}
	} else if n < minFrameSize || n > MaxFrameSize {
		return nil, false, protocolErrorf("frame length %d is outside %d..%d", n, minFrameSize, MaxFrameSize)
	}
	size := int(n)
	body = make([]byte, 0, min(size, readChunk))
	for len(body) < size {
		if len(body) == cap(body) {
			// Four times what has come: few copies, and never much more
			// memory than the bytes that really arrived.
			grown := make([]byte, len(body), min(size, 4*cap(body)))
			copy(grown, body)
			body = grown
		}
		// Never past the frame's end: append may round the capacity up.
		m, err := r.Read(body[len(body):min(cap(body), size)])
		body = body[:len(body)+m]
		if err != nil && len(body) < size {
			if errors.Is(err, io.EOF) {
				return nil, blob, protocolErrorf("end of stream inside a frame of %d bytes", n)
			}
			return nil, blob, err
		}
	}
	return body, blob, nil
}
