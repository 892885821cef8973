package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
)

// DefaultMaxLine is the cap on one stdio message (docs/spec.md §4.1).
const DefaultMaxLine = 64 << 20

// ErrLineTooLong is returned by LineReader.Next for a line over the cap; the
// line has been read to its end and dropped, so the next call reads the next line.
var ErrLineTooLong = errors.New("line too long")

// LineReader reads newline-delimited messages of any length up to a cap,
// never holding more than the cap of an oversized line (unlike bufio.Scanner,
// whose default token limit is 64 KiB). A long line is gathered in pieces and
// joined once it is known to fit, so memory stays near the cap even for a
// line far beyond it (a growing buffer would leave every size it outgrew
// behind in the process's memory).
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader reads lines from r, refusing those longer than max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its "\n" (and a trailing "\r"), in
// a slice of its own. At the end of input it returns a
// final unterminated line if there is one, then io.EOF. A line longer than
// the cap (not counting its "\n") is read to its end and dropped, and Next
// returns ErrLineTooLong.
func (lr *LineReader) Next() ([]byte, error) {
	var pieces [][]byte // the line so far, when it spans several reads
	size := 0           // bytes of the line so far, without a final "\n"
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong && len(chunk) > 0 {
			size += len(bytes.TrimSuffix(chunk, []byte("\n")))
			switch {
			case size > lr.max:
				tooLong, pieces = true, nil
			case err == nil && pieces == nil:
				// The whole line is in the reader's buffer: the common case.
				// It is copied, since requests keep slices of it.
				return trimEOL(bytes.Clone(chunk)), nil
			default:
				pieces = append(pieces, bytes.Clone(chunk))
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrLineTooLong
			}
			return trimEOL(join(pieces)), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, ErrLineTooLong
			}
			if len(pieces) > 0 {
				return trimEOL(join(pieces)), nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// joinRelease is how many bytes of a long line's pieces join copies
// between giving their pages back to the OS.
const joinRelease = 32 << 20

// join joins a line's pieces into one buffer, letting the pieces go as
// they are copied: the pages of the pieces of a line longer than any
// before (lineMark) are given back every joinRelease bytes and at the
// end, so that the line is in memory about once, not twice (the
// pieces' 96 MB beside the line's were the peak of a 100 MB matrix's
// echo).
func join(pieces [][]byte) []byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	release := lineMark.Raise(n)
	line := make([]byte, 0, n)
	copied := 0
	for i, p := range pieces {
		line = append(line, p...)
		pieces[i] = nil
		if copied += len(p); release && (copied >= joinRelease || i == len(pieces)-1) {
			debug.FreeOSMemory()
			copied = 0
		}
	}
	return line
}

// Buffered is how many bytes of input have been read ahead of the lines
// returned so far.
func (lr *LineReader) Buffered() int { return lr.r.Buffered() }

// trimEOL drops a final "\n", then a final "\r".
func trimEOL(line []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
}

// lineWriter writes one message per line; one mutex serialises every reply
// and notification so that lines never interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// writeWith writes one message with write, which has the writer to itself
// until it returns.
func (lw *lineWriter) writeWith(write func(io.Writer) error) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if err := write(lw.w); err != nil {
		lw.err = fmt.Errorf("write to client: %w", err)
	}
	return lw.err
}

// writeLine writes one message that already ends with its newline.
func (lw *lineWriter) writeLine(line []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if _, err := lw.w.Write(line); err != nil {
		lw.err = fmt.Errorf("write to client: %w", err)
	}
	return lw.err
}
