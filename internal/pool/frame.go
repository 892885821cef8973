package pool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxFrameSize is the largest frame payload either side may send (256 MiB).
const MaxFrameSize = 256 << 20

// minFrameSize is the size of the smallest JSON object, "{}".
const minFrameSize = 2

// ProtocolError reports a frame or message that breaks the pool protocol.
// The side that sees one stops talking to the other.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return e.Reason }

func protocolErrorf(format string, args ...any) error {
	return &ProtocolError{Reason: fmt.Sprintf(format, args...)}
}

// writeFrame writes payload as one frame. Callers serialize writes: a frame
// must never interleave with another.
func writeFrame(w io.Writer, payload []byte) error {
	if len(payload) < minFrameSize || len(payload) > MaxFrameSize {
		return protocolErrorf("frame of %d bytes is outside %d..%d", len(payload), minFrameSize, MaxFrameSize)
	}
	// One buffer so that a small frame is one write(2), not two.
	buf := make([]byte, 4+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(len(payload)))
	copy(buf[4:], payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame's payload. It returns io.EOF when r ends cleanly
// between frames, and a *ProtocolError for a bad length or a frame cut short.
func readFrame(r io.Reader) ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, protocolErrorf("end of stream inside a frame header")
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(header[:])
	if n < minFrameSize || n > MaxFrameSize {
		return nil, protocolErrorf("frame length %d is outside %d..%d", n, minFrameSize, MaxFrameSize)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, protocolErrorf("end of stream inside a frame of %d bytes", n)
		}
		return nil, err
	}
	return payload, nil
}
