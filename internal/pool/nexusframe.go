package pool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/nexus-mcp/nexus/internal/memmark"
)

// MaxFrameSize is the largest frame body either side may send (1 GiB: a
// 300 MB list of integers is a 343 MB i8 array).
const MaxFrameSize = 1 << 30

// minFrameSize is the size of the smallest JSON object, "{}".
const minFrameSize = 2

// blobBit marks a frame header as a blob's (protocol 2): its body is raw
// bytes belonging to the next message (docs/internals.md, "Frames").
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

// readChunk is how much of a frame's body is read before the rest of its
// memory is given to it: a header alone never makes nexus allocate much.
const readChunk = 1 << 20

// readFrame reads one frame's body and whether it is a blob. It returns
// io.EOF when r ends cleanly between frames, and a *ProtocolError for a bad
// length or a frame cut short. A body up to readChunk is read into a
// buffer of its size; a larger one's first readChunk bytes are read
// first, and only once they have come is the buffer of the whole length
// made (one allocation and one copy of that first chunk), so a header
// that lies about a large body costs at most readChunk, and a real one
// never a buffer grown by copying (the growth touched 1.8× the body's
// memory, every page of it a fault on a fresh heap).
func readFrame(r io.Reader) (body []byte, blob bool, err error) {
	n, err := readHeader(r)
	if err != nil {
		return nil, false, err
	}
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
	first := make([]byte, min(size, readChunk))
	if err := readBody(r, first, n); err != nil {
		return nil, blob, err
	}
	if size == len(first) {
		return first, blob, nil
	}
	if bodyMark.Raise(size) {
		debug.FreeOSMemory()
	}
	// The rest is read before the first part is copied in: a copy right
	// after the make is compiled into one runtime call (makeslicecopy)
	// that zeroes the whole tail first, in one pass the scheduler cannot
	// preempt. For a 348 MB blob that was seconds of first touches, and a
	// collection waiting on it spun a CPU signalling this goroutine
	// (nexus's CPU at 300 MB was 15 s or 8 s, by luck). Made
	// alone, memory fresh from the OS is not zeroed again, and its pages
	// are first touched by read(2).
	body = make([]byte, size)
	if err := readBody(r, body[len(first):], n); err != nil {
		return nil, blob, err
	}
	copy(body, first)
	return body, blob, nil
}

// readHeader reads a frame's length word. From a bufio.Reader (the read
// loop's) it is taken in place: a header array passed to io.ReadFull
// escapes, an allocation for every frame.
func readHeader(r io.Reader) (uint32, error) {
	if br, ok := r.(*bufio.Reader); ok {
		b, err := br.Peek(frameHeader)
		if len(b) == frameHeader {
			br.Discard(frameHeader)
			return binary.BigEndian.Uint32(b), nil
		}
		if len(b) > 0 && err == io.EOF {
			return 0, protocolErrorf("end of stream inside a frame header")
		}
		return 0, err
	}
	var header [frameHeader]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, protocolErrorf("end of stream inside a frame header")
		}
		return 0, err
	}
	return binary.BigEndian.Uint32(header[:]), nil
}

// readBody fills b from r, a part of a frame of n bytes.
func readBody(r io.Reader, b []byte, n uint32) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return protocolErrorf("end of stream inside a frame of %d bytes", n)
		}
		return err
	}
	return nil
}

// bodyMark is the largest large frame body read so far: readFrame gives
// free pages back to the OS only before a body larger than it (memmark;
// the call's request line, released once its arguments were sent, is free
// by then but too small for the body: 96 MB of a 100 MB integer echo's
// peak).
var bodyMark = memmark.Mark{Min: largeFrame}
