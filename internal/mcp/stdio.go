package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxLine is the cap on one stdio message (SPEC §4.1).
const DefaultMaxLine = 64 << 20

// ErrLineTooLong is returned by LineReader.Next for a line over the cap; the
// line has been read to its end and dropped, so the next call reads the next line.
var ErrLineTooLong = errors.New("line too long")

// LineReader reads newline-delimited messages of any length up to a cap,
// never holding more than the cap of an oversized line (unlike bufio.Scanner,
// whose default token limit is 64 KiB).
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader reads lines from r, refusing those longer than max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its "\n" (and a trailing "\r"). The
// slice is valid until the next call. At the end of input it returns a
// final unterminated line if there is one, then io.EOF.
func (lr *LineReader) Next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 { // +1: the newline itself
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrLineTooLong
			}
			line := lr.buf[:len(lr.buf)-1]
			return bytes.TrimSuffix(line, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, ErrLineTooLong
			}
			if len(lr.buf) > 0 {
				line := bytes.TrimSuffix(lr.buf, []byte("\r"))
				lr.buf = lr.buf[:0]
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// lineWriter writes one message per line; one mutex serialises every reply
// and notification so that lines never interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (lw *lineWriter) writeLine(msg []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	if _, err := lw.w.Write(buf); err != nil {
		lw.err = fmt.Errorf("write to client: %w", err)
	}
	return lw.err
}
