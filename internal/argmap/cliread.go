package argmap

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// streamFileMin is the size from which a numeric argument file is read a
// piece at a time (readNumericFile); a smaller one is read whole.
const streamFileMin = 1 << 20

// streamPiece is how much of the file is held at once.
const streamPiece = 256 << 10

// errNotNumeric stops readNumericFile at anything but brackets, commas,
// blanks and plain numbers: the file is then read the ordinary way, which
// takes or refuses it with its error messages.
var errNotNumeric = errors.New("not a plain list of numbers")

// readNumericFile reads the JSON file f, lists of numbers of type t (a
// numeric nest), straight into an array for argument index, a piece at a
// time: the file's text is never held whole, so the argument costs nexus
// its numbers (8 bytes each) and one piece, where reading it whole would
// add its size (morloc's nexus holds the file too). A first pass counts
// its commas, to size the array once. ok is false (and f must be read
// again from the start) when the file holds anything unusual: a string
// (so "NaN"), a ragged list, a number out of range, a list of the wrong
// fixed length.
func readNumericFile(f *os.File, t *manifest.Type, index int) (a ndarray.Array, ok bool, err error) {
	rank, kind, nest := numericNest(t)
	if !nest {
		return a, false, nil
	}
	piece := make([]byte, streamPiece+maxNumberLen+1)
	commas := 0
	for {
		n, err := f.Read(piece[:streamPiece])
		chunk := piece[:n]
		if bytes.IndexByte(chunk, '"') >= 0 {
			return a, false, nil
		}
		commas += bytes.Count(chunk, []byte{','})
		if err == io.EOF {
			break
		}
		if err != nil {
			return a, false, err
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return a, false, err
	}
	lo, hi := elementRange(t)
	r := &pieceReader{f: f, buf: piece[:0], e: &fastEncoder{nums: make([]byte, 0, 8*(commas+1))}}
	shape := make([]int, rank)
	for k := range shape {
		shape[k] = -1
	}
	var scan func(level int) error
	scan = func(level int) error {
		c, err := r.next()
		if err != nil {
			return err
		}
		if c != '[' {
			return errNotNumeric
		}
		r.pos++
		n := 0
		if c, err = r.next(); err != nil {
			return err
		}
		if c == ']' {
			r.pos++
		} else {
			for {
				if level == rank-1 {
					err = r.number(kind, lo, hi)
				} else {
					err = scan(level + 1)
				}
				if err != nil {
					return err
				}
				n++
				if c, err = r.next(); err != nil {
					return err
				}
				r.pos++
				if c == ']' {
					break
				}
				if c != ',' {
					return errNotNumeric
				}
			}
		}
		if shape[level] < 0 {
			shape[level] = n
		} else if shape[level] != n {
			return errNotNumeric // ragged
		}
		return nil
	}
	if err := scan(0); err != nil {
		if err == errNotNumeric || err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil // the ordinary way says what is wrong
		}
		return a, false, err
	}
	if _, err := r.next(); err != io.EOF {
		return a, false, err // nil: something after the value
	}
	for k, want := range fixedLens(t) {
		if want > 0 && shape[k] >= 0 && shape[k] != want {
			return a, false, nil
		}
	}
	for k := range shape {
		if shape[k] < 0 {
			shape[k] = 0
		}
	}
	dtype := ndarray.I8
	if kind == ndarray.Real {
		dtype = ndarray.F8
	}
	return ndarray.Array{Path: []any{index}, DType: dtype, Shape: shape, Data: r.e.nums}, true, nil
}

// pieceReader is a window on a file: buf[pos:] are the bytes read and not
// yet taken.
type pieceReader struct {
	f   *os.File
	buf []byte
	pos int
	eof bool
	e   *fastEncoder // reads the numbers (arrayNumber), into e.nums
}

// fill makes at least n bytes available after pos, unless the file ends.
func (r *pieceReader) fill(n int) error {
	if len(r.buf)-r.pos >= n || r.eof {
		return nil
	}
	rest := copy(r.buf[:cap(r.buf)], r.buf[r.pos:])
	r.buf, r.pos = r.buf[:rest], 0
	for len(r.buf) < n && !r.eof {
		k, err := r.f.Read(r.buf[len(r.buf):streamPiece])
		r.buf = r.buf[:len(r.buf)+k]
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// next skips blanks and returns the next byte, not taken; io.EOF at the
// end of the file.
func (r *pieceReader) next() (byte, error) {
	for {
		if err := r.fill(1); err != nil {
			return 0, err
		}
		if r.pos >= len(r.buf) {
			return 0, io.EOF
		}
		switch c := r.buf[r.pos]; c {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return c, nil
		}
	}
}

// number takes one number of the array, as fastEncoder.array would: the
// window holds the whole of it (maxNumberLen bytes at most) and the byte
// after it.
func (r *pieceReader) number(kind ndarray.Number, lo, hi int64) error {
	if _, err := r.next(); err != nil {
		return err
	}
	if err := r.fill(maxNumberLen + 1); err != nil {
		return err
	}
	if len(r.e.nums)+8 > cap(r.e.nums) {
		return errNotNumeric // more numbers than the first pass counted: the file changed
	}
	r.e.b = r.buf
	end, ok := r.e.arrayNumber(r.pos, kind, lo, hi)
	if !ok {
		return errNotNumeric
	}
	r.pos = end
	return nil
}
